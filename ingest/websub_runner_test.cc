#include "ingest/websub_runner.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "ingest/gateway_metrics.h"
#include "ingest/test_http_server.h"

namespace recrawl {
namespace ingest {
namespace {

absl::StatusOr<DeliveryReport> Nothing(std::vector<Signal>) { return DeliveryReport(); }

class WebSubRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.server().Post("/hub", [this](const httplib::Request& req, httplib::Response& res) {
      absl::MutexLock lock(&mu_);
      secrets_.push_back(req.get_param_value("hub.secret"));
      res.status = 202;
    });
    ASSERT_GT(hub_.Start(), 0);
    state_file_ = absl::StrCat(::testing::TempDir(), "/websub_",
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(state_file_);
  }
  WebSubRunnerOptions Options() const {
    WebSubRunnerOptions o;
    o.websub.callback_base = "https://gateway.example/websub";
    o.fetch.policy = AddressPolicy::AllowingLoopback();
    o.state_file = state_file_;
    return o;
  }
  // Waits for the hub's n-th request; its secret ("" if none came).
  std::string Secret(size_t n) {
    for (int i = 0; i < 3000; ++i) {
      {
        absl::MutexLock lock(&mu_);
        if (secrets_.size() >= n) return secrets_[n - 1];
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return "";
  }

  absl::Mutex mu_;
  std::vector<std::string> secrets_;
  std::string state_file_;
  GatewayMetrics metrics_;
  TestHttpServer hub_;  // last: it stops before what its handler uses goes
};

TEST_F(WebSubRunnerTest, SubscriptionsAndTheirSecretsPersist) {
  const std::string topic = "https://example.com/feed";
  std::string first;
  {
    WebSubRunner runner(Nothing, &metrics_, Options());
    runner.Start();
    absl::StatusOr<std::string> id = runner.Subscribe(hub_.Url("/hub"), topic);
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(id->size(), 16u);
    first = Secret(1);
    EXPECT_EQ(first.size(), 64u);
    for (int i = 0;
         i < 3000 && metrics_.Text().find(R"(result="ok",source="websub"} 1)") == std::string::npos;
         ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_NE(
        metrics_.Text().find(R"(recrawl_ingest_feed_fetches_total{result="ok",source="websub"} 1)"),
        std::string::npos)
        << metrics_.Text();
    EXPECT_EQ(runner.Subscribe("not a url", topic).status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(runner.Unsubscribe(hub_.Url("/hub"), "https://example.com/other").code(),
              absl::StatusCode::kNotFound);
  }
  WebSubRunner restarted(Nothing, &metrics_, Options());
  ASSERT_TRUE(restarted.Load().ok());
  ASSERT_EQ(restarted.Subscriptions().size(), 1u);
  EXPECT_EQ(restarted.Subscriptions()[0].topic, topic);
  restarted.Start();
  // Subscribed again with the saved secret.
  EXPECT_EQ(Secret(2), first);
  restarted.Stop();

  ASSERT_TRUE(restarted.Unsubscribe(hub_.Url("/hub"), topic).ok());
  WebSubRunner after(Nothing, &metrics_, Options());
  ASSERT_TRUE(after.Load().ok());
  EXPECT_TRUE(after.Subscriptions().empty());

  std::ofstream(state_file_) << "garbage";
  WebSubRunner broken(Nothing, &metrics_, Options());
  EXPECT_EQ(broken.Load().code(), absl::StatusCode::kDataLoss);
}

TEST_F(WebSubRunnerTest, NoCallbackBaseNoSubscription) {
  WebSubRunnerOptions o = Options();
  o.websub.callback_base.clear();
  WebSubRunner runner(Nothing, &metrics_, o);
  const absl::Status s = runner.Subscribe(hub_.Url("/hub"), "https://example.com/feed").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("--websub_callback_base"), std::string::npos) << s;
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
