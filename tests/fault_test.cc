// Faults under load, end to end: a shard killed with SIGKILL while
// fetchers lease and report, a pinger streams signals and an operator
// upserts URLs, all through the client library; then restarted on its port
// (LocalCluster::RestartShard). And the coordinator killed the same way.
//
// The load keeps a ledger of what the servers acknowledged: a report,
// signal or upsert is acknowledged when its RPC returned OK and did not
// reject that item; a lease when Lease returned it. Afterwards every
// acknowledged item must be in the shards' state (GetUrlState), and every
// acknowledged lease either reported or still held with its id. The one
// ambiguity allowed is the other way round: an item whose answer was lost
// (the RPC failed) may or may not have been applied.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace recrawl {
namespace tests {
namespace {

using cluster::Role;

constexpr int kShards = 3;
constexpr int kCrawlHosts = 300;       // hosts 0..299: leased, reported
constexpr int kLeaseBatch = 10;        // URLs a fetcher leases at once
constexpr int kSignalHostBase = 1000;  // 1000..1199: blocked, signalled
constexpr int kSignalHosts = 200;
constexpr int kUpsertHostBase = 5000;  // upserted while the load runs

// What the servers acknowledged, and what they may have applied without
// saying so.
struct Ledger {
  absl::Mutex mu;
  // URL → fetch time of its last acknowledged report.
  std::map<std::string, double> crawled ABSL_GUARDED_BY(mu);
  // URL → fetch times of reports whose answer was lost or negative.
  std::map<std::string, std::vector<double>> maybe_crawled ABSL_GUARDED_BY(mu);
  // Acknowledged leases kept unreported on purpose: id → URL.
  std::map<uint64_t, std::string> held ABSL_GUARDED_BY(mu);
  // Signals sent per URL (those rejected are taken off at the end).
  std::map<std::string, int64_t> signals_sent ABSL_GUARDED_BY(mu);
  std::set<std::string> upserted ABSL_GUARDED_BY(mu);
  // (cluster time the Lease call that got it started, shard index) of every
  // lease. Not the time it came back: the call may wait for slot times, so
  // a lease a shard granted just before it was killed can arrive after.
  std::vector<std::pair<double, int>> lease_log ABSL_GUARDED_BY(mu);
  int64_t reports = 0 ABSL_GUARDED_BY(mu);
  std::vector<std::string> errors ABSL_GUARDED_BY(mu);
  client::PingStats ping ABSL_GUARDED_BY(mu);
  int64_t signals_rejected = 0 ABSL_GUARDED_BY(mu);
};

class FaultTest : public ClusterTest {
 protected:
  void SetUp() override {
    deploy::LocalClusterOptions o = TestClusterOptions(kShards);
    o.bandwidth = 100;
    // Held leases must outlive the test.
    o.shard_flags.push_back("--lease_duration=3600");
    StartCluster(std::move(o));
    start_ = cluster_->Now();
    UpsertHosts(0, kCrawlHosts, start_ - 3600);
    std::vector<UrlSpec> signalled;
    std::vector<HostPoliteness> blocked;
    for (int i = kSignalHostBase; i < kSignalHostBase + kSignalHosts; ++i) {
      signalled.push_back(HostSpec(i, start_ - 3600));
      HostPoliteness h;
      h.set_host(absl::StrCat("host", i, ".example"));
      h.set_blocked_until(start_ + 1e7);  // never leased: signals pile up
      blocked.push_back(h);
    }
    absl::StatusOr<UpsertUrlsResponse> up = Admin().UpsertUrls(signalled);
    ASSERT_TRUE(up.ok()) << up.status();
    ASSERT_EQ(up->result().applied(), static_cast<uint32_t>(kSignalHosts));
    absl::StatusOr<SetHostPolitenessResponse> set = Admin().SetHostPoliteness(blocked);
    ASSERT_TRUE(set.ok()) << set.status();
    ASSERT_EQ(set->result().applied(), static_cast<uint32_t>(kSignalHosts));
  }

  void TearDown() override {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

  void Error(const std::string& what) {
    absl::MutexLock lock(&ledger_.mu);
    ledger_.errors.push_back(absl::StrCat("t=", cluster_->Now() - start_, ": ", what));
  }

  // Leases up to 10 URLs at a time; keeps one in eight unreported, reports
  // the others at once.
  void FetcherLoop(int k) {
    client::FetcherOptions f;
    f.holder = absl::StrCat("fetcher-", k);
    f.lookahead = 0.5;
    f.max_wait = absl::Seconds(5);
    client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
    std::mt19937 rng(k);
    while (!stop_) {
      const double asked = cluster_->Now();
      absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(kLeaseBatch);
      if (!leased.ok()) {
        Error(absl::StrCat("Lease: ", leased.status().ToString()));
        continue;
      }
      std::vector<CrawlReport> reports;
      std::vector<std::string> urls;  // of `reports`
      {
        absl::MutexLock lock(&ledger_.mu);
        for (const CoordinatorLease& l : *leased) {
          ledger_.lease_log.emplace_back(asked, l.shard_index());
          if (rng() % 8 == 0) {
            ledger_.held[l.lease_id()] = l.url();
            continue;
          }
          CrawlReport r;
          r.set_lease_id(l.lease_id());
          r.set_fetch_time(cluster_->Now());
          r.set_outcome(rng() % 2 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
          reports.push_back(r);
          urls.push_back(l.url());
        }
      }
      if (reports.empty()) continue;
      absl::StatusOr<ReportCrawlsResponse> response = fetcher.Report(reports);
      absl::MutexLock lock(&ledger_.mu);
      std::set<uint32_t> rejected;
      if (!response.ok()) {
        ledger_.errors.push_back(absl::StrCat("Report: ", response.status().ToString()));
        for (uint32_t i = 0; i < reports.size(); ++i) rejected.insert(i);
      } else {
        for (const ItemStatus& r : response->result().rejected()) {
          rejected.insert(r.index());
          ledger_.errors.push_back(absl::StrCat("Report of ", urls[r.index()], ": ", r.message()));
        }
      }
      for (uint32_t i = 0; i < reports.size(); ++i) {
        if (rejected.count(i)) {
          ledger_.maybe_crawled[urls[i]].push_back(reports[i].fetch_time());
        } else {
          ledger_.crawled[urls[i]] = reports[i].fetch_time();
          ++ledger_.reports;
        }
      }
    }
  }

  // Signals to the blocked hosts, each with its own time, flushed every
  // 200; at the end every one must be acknowledged.
  void PingLoop() {
    client::PingOptions p;
    p.batch_size = 50;
    p.max_in_flight = 4;
    auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), p);
    if (!pinger.ok()) {
      Error(absl::StrCat("PingClient: ", pinger.status().ToString()));
      return;
    }
    std::mt19937 rng(99);
    double last = 0;
    auto take_rejected = [&] {
      for (const client::RejectedSignal& r : (*pinger)->TakeRejected()) {
        absl::MutexLock lock(&ledger_.mu);
        --ledger_.signals_sent[r.signal.url()];
        ++ledger_.signals_rejected;
        ledger_.errors.push_back(
            absl::StrCat("signal for ", r.signal.url(), ": ", r.status.ToString()));
      }
    };
    for (int n = 1; !stop_; ++n) {
      Signal s;
      s.set_url(HostUrl(kSignalHostBase + rng() % kSignalHosts));
      last = std::max(last + 1e-4, cluster_->Now());
      s.set_time(last);
      s.set_source(SIGNAL_SOURCE_CDN);
      {
        absl::MutexLock lock(&ledger_.mu);
        ++ledger_.signals_sent[s.url()];
      }
      if (absl::Status added = (*pinger)->Add(s); !added.ok()) {
        Error(absl::StrCat("Add: ", added.ToString()));
      }
      if (n % 200 == 0) {
        if (absl::Status flushed = (*pinger)->Flush(); !flushed.ok()) {
          Error(absl::StrCat("Flush: ", flushed.ToString()));
        }
        take_rejected();
      }
    }
    if (absl::Status flushed = (*pinger)->Flush(); !flushed.ok()) {
      Error(absl::StrCat("final Flush: ", flushed.ToString()));
    }
    take_rejected();
    absl::MutexLock lock(&ledger_.mu);
    ledger_.ping = (*pinger)->stats();
  }

  // New URLs, five at a time.
  void UpsertLoop() {
    client::AdminClient admin = Admin();
    for (int next = kUpsertHostBase; !stop_; next += 5) {
      std::vector<UrlSpec> urls;
      for (int i = next; i < next + 5; ++i) {
        urls.push_back(HostSpec(i, cluster_->Now() - 60));
      }
      absl::StatusOr<UpsertUrlsResponse> response = admin.UpsertUrls(urls);
      absl::MutexLock lock(&ledger_.mu);
      if (!response.ok()) {
        ledger_.errors.push_back(absl::StrCat("Upsert: ", response.status().ToString()));
        continue;
      }
      std::set<uint32_t> rejected;
      for (const ItemStatus& r : response->result().rejected()) {
        rejected.insert(r.index());
        // A shard that is out refuses its items; they were not taken.
        if (r.code() != static_cast<int>(absl::StatusCode::kUnavailable)) {
          ledger_.errors.push_back(
              absl::StrCat("Upsert of ", urls[r.index()].url(), ": ", r.message()));
        }
      }
      for (uint32_t i = 0; i < urls.size(); ++i) {
        if (!rejected.count(i)) ledger_.upserted.insert(urls[i].url());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void StartLoad() {
    threads_.emplace_back([this] { FetcherLoop(1); });
    threads_.emplace_back([this] { FetcherLoop(2); });
    threads_.emplace_back([this] { PingLoop(); });
    threads_.emplace_back([this] { UpsertLoop(); });
  }

  void StopLoad() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  int64_t LeasesFrom(int shard, double after) {
    absl::MutexLock lock(&ledger_.mu);
    return std::count_if(ledger_.lease_log.begin(), ledger_.lease_log.end(),
                         [&](const std::pair<double, int>& l) {
                           return l.first > after && (shard < 0 || l.second == shard);
                         });
  }

  // Waits until the coordinator counts `live` live shards and holds no
  // report for a shard that was out.
  void WaitForCluster(int live) {
    client::AdminClient admin = Admin();
    ASSERT_TRUE(WaitFor([&] {
      absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
      return stats.ok() && stats->live_shards() == static_cast<uint32_t>(live) &&
             stats->pending_reports() == 0;
    })) << LogTail("coordinator");
  }

  // Compares the shards' state with the ledger (the load has stopped).
  void CheckLedger() {
    absl::MutexLock lock(&ledger_.mu);
    client::AdminClient admin = Admin();
    // Reports: the last acknowledged crawl of each URL is its last crawl,
    // unless a later report whose answer was lost was applied too.
    std::set<std::string> urls = ledger_.upserted;
    for (int i = 0; i < kCrawlHosts; ++i) urls.insert(HostUrl(i));
    int64_t checked = 0, unknown_leases = 0;
    std::map<std::string, uint64_t> held_by_url;
    for (const auto& [id, url] : ledger_.held) held_by_url[url] = id;
    for (const std::string& url : urls) {
      absl::StatusOr<UrlState> state = admin.GetUrlState(url);
      ASSERT_TRUE(state.ok()) << url << ": " << state.status();
      ++checked;
      auto acked = ledger_.crawled.find(url);
      const std::vector<double>& maybe = ledger_.maybe_crawled[url];
      if (acked != ledger_.crawled.end()) {
        const bool later_maybe = state->last_crawl_time() > acked->second &&
                                 std::count(maybe.begin(), maybe.end(), state->last_crawl_time());
        EXPECT_TRUE(state->last_crawl_time() == acked->second || later_maybe)
            << url << ": last crawl " << state->last_crawl_time() << ", acknowledged "
            << acked->second;
      } else if (!ledger_.upserted.count(url)) {
        // A URL registered before the load: its registered crawl time, or
        // a report whose answer was lost.
        const bool as_registered = std::abs(state->last_crawl_time() - (start_ - 3600)) < 1e-3;
        EXPECT_TRUE(as_registered ||
                    std::count(maybe.begin(), maybe.end(), state->last_crawl_time()))
            << url << ": last crawl " << state->last_crawl_time();
      }
      auto held = held_by_url.find(url);
      if (held != held_by_url.end()) {
        EXPECT_TRUE(state->has_lease()) << url << " lost lease " << held->second;
        EXPECT_EQ(state->lease().lease_id(), held->second) << url;
      } else if (state->has_lease()) {
        ++unknown_leases;  // granted by a Lease whose answer was lost
      }
    }
    // Every held lease is reportable by its id, once.
    client::FetcherClient fetcher(Options(cluster::Role::kFetcher), {});
    std::vector<CrawlReport> reports;
    for (const auto& [id, url] : ledger_.held) {
      CrawlReport r;
      r.set_lease_id(id);
      r.set_fetch_time(cluster_->Now());
      r.set_outcome(CRAWL_OUTCOME_UNCHANGED);
      reports.push_back(r);
    }
    absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
    ASSERT_TRUE(reported.ok()) << reported.status();
    EXPECT_EQ(reported->result().applied(), reports.size());
    for (const ItemStatus& r : reported->result().rejected()) {
      ADD_FAILURE() << "held lease " << reports[r.index()].lease_id() << ": " << r.message();
    }

    // Signals: each URL has at most what was sent to it and not rejected;
    // over all of them, at least what was counted (acknowledged) and at
    // most that plus what came back as duplicate (deliveries whose first
    // acknowledgement was lost).
    int64_t in_state = 0;
    for (int i = kSignalHostBase; i < kSignalHostBase + kSignalHosts; ++i) {
      absl::StatusOr<UrlState> state = admin.GetUrlState(HostUrl(i));
      ASSERT_TRUE(state.ok()) << HostUrl(i) << ": " << state.status();
      const int64_t sent = ledger_.signals_sent[HostUrl(i)];
      EXPECT_LE(state->signals_since_crawl(), sent) << HostUrl(i);
      if (ledger_.ping.duplicate == 0) {
        EXPECT_EQ(state->signals_since_crawl(), sent) << HostUrl(i);
      }
      in_state += state->signals_since_crawl();
    }
    EXPECT_GE(in_state, static_cast<int64_t>(ledger_.ping.counted));
    EXPECT_LE(in_state, static_cast<int64_t>(ledger_.ping.counted + ledger_.ping.duplicate));
    EXPECT_EQ(ledger_.signals_rejected, 0);

    std::printf(
        "ledger: %lld URLs checked, %lld reports, %zu held leases, %lld "
        "leases, %llu signals counted (%llu duplicate, %llu resent "
        "batches, %llu reconnects), %lld in state, %zu URLs upserted, "
        "%lld leases nobody heard of, %zu errors\n",
        static_cast<long long>(checked), static_cast<long long>(ledger_.reports),
        ledger_.held.size(), static_cast<long long>(ledger_.lease_log.size()),
        static_cast<unsigned long long>(ledger_.ping.counted),
        static_cast<unsigned long long>(ledger_.ping.duplicate),
        static_cast<unsigned long long>(ledger_.ping.resent_batches),
        static_cast<unsigned long long>(ledger_.ping.reconnects), static_cast<long long>(in_state),
        ledger_.upserted.size(), static_cast<long long>(unknown_leases), ledger_.errors.size());
    for (const std::string& e : ledger_.errors) std::printf("  %s\n", e.c_str());
  }

  std::vector<std::string> Errors() {
    absl::MutexLock lock(&ledger_.mu);
    return ledger_.errors;
  }

  double start_ = 0;
  Ledger ledger_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Also: a shard that is down is routed around, and rejoins.
TEST_F(FaultTest, AShardKilledUnderLoadLosesNothingAcknowledged) {
  constexpr int kVictim = 1;
  StartLoad();
  ASSERT_TRUE(WaitFor([&] { return LeasesFrom(kVictim, 0) >= 20; }));
  const double killed = cluster_->Now();
  cluster_->StopShard(kVictim, SIGKILL);

  // Routed around: the coordinator takes the shard out, and leases go on
  // from the two others.
  client::AdminClient admin = Admin();
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
    return stats.ok() && stats->live_shards() == kShards - 1;
  })) << LogTail("coordinator");
  const double out = cluster_->Now();
  ASSERT_TRUE(WaitFor([&] { return LeasesFrom(-1, out) >= 50; }));
  EXPECT_EQ(LeasesFrom(kVictim, killed + 1e-3), 0);

  const absl::Status restarted = cluster_->RestartShard(kVictim);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const double back = cluster_->Now();
  // Rejoins: its URLs are leased again.
  ASSERT_TRUE(WaitFor([&] { return LeasesFrom(kVictim, back) >= 20; })) << LogTail("coordinator");
  StopLoad();
  WaitForCluster(kShards);
  CheckLedger();
  EXPECT_TRUE(Errors().empty());
}

// The coordinator SIGKILLed under load: the clients reconnect and go on.
TEST_F(FaultTest, FetchersAndPingersCarryOnAcrossACoordinatorKill) {
  StartLoad();
  ASSERT_TRUE(WaitFor([&] { return LeasesFrom(-1, 0) >= 50; }));
  cluster_->StopCoordinator(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const absl::Status restarted = cluster_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  const double back = cluster_->Now();
  // The same clients reconnect and go on.
  ASSERT_TRUE(WaitFor([&] { return LeasesFrom(-1, back) >= 100; })) << LogTail("coordinator");
  StopLoad();
  WaitForCluster(kShards);
  CheckLedger();
  // The calls in flight at the kill may fail, nothing after: a Lease (not
  // resent: its answer may be lost), or a report batch that the lost attempt
  // applied, whose retry then finds no lease (CheckLedger allows either
  // outcome for those URLs). One call per fetcher is in flight, so at most
  // two Lease errors or two batches of up to kLeaseBatch reports.
  for (const std::string& e : Errors()) {
    EXPECT_TRUE(e.find("Lease:") != std::string::npos ||
                (e.find("Report") != std::string::npos && e.find("no lease") != std::string::npos))
        << e;
  }
  EXPECT_LE(Errors().size(), 2u * kLeaseBatch);
}

// A shard that stalls (SIGSTOP) for longer than the coordinator's shard
// deadline but not for its failure timeout: the report call to it times
// out, the coordinator holds the reports and acknowledges them, and its
// health probes, answered late, never see the shard out. The held reports
// must reach the shard all the same.
class StalledShardTest : public ClusterTest {
 protected:
  // Leases URLs of shard 0, stops it for `stall`, reports them meanwhile
  // and continues it; with `lease_duration` > 0 the shards' leases last
  // that long, and with `lease_after` a fetcher leases again at once, while
  // the held reports are being delivered. Then every report must be in
  // shard 0's state.
  void StallAndReport(std::chrono::milliseconds stall, double lease_duration, bool lease_after) {
    deploy::LocalClusterOptions o = TestClusterOptions(2);
    o.bandwidth = 100;
    o.coordinator_flags.push_back("--shard_deadline=0.1");
    // Report calls wait --shard_batch_deadline (5 s by default), which would
    // stall the report past the failure timeout (1.5 s) and take the shard
    // out: a different case.
    o.coordinator_flags.push_back("--shard_batch_deadline=0.1");
    if (lease_duration > 0) {
      o.coordinator_flags.push_back(absl::StrCat("--lease_duration=", lease_duration));
    }
    StartCluster(std::move(o));
    deploy::LocalCluster& cluster = *cluster_;
    UpsertHosts(0, 20, cluster.Now() - 3600);
    client::FetcherOptions f;
    f.holder = "stall";
    f.lookahead = 1.0;
    f.max_wait = absl::Seconds(30);
    client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
    std::vector<CoordinatorLease> of_0;
    ASSERT_TRUE(WaitFor([&] {
      absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(20);
      if (!leased.ok()) return false;
      for (const CoordinatorLease& l : *leased) {
        if (l.shard_index() == 0) of_0.push_back(l);
      }
      return !of_0.empty();
    }));

    ASSERT_EQ(kill(cluster.shard_pid(0), SIGSTOP), 0);
    std::vector<CrawlReport> reports;
    for (const CoordinatorLease& l : of_0) {
      CrawlReport r;
      r.set_lease_id(l.lease_id());
      r.set_fetch_time(cluster.Now());
      r.set_outcome(CRAWL_OUTCOME_CHANGED);
      reports.push_back(r);
    }
    absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
    std::this_thread::sleep_for(stall);
    ASSERT_EQ(kill(cluster.shard_pid(0), SIGCONT), 0);
    ASSERT_TRUE(reported.ok()) << reported.status();
    ASSERT_EQ(reported->result().applied(), reports.size());
    if (lease_after) {
      // The URLs' leases have expired: leased again before their held
      // reports are in, the shard would reject those reports.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (std::chrono::steady_clock::now() < until) {
        absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(20);
        if (leased.ok() && !leased->empty()) break;
      }
    }

    client::AdminClient admin = Admin();
    uint64_t pending = 0;
    EXPECT_TRUE(WaitFor(
        [&] {
          absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
          pending = stats.ok() ? stats->pending_reports() : 1;
          return pending == 0;
        },
        30))
        << pending << " reports still held; " << LogTail("coordinator");
    for (size_t k = 0; k < of_0.size(); ++k) {
      absl::StatusOr<UrlState> state = admin.GetUrlState(of_0[k].url());
      ASSERT_TRUE(state.ok()) << state.status();
      EXPECT_EQ(state->last_crawl_time(), reports[k].fetch_time())
          << of_0[k].url() << "; " << LogTail("coordinator");
      // (Leased again afterwards, in the second case, as it may be.)
      if (!lease_after) {
        EXPECT_FALSE(state->has_lease()) << of_0[k].url();
      }
    }
  }
};

TEST_F(StalledShardTest, GetsTheReportsHeldWhileItStalled) {
  StallAndReport(std::chrono::milliseconds(300), /*lease_duration=*/0, /*lease_after=*/false);
}

// The stall outlasts the leases (slot times up to 1 s ahead, then 0.5 s)
// and the failure timeout (1.5 s): the shard is out, and once back it
// would offer the reported URLs again. A lease call must not get them
// before the held reports are in (coordinator/lease_rounds.h,
// ShardForwarding::DeliverBeforeLeasing).
TEST_F(StalledShardTest, HeldReportsArriveBeforeTheUrlsAreLeasedAgain) {
  StallAndReport(std::chrono::milliseconds(2000), /*lease_duration=*/0.5, /*lease_after=*/true);
}

}  // namespace
}  // namespace tests
}  // namespace recrawl
