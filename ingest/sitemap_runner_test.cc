#include "ingest/sitemap_runner.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/durable_file.h"
#include "ingest/gateway_metrics.h"
#include "ingest/sitemap_store.pb.h"
#include "ingest/test_http_server.h"

namespace recrawl {
namespace ingest {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

class SitemapRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    site_.server().Get("/sitemap.xml", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          absl::StrCat(R"(<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">)",
                       "<url><loc>", site_.Url("/p"),
                       "</loc><lastmod>2026-01-01T00:01:00Z</lastmod></url></urlset>"),
          "application/xml");
    });
    ASSERT_GT(site_.Start(), 0);
    state_file_ = absl::StrCat(::testing::TempDir(), "/sitemaps_",
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(state_file_);
  }

  SitemapRunnerOptions Options() const {
    SitemapRunnerOptions o;
    o.fetch.policy = AddressPolicy::AllowingLoopback();
    o.retry_interval = absl::Milliseconds(20);
    o.state_file = state_file_;
    // The lastmod served (one minute on) is within the clock skew taken.
    o.now = [] { return kT0; };
    return o;
  }

  TestHttpServer site_;
  std::string state_file_;
  GatewayMetrics metrics_;
};

TEST_F(SitemapRunnerTest, AFailedDeliveryIsRetriedNotDropped) {
  absl::Mutex mu;
  int calls = 0;
  std::vector<Signal> delivered;
  SitemapRunner runner(
      [&](std::vector<Signal> signals) -> absl::StatusOr<DeliveryReport> {
        absl::MutexLock lock(&mu);
        if (++calls == 1) return absl::UnavailableError("coordinator down");
        delivered.insert(delivered.end(), signals.begin(), signals.end());
        DeliveryReport report;
        report.accepted = signals.size();
        return report;
      },
      &metrics_, Options());
  runner.Start();
  ASSERT_TRUE(runner.Register(site_.Url("/sitemap.xml")).ok());
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(
                                +[](std::vector<Signal>* d) { return !d->empty(); }, &delivered),
                            absl::Seconds(30)));
  }
  runner.Stop();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].url(), site_.Url("/p"));
  EXPECT_EQ(delivered[0].source(), SIGNAL_SOURCE_SITEMAP);
  EXPECT_DOUBLE_EQ(delivered[0].time(), static_cast<double>(absl::ToUnixSeconds(kT0)));
  EXPECT_EQ(runner.Undelivered(), 0u);
  EXPECT_NE(
      metrics_.Text().find(R"(recrawl_ingest_feed_fetches_total{result="ok",source="sitemap"} 1)"),
      std::string::npos)
      << metrics_.Text();
}

TEST_F(SitemapRunnerTest, RegistrationsPersist) {
  auto deliver = [](std::vector<Signal>) -> absl::StatusOr<DeliveryReport> {
    return DeliveryReport();
  };
  {
    SitemapRunner runner(deliver, &metrics_, Options());
    ASSERT_TRUE(runner.Register(site_.Url("/sitemap.xml")).ok());
    ASSERT_TRUE(runner.Register(site_.Url("/other.xml")).ok());
    ASSERT_TRUE(runner.Unregister(site_.Url("/other.xml")).ok());
    EXPECT_EQ(runner.Unregister(site_.Url("/other.xml")).code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(runner.Register("ftp://x/").code(), absl::StatusCode::kInvalidArgument);
  }
  SitemapRunner restarted(deliver, &metrics_, Options());
  ASSERT_TRUE(restarted.Load().ok());
  const std::vector<feeds::SitemapFileInfo> files = restarted.Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].url, site_.Url("/sitemap.xml"));

  std::ofstream(state_file_) << "not a sitemap store";
  SitemapRunner broken(deliver, &metrics_, Options());
  const absl::Status loaded = broken.Load();
  EXPECT_EQ(loaded.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(loaded.message().find(state_file_), std::string::npos) << loaded;
}

// Collects delivered signals; fails the first `failures` deliveries.
class Collector {
 public:
  explicit Collector(int failures = 0) : failures_(failures) {}

  SitemapRunner::DeliverFn Fn() {
    return [this](std::vector<Signal> signals) -> absl::StatusOr<DeliveryReport> {
      absl::MutexLock lock(&mu_);
      ++calls_;
      if (failures_ != 0) {
        if (failures_ > 0) --failures_;
        return absl::UnavailableError("coordinator down");
      }
      std::vector<std::string>& batch = batches_.emplace_back();
      for (const Signal& s : signals) batch.push_back(s.url());
      DeliveryReport report;
      report.accepted = signals.size();
      return report;
    };
  }
  // Waits until `n` calls were made (each delivered or refused).
  bool AwaitCalls(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(30));
  }
  std::vector<std::vector<std::string>> batches() const {
    absl::MutexLock lock(&mu_);
    return batches_;
  }

 private:
  mutable absl::Mutex mu_;
  int failures_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::vector<std::string>> batches_ ABSL_GUARDED_BY(mu_);
};

TEST_F(SitemapRunnerTest, PollStatePersistsOnceSignalsAreAcknowledged) {
  const std::string sitemap = site_.Url("/state.xml");
  const std::string p = site_.Url("/p");
  const std::string q = site_.Url("/q");
  absl::Mutex mu;
  std::string p_lastmod = "2026-01-01T00:01:00Z";
  site_.server().Get("/state.xml", [&](const httplib::Request&, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    res.set_content(absl::StrCat(R"(<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">)",
                                 "<url><loc>", p, "</loc><lastmod>", p_lastmod, "</lastmod></url>",
                                 "<url><loc>", q,
                                 "</loc><lastmod>2026-01-01T00:02:00Z</lastmod></url></urlset>"),
                    "application/xml");
  });
  {
    Collector first;
    SitemapRunner runner(first.Fn(), &metrics_, Options());
    runner.Start();
    ASSERT_TRUE(runner.Register(sitemap).ok());
    ASSERT_TRUE(first.AwaitCalls(1));
    runner.Stop();
    EXPECT_THAT(first.batches(), ElementsAre(UnorderedElementsAre(p, q)));
  }
  {
    absl::MutexLock lock(&mu);
    p_lastmod = "2026-01-01T00:03:00Z";  // moved while the gateway was down
  }
  {
    // Its delivery never acknowledged: the state is not saved.
    Collector refusing(-1);
    SitemapRunner runner(refusing.Fn(), &metrics_, Options());
    ASSERT_TRUE(runner.Load().ok());
    runner.Start();
    ASSERT_TRUE(refusing.AwaitCalls(1));
    runner.Stop();
  }
  Collector restarted;
  SitemapRunner runner(restarted.Fn(), &metrics_, Options());
  ASSERT_TRUE(runner.Load().ok());
  ASSERT_EQ(runner.Files().size(), 1u);
  EXPECT_EQ(runner.Files()[0].tracked_urls, 2u);
  runner.Start();
  ASSERT_TRUE(restarted.AwaitCalls(1));
  runner.Stop();
  EXPECT_THAT(restarted.batches(), ElementsAre(ElementsAre(p)));
}

TEST_F(SitemapRunnerTest, LoadsRegistrationsWithoutStateAndRefusesBrokenState) {
  auto deliver = [](std::vector<Signal>) -> absl::StatusOr<DeliveryReport> {
    return DeliveryReport();
  };
  SitemapStoreFile file;
  file.add_urls(site_.Url("/sitemap.xml"));
  ASSERT_TRUE(ReplaceFileDurably(state_file_, file.SerializeAsString()).ok());
  {
    SitemapRunner runner(deliver, &metrics_, Options());
    ASSERT_TRUE(runner.Load().ok());
    ASSERT_EQ(runner.Files().size(), 1u);
    EXPECT_EQ(runner.Files()[0].registered_at, kT0);  // registered when loaded
  }
  file.Clear();
  SitemapFileRecord* record = file.add_files();
  record->set_url(site_.Url("/sitemap.xml"));
  record->add_url_ids(1);
  ASSERT_TRUE(ReplaceFileDurably(state_file_, file.SerializeAsString()).ok());
  SitemapRunner runner(deliver, &metrics_, Options());
  const absl::Status loaded = runner.Load();
  EXPECT_EQ(loaded.code(), absl::StatusCode::kDataLoss) << loaded;
  EXPECT_NE(loaded.message().find("lastmods"), std::string::npos) << loaded;
}

TEST_F(SitemapRunnerTest, AnUnsavableRegistrationIsUndone) {
  SitemapRunnerOptions o = Options();
  o.state_file = absl::StrCat(::testing::TempDir(), "/no/such/dir/sitemaps.pb");
  SitemapRunner runner(
      [](std::vector<Signal>) -> absl::StatusOr<DeliveryReport> { return DeliveryReport(); },
      &metrics_, o);
  EXPECT_EQ(runner.Register(site_.Url("/sitemap.xml")).code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(runner.Files().empty());
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
