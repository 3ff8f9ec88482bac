// The bandwidth R end to end: two fetchers lease as fast as they may while
// the operator raises R and then lowers it. What is asserted is the slot
// times the coordinator hands out (cluster time), not how long anything
// took: no window of one second holds more than R·1 + 1 of them (R the
// bandwidth in force over the whole window, or the larger one across a
// change), and within one second of a change the slots follow the new R.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace recrawl {
namespace tests {
namespace {

using cluster::Role;

constexpr double kStartRate = 20;
constexpr double kHighRate = 60;
constexpr double kLowRate = 10;
// Cluster seconds each rate is kept.
constexpr double kPhase = 3.0;

struct Slot {
  double time;
  int fetcher;
};

class BandwidthTest : public ClusterTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    deploy::LocalClusterOptions o = TestClusterOptions(2);
    o.bandwidth = kStartRate;
    o.mode = GetParam();
    StartCluster(std::move(o));
    UpsertHosts(0, 500, cluster_->Now() - 3600);
  }

  // Leases (as far ahead as the coordinator allows) and reports at once,
  // so the URLs come back.
  void FetcherLoop(int k) {
    client::FetcherOptions f;
    f.holder = absl::StrCat("fetcher-", k);
    f.lookahead = 1.0;
    f.max_wait = absl::Seconds(5);
    client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
    while (!stop_) {
      absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(10);
      ASSERT_TRUE(leased.ok()) << leased.status();
      std::vector<CrawlReport> reports;
      for (const CoordinatorLease& l : *leased) {
        CrawlReport r;
        r.set_lease_id(l.lease_id());
        r.set_fetch_time(cluster_->Now());
        r.set_outcome(CRAWL_OUTCOME_UNCHANGED);
        reports.push_back(r);
        absl::MutexLock lock(&mu_);
        slots_.push_back(Slot{l.slot_time(), k});
      }
      absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
      ASSERT_TRUE(reported.ok()) << reported.status();
      EXPECT_EQ(reported->result().rejected_size(), 0);
    }
  }

  // Sets R; returns the cluster time just before the call (the change
  // takes effect at or after it).
  double SetRate(double rate) {
    const double before = cluster_->Now();
    absl::StatusOr<BandwidthState> state = Admin().SetBandwidth(rate, COORDINATOR_MODE_UNSPECIFIED);
    EXPECT_TRUE(state.ok()) << state.status();
    if (state.ok()) {
      EXPECT_EQ(state->bandwidth(), rate);
    }
    return before;
  }

  void SleepUntil(double cluster_time) {
    while (cluster_->Now() < cluster_time) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  absl::Mutex mu_;
  std::vector<Slot> slots_;
  std::atomic<bool> stop_{false};
};

TEST_P(BandwidthTest, LeaseRateFollowsRAndNeverExceedsIt) {
  std::vector<std::thread> fetchers;
  for (int k = 0; k < 2; ++k) {
    fetchers.emplace_back([this, k] { FetcherLoop(k); });
  }
  const double begin = cluster_->Now();
  SleepUntil(begin + kPhase);
  const double up_asked = SetRate(kHighRate);
  const double up_done = cluster_->Now();
  SleepUntil(up_done + kPhase);
  const double down_asked = SetRate(kLowRate);
  const double down_done = cluster_->Now();
  SleepUntil(down_done + kPhase);
  stop_ = true;
  for (std::thread& t : fetchers) t.join();

  absl::MutexLock lock(&mu_);
  std::sort(slots_.begin(), slots_.end(),
            [](const Slot& a, const Slot& b) { return a.time < b.time; });
  ASSERT_GT(slots_.size(), 40u);
  int by_fetcher[2] = {0, 0};
  for (const Slot& s : slots_) ++by_fetcher[s.fetcher];
  EXPECT_GT(by_fetcher[0], 0);
  EXPECT_GT(by_fetcher[1], 0);

  // Never above R: count the slots of [t, t + 1] for every slot time t.
  auto in_window = [&](size_t i) {
    return std::upper_bound(slots_.begin(), slots_.end(), slots_[i].time + 1.0,
                            [](double t, const Slot& s) { return t < s.time; }) -
           (slots_.begin() + i);
  };
  for (size_t i = 0; i < slots_.size(); ++i) {
    const double t = slots_[i].time;
    double rate = kHighRate;  // the largest R of the run bounds every window
    if (t + 1.0 <= up_asked) rate = kStartRate;
    // Within one second of lowering R, the slots leased ahead at the
    // higher rate are gone.
    if (t >= down_done + 1.0) rate = kLowRate;
    EXPECT_LE(in_window(i), static_cast<ptrdiff_t>(rate + 1))
        << "window [" << t << ", " << t + 1 << "] under R=" << rate << " (raised at " << up_asked
        << ", lowered at " << down_asked << ")";
  }

  // Follows a raise within one second: from then on, slots come at about
  // the new rate, well above the old one (the fetchers keep up with 60/s
  // on any machine this runs on; they need ~12 calls per second).
  const double from = up_done + 1.0;
  const double to = down_asked;
  const auto count = std::count_if(slots_.begin(), slots_.end(),
                                   [&](const Slot& s) { return s.time >= from && s.time < to; });
  EXPECT_GE(count / (to - from), (kStartRate + kHighRate) / 2)
      << count << " slots in [" << from << ", " << to << ")";
  // And after lowering it, they still come, at the lower rate.
  const auto late = std::count_if(slots_.begin(), slots_.end(),
                                  [&](const Slot& s) { return s.time >= down_done + 1.0; });
  EXPECT_GT(late, 0);
  std::printf(
      "%zu slots (%d + %d by the two fetchers), %.1f/s after the "
      "raise to %g\n",
      slots_.size(), by_fetcher[0], by_fetcher[1], count / (to - from), kHighRate);
}

INSTANTIATE_TEST_SUITE_P(Modes, BandwidthTest, ::testing::Values("merge", "adaptive"));

}  // namespace
}  // namespace tests
}  // namespace recrawl
