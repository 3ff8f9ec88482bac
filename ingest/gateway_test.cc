#include "ingest/gateway.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "ingest/test_http_server.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kKey[] = "0123456789abcdef";
constexpr char kPingerToken[] = "pinger-token-0123456789";
constexpr char kOperatorToken[] = "operator-token-0123456789";

// Records what it is given; acknowledges every signal.
class RecordingSink : public SignalSink {
 public:
  absl::StatusOr<DeliveryReport> Deliver(std::vector<Signal> signals) override {
    absl::MutexLock lock(&mu_);
    DeliveryReport report;
    report.accepted = signals.size();
    for (Signal& s : signals) signals_.push_back(std::move(s));
    return report;
  }
  std::vector<Signal> signals() {
    absl::MutexLock lock(&mu_);
    return signals_;
  }
  // Waits until `n` signals arrived (the key checks run on their threads).
  bool WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return signals_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30));
  }

 private:
  absl::Mutex mu_;
  std::vector<Signal> signals_ ABSL_GUARDED_BY(mu_);
};

class GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    site_.server().Get("/" + std::string(kKey) + ".txt",
                       [](const httplib::Request&, httplib::Response& res) {
                         res.set_content(kKey, "text/plain");
                       });
    site_.server().Get("/wrong.txt", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("not-the-key", "text/plain");
    });
    ASSERT_GT(site_.Start(), 0);
    tokens_ = *cluster::TokenTable::Parse(
        absl::StrCat("pinger ", kPingerToken, "\noperator ", kOperatorToken, "\n"));
    GatewayOptions options;
    options.fetch.policy = AddressPolicy::AllowingLoopback();
    // The tests poll until key checks end; no 429 on a slow machine.
    options.rate.rate = 1000;
    options.rate.burst = 100000;
    gateway_ = std::make_unique<Gateway>(&sink_, &tokens_, &metrics_, options);
  }

  // The site's URLs are on 127.0.0.1:<port>; the key file at its default
  // place would be https://127.0.0.1/..., so requests name it with
  // keyLocation.
  std::string Url(const std::string& path) { return site_.Url(path); }
  std::string Body(const std::vector<std::string>& paths, const std::string& key = kKey,
                   const std::string& location_path = "") {
    std::string body =
        absl::StrCat(R"({"host":"127.0.0.1","key":")", key, R"(","keyLocation":")",
                     Url(location_path.empty() ? absl::StrCat("/", key, ".txt") : location_path),
                     R"(","urlList":[)");
    for (size_t i = 0; i < paths.size(); ++i) {
      absl::StrAppend(&body, i > 0 ? "," : "", "\"", Url(paths[i]), "\"");
    }
    return body + "]}";
  }

  TestHttpServer site_;
  RecordingSink sink_;
  cluster::TokenTable tokens_;
  GatewayMetrics metrics_;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(GatewayTest, UnknownKeyIsCheckedThenUrlsFlow) {
  HttpAnswer a = gateway_->IndexNowPost(Body({"/a", "/b", "/a"}));
  EXPECT_EQ(a.status, 202) << a.body;
  // The held URLs are delivered once the key file proves the key.
  ASSERT_TRUE(sink_.WaitFor(2));
  a = gateway_->IndexNowPost(Body({"/c"}));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_NE(a.body.find("\"accepted\":1"), std::string::npos) << a.body;
  const std::vector<Signal> signals = sink_.signals();
  ASSERT_EQ(signals.size(), 3u);
  EXPECT_EQ(signals[0].url(), Url("/a"));
  EXPECT_EQ(signals[1].url(), Url("/b"));
  EXPECT_EQ(signals[2].url(), Url("/c"));
  for (const Signal& s : signals) EXPECT_EQ(s.source(), SIGNAL_SOURCE_INDEXNOW);
  EXPECT_NE(metrics_.Text().find(R"(recrawl_ingest_requests_total{code="OK",source="indexnow"} 1)"),
            std::string::npos)
      << metrics_.Text();
}

TEST_F(GatewayTest, WrongKeyFileIs403AndDropsTheUrls) {
  HttpAnswer a = gateway_->IndexNowPost(Body({"/a"}, kKey, "/wrong.txt"));
  EXPECT_EQ(a.status, 202) << a.body;
  // Until the check ends the answer is 202; then 403.
  for (int i = 0; i < 3000 && a.status == 202; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    a = gateway_->IndexNowPost(Body({"/a"}, kKey, "/wrong.txt"));
  }
  EXPECT_EQ(a.status, 403) << a.body;
  EXPECT_TRUE(sink_.signals().empty());
  EXPECT_EQ(gateway_->keys().held_urls(), 0u);
}

TEST_F(GatewayTest, BadRequestsChangeNothing) {
  EXPECT_EQ(gateway_->IndexNowPost("{oops").status, 400);
  EXPECT_EQ(gateway_->IndexNowPost(Body({"/a"}, "bad_key!")).status, 422);
  EXPECT_EQ(gateway_->IndexNowGet("https://elsewhere.com/x", kKey, Url("/k.txt")).status, 422);
  EXPECT_EQ(gateway_->IndexNowGet("", kKey, "").status, 400);
  EXPECT_TRUE(sink_.signals().empty());
  EXPECT_EQ(gateway_->keys().pending(), 0u);
}

TEST_F(GatewayTest, RegisteredKeyNeedsNoCheck) {
  const std::string bearer = absl::StrCat("Bearer ", kOperatorToken);
  HttpAnswer a = gateway_->RegisterKey(bearer, R"({"host":"example.com","key":"abcdefgh"})");
  EXPECT_EQ(a.status, 200) << a.body;
  a = gateway_->IndexNowGet("https://example.com/p", "abcdefgh", "");
  EXPECT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(sink_.signals().size(), 1u);
  a = gateway_->ListKeys(bearer, "");
  EXPECT_EQ(a.body, R"({"keys":[{"host":"example.com","key":"abcdefgh"}]})");
  EXPECT_EQ(gateway_->RegisterKey(bearer, R"({"host":"example.com","key":"x"})").status, 400);
  EXPECT_EQ(gateway_->UnregisterKey(bearer, "example.com", "abcdefgh").status, 200);
  EXPECT_EQ(gateway_->UnregisterKey(bearer, "example.com", "abcdefgh").status, 404);
}

TEST(GatewayKeysTest, KeyNotSavedIs500AndNotRegistered) {
  RecordingSink sink;
  GatewayMetrics metrics;
  GatewayOptions options;
  options.key_check_threads = 1;
  options.key_state_file = ::testing::TempDir() + "/no/such/dir/keys.pb";
  Gateway gateway(&sink, nullptr, &metrics, options);
  const HttpAnswer a = gateway.RegisterKey("", R"({"host":"example.com","key":"abcdefgh"})");
  EXPECT_EQ(a.status, 500);
  EXPECT_NE(a.body.find("not saved"), std::string::npos) << a.body;
  EXPECT_TRUE(gateway.keys().Registered().empty());
  EXPECT_EQ(gateway.IndexNowGet("https://example.com/p", "abcdefgh", "").status, 202);
}

TEST(GatewayKeysTest, KeysSavedBeforeTheAnswerComeBack) {
  RecordingSink sink;
  GatewayMetrics metrics;
  GatewayOptions options;
  options.key_check_threads = 1;
  options.key_state_file = ::testing::TempDir() + "/gateway_keys.pb";
  {
    Gateway gateway(&sink, nullptr, &metrics, options);
    ASSERT_TRUE(gateway.LoadKeys().ok());
    EXPECT_EQ(gateway.RegisterKey("", R"({"host":"a.com","key":"abcdefgh"})").status, 200);
    EXPECT_EQ(gateway.RegisterKey("", R"({"host":"b.com","key":"abcdefgh"})").status, 200);
    EXPECT_EQ(gateway.UnregisterKey("", "a.com", "abcdefgh").status, 200);
  }
  Gateway restarted(&sink, nullptr, &metrics, options);
  ASSERT_TRUE(restarted.LoadKeys().ok());
  EXPECT_EQ(restarted.ListKeys("", "").body, R"({"keys":[{"host":"b.com","key":"abcdefgh"}]})");
  EXPECT_EQ(restarted.IndexNowGet("https://b.com/p", "abcdefgh", "").status, 200);
}

TEST_F(GatewayTest, TokensGuardTheWebhookAndAdmin) {
  const std::string body = R"({"urls":["https://example.com/x","https://example.com/x"]})";
  EXPECT_EQ(gateway_->CdnPurge("", body).status, 401);
  EXPECT_EQ(gateway_->CdnPurge("Bearer nope-nope-nope-nope", body).status, 401);
  EXPECT_EQ(gateway_->CdnPurge(absl::StrCat("Bearer ", kOperatorToken), body).status, 403);
  EXPECT_EQ(gateway_->ListKeys(absl::StrCat("Bearer ", kPingerToken), "").status, 403);
  EXPECT_TRUE(sink_.signals().empty());
  const HttpAnswer a = gateway_->CdnPurge(absl::StrCat("Bearer ", kPingerToken), body);
  EXPECT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(sink_.signals().size(), 1u);
  EXPECT_EQ(sink_.signals()[0].source(), SIGNAL_SOURCE_CDN);
  EXPECT_EQ(gateway_->CdnPurge(absl::StrCat("Bearer ", kPingerToken), R"({"urls":[]})").status,
            400);
}

// The site holds every answer for 30 s and fetches may take 60: Stop
// returns before any is answered only because it cancels them.
TEST_F(GatewayTest, StopCancelsTheFetchesInFlight) {
  absl::Mutex mu;
  int held = 0;
  int answered = 0;
  absl::Notification release;
  TestHttpServer slow;  // after what its handlers use: it stops first
  auto hold = [&](const httplib::Request&, httplib::Response& res) {
    {
      absl::MutexLock lock(&mu);
      ++held;
    }
    release.WaitForNotificationWithTimeout(absl::Seconds(30));
    absl::MutexLock lock(&mu);
    ++answered;
    res.status = 500;
  };
  slow.server().Get(R"(/slow.*)", hold);
  slow.server().Post(R"(/slow.*)", hold);
  ASSERT_GT(slow.Start(), 0);
  GatewayOptions options;
  options.fetch.policy = AddressPolicy::AllowingLoopback();
  options.fetch.total_timeout = absl::Seconds(60);
  options.websub_callback_base = "https://gateway.example/websub";
  GatewayMetrics metrics;
  Gateway gateway(&sink_, nullptr, &metrics, options);

  // A key check, a sitemap poll and a hub request, all held.
  const HttpAnswer indexnow = gateway.IndexNowPost(
      absl::StrCat(R"({"host":"127.0.0.1","key":")", kKey, R"(","keyLocation":")",
                   slow.Url(absl::StrCat("/slow/", kKey, ".txt")), R"(","urlList":[")",
                   slow.Url("/slow/page"), R"("]})"));
  EXPECT_EQ(indexnow.status, 202) << indexnow.body;
  EXPECT_EQ(
      gateway
          .RegisterSitemap("", absl::StrCat(R"({"url":")", slow.Url("/slow-sitemap.xml"), R"("})"))
          .status,
      200);
  EXPECT_EQ(gateway
                .SubscribeWebSub("", absl::StrCat(R"({"hub":")", slow.Url("/slow-hub"),
                                                  R"(","topic":"https://e.com/feed"})"))
                .status,
            200);
  {
    absl::MutexLock lock(&mu);
    auto all_held = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return held >= 3; };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&all_held), absl::Seconds(30)));
  }
  gateway.Stop();
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(answered, 0);
  }
  release.Notify();
  EXPECT_TRUE(sink_.signals().empty());
  // A cancelled fetch is not a failure of its file.
  EXPECT_EQ(metrics.Text().find(R"(source="sitemap")"), std::string::npos) << metrics.Text();
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
