// Start-up: a shard reopened on its store has everything it acknowledged,
// and settings persist.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::HasSubstr;
using ShardRestartTest = testing::ShardTest;

// The store's compactions, deferred while the shard starts, are on once it
// has started.
TEST_F(ShardRestartTest, CompactionsAreOnOnceStarted) {
  Upsert({Spec("https://a.com/1"), Spec("https://b.com/2")});
  Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_TRUE(store_->compactions_enabled());
  EXPECT_EQ(shard_->startup().urls, 2);
}

// Start-up with scanning threads (store/parallel_scan.h) builds the same
// shard as with none: every URL's state, and the picks' values (pages come
// in another order, so equal values may be picked in another order).
TEST_F(ShardRestartTest, ScanningThreadsLoadTheSameShard) {
  constexpr int kUrls = 3000;  // several chunks a thread
  std::vector<UrlSpec> specs;
  for (int i = 0; i < kUrls; ++i) {
    specs.push_back(Spec(absl::StrCat("https://h", i % 97, ".com/p", i), 1.0 + i % 13));
  }
  Upsert(specs);
  now_ = 2000;
  std::vector<Signal> signals;
  std::vector<CrawlReport> reports;
  for (int i = 0; i < kUrls; i += 3) {
    const std::string url = absl::StrCat("https://h", i % 97, ".com/p", i);
    signals.push_back(MakeSignal(url, 1500 + i % 7));
    if (i % 2 == 0) {
      reports.push_back(
          ByUrl(url, 1900, i % 4 == 0 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED));
    }
  }
  Signals(signals);
  Report(reports);
  Lease(20, 500);

  std::vector<std::string> states[2];
  std::vector<double> picks[2];
  for (const int threads : {0, 2}) {
    options_.startup_threads = threads;
    Open();
    EXPECT_EQ(shard_->startup().urls, kUrls);
    EXPECT_EQ(shard_->startup().leases, 20);
    EXPECT_EQ(shard_->startup().malformed, 0);
    for (int i = 0; i < kUrls; ++i) {
      states[threads / 2].push_back(
          State(absl::StrCat("https://h", i % 97, ".com/p", i)).SerializeAsString());
    }
    const PeekTopResponse peek = Peek(50);
    for (const Candidate& c : peek.candidates()) {
      picks[threads / 2].push_back(c.value());
    }
  }
  EXPECT_EQ(states[0], states[1]);
  EXPECT_EQ(picks[0], picks[1]);
}

TEST_F(ShardRestartTest, EverythingAcknowledgedSurvivesARestart) {
  options_.failure_backoff = 1000;
  Recreate();
  Upsert({Spec("https://a.com/", 3.0, 0.01, 0.5, 0.001), Spec("https://b.com/", 2.0),
          Spec("https://c.com/", 1.0), Spec("https://d.com/", 0.5)});
  SetHostPolitenessRequest politeness;
  politeness.add_hosts()->set_host("d.com");
  politeness.mutable_hosts(0)->set_min_delay(42);
  ASSERT_TRUE(shard_->SetHostPoliteness(politeness, now_).ok());
  now_ = 2000;
  // a: leased; b: crawled twice; c: two signals; d: failed, held back.
  const LeaseResponse lease = Lease(1, 500, "fetcher-7");
  ASSERT_EQ(lease.leases(0).url(), "https://a.com/");
  Signals({MakeSignal("https://c.com/", 1500), MakeSignal("https://c.com/", 1600)});
  Report({ByUrl("https://b.com/", 1500, CRAWL_OUTCOME_CHANGED),
          ByUrl("https://b.com/", 1900, CRAWL_OUTCOME_UNCHANGED),
          ByUrl("https://d.com/", 1990, CRAWL_OUTCOME_FAILED)});
  const UrlState b_before = State("https://b.com/");
  const UrlState a_before = State("https://a.com/");

  Open();  // a restart
  EXPECT_EQ(shard_->startup().urls, 4);
  EXPECT_EQ(shard_->startup().leases, 1);
  EXPECT_EQ(shard_->startup().holds, 1);
  EXPECT_EQ(shard_->startup().malformed, 0);

  const UrlState a = State("https://a.com/");
  ASSERT_TRUE(a.has_lease());
  EXPECT_EQ(a.lease().lease_id(), lease.leases(0).lease_id());
  EXPECT_EQ(a.lease().holder(), "fetcher-7");
  EXPECT_EQ(a.lease().deadline(), 2500);
  EXPECT_EQ(a.importance(), 3.0);
  EXPECT_EQ(a.crawl_value(), a_before.crawl_value());

  const UrlState b = State("https://b.com/");
  EXPECT_EQ(b.last_crawl_time(), 1900);
  EXPECT_EQ(b.observed_crawls(), 2u);
  EXPECT_EQ(b.recent_outcomes_size(), 2);
  EXPECT_DOUBLE_EQ(b.estimate().change_rate(), b_before.estimate().change_rate());
  EXPECT_EQ(b.crawl_value(), b_before.crawl_value());

  EXPECT_EQ(State("https://c.com/").signals_since_crawl(), 2u);
  const UrlState d = State("https://d.com/");
  EXPECT_EQ(d.consecutive_failures(), 1u);
  EXPECT_EQ(d.retry_after(), 2990);

  // The leased and the held URL are still not offered; the host delay of
  // d.com is back (checked through its effect after d's crawl below).
  EXPECT_THAT(PeekUrls(10), ::testing::UnorderedElementsAre("https://b.com/", "https://c.com/"));
  // The lease can be reported after the restart.
  now_ = 2001;
  const ReportCrawlsResponse r =
      Report({ByLease(lease.leases(0).lease_id(), 2001, CRAWL_OUTCOME_CHANGED)});
  EXPECT_EQ(r.result().applied(), 1u);
  // Lease ids are never reused, across restarts either.
  const LeaseResponse next = Lease(3);
  for (const LeasedUrl& l : next.leases()) {
    EXPECT_GT(l.lease_id(), lease.leases(0).lease_id());
  }
  now_ = 2002;
  Report({ByUrl("https://d.com/", 2002, CRAWL_OUTCOME_CHANGED)});
  EXPECT_EQ(State("https://d.com/").host_allowed_from(), 2002 + 42);
}

TEST_F(ShardRestartTest, ExpiredLeaseAfterRestartIsStillReportable) {
  Add("https://a.com/");
  const uint64_t id = Lease(1, 100).leases(0).lease_id();
  now_ += 500;
  Open();
  EXPECT_EQ(shard_->startup().leases, 0);  // expired during the downtime
  EXPECT_FALSE(State("https://a.com/").has_lease());
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://a.com/"}));
  EXPECT_EQ(Report({ByLease(id, now_, CRAWL_OUTCOME_UNCHANGED)}).result().applied(), 1u);
}

TEST_F(ShardRestartTest, PolicyAndTDelayPersist) {
  SetPolicyRequest req;
  req.mutable_policy()->set_kind(POLICY_KIND_APPROX);
  req.mutable_policy()->set_approx_terms(2);
  req.set_t_delay(15);
  absl::StatusOr<SetPolicyResponse> r = shard_->SetPolicy(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->policy().kind(), POLICY_KIND_APPROX);
  EXPECT_EQ(r->t_delay(), 15);
  Open();
  ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.policy().kind(), POLICY_KIND_APPROX);
  EXPECT_EQ(stats.policy().approx_terms(), 2);
  EXPECT_EQ(stats.t_delay(), 15);
  // Options given explicitly win over the stored settings.
  options_.override_policy = true;
  options_.policy = policy::CrawlPolicy::Greedy();
  Open();
  stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.policy().kind(), POLICY_KIND_GREEDY);
  EXPECT_EQ(stats.t_delay(), 15);
  options_.override_t_delay = true;
  options_.t_delay = 0;
  Open();
  EXPECT_EQ(shard_->GetStats(now_).t_delay(), 0);
}

TEST_F(ShardRestartTest, BadPolicyRequestsAreRejected) {
  SetPolicyRequest req;
  req.mutable_policy()->set_kind(POLICY_KIND_APPROX);
  EXPECT_THAT(std::string(shard_->SetPolicy(req, now_).status().message()),
              HasSubstr("policy.approx_terms"));
  req.mutable_policy()->set_kind(static_cast<PolicyKind>(77));
  EXPECT_THAT(std::string(shard_->SetPolicy(req, now_).status().message()),
              HasSubstr("policy.kind"));
  req.mutable_policy()->set_kind(POLICY_KIND_UNSPECIFIED);
  req.set_t_delay(-3);
  EXPECT_THAT(std::string(shard_->SetPolicy(req, now_).status().message()), HasSubstr("t_delay"));
  EXPECT_EQ(shard_->GetStats(now_).policy().kind(), POLICY_KIND_GREEDY_NCIS);
}

TEST_F(ShardRestartTest, StatsCountWhatHappened) {
  Upsert({Spec("https://a.com/"), Spec("https://b.com/")});
  now_ += 1;
  Signals({MakeSignal("https://a.com/", now_)});
  Lease(2);
  now_ += 1;
  Report({ByUrl("https://a.com/", now_, CRAWL_OUTCOME_CHANGED)});
  const ShardStats s = shard_->GetStats(now_);
  EXPECT_EQ(s.urls(), 2u);
  EXPECT_EQ(s.hosts(), 2u);
  EXPECT_EQ(s.leases_in_flight(), 1u);
  EXPECT_EQ(s.signals_total(), 1u);
  EXPECT_EQ(s.leases_total(), 2u);
  EXPECT_EQ(s.reports_total(), 1u);
  EXPECT_GT(s.signals_per_second(), 0.0);
  EXPECT_GT(s.picks_per_second(), 0.0);
  EXPECT_GT(s.reports_per_second(), 0.0);
  EXPECT_EQ(s.estimator().urls_learning(), 1u);
  EXPECT_EQ(s.estimator().mean_observed_crawls(), 1.0);
  EXPECT_EQ(s.time(), now_);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
