// A bounded soak: steady load (two fetchers leasing and reporting, a
// pinger streaming signals at a fixed rate, an operator upserting and
// reading stats) on a LocalCluster for RECRAWL_SOAK_SECONDS (default 40)
// after RECRAWL_SOAK_WARMUP_SECONDS (default 30) of warm-up at four times
// the load. Asserts that no RPC failed and no item was rejected, and that
// each server's resident memory at the end is within 10% of what it was
// after the warm-up.
//
//   bazel test //tests:soak_test --test_env=RECRAWL_SOAK_SECONDS=1800 --test_timeout=3600
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

constexpr int kShards = 2;
constexpr int kUrls = 2000;
constexpr double kBandwidth = 100;    // leases per second
constexpr int kSignalsPerTick = 200;  // every 100 ms: 2000 signals/s
constexpr int kWarmupFactor = 4;

double EnvSeconds(const char* name, double fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (*end != '\0' || !(seconds > 0)) {
    ADD_FAILURE() << name << ": must be a positive number of seconds, got \"" << value << "\"";
    return fallback;
  }
  return seconds;
}

class SoakTest : public ClusterTest {
 protected:
  void Fail(const std::string& what) {
    absl::MutexLock lock(&mu_);
    if (errors_.size() < 20) errors_.push_back(what);
    ++error_count_;
  }

  void FetcherLoop(int k) {
    client::FetcherOptions f;
    f.holder = absl::StrCat("soak-", k);
    f.lookahead = 0.5;
    f.max_wait = absl::Seconds(10);
    client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
    while (!stop_) {
      absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(10);
      if (!leased.ok()) {
        Fail(absl::StrCat("Lease: ", leased.status().ToString()));
        continue;
      }
      std::vector<CrawlReport> reports;
      for (const CoordinatorLease& l : *leased) {
        CrawlReport r;
        r.set_lease_id(l.lease_id());
        r.set_fetch_time(cluster_->Now());
        r.set_outcome(reports.size() % 3 == 0 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
        reports.push_back(r);
      }
      absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
      if (!reported.ok()) {
        Fail(absl::StrCat("Report: ", reported.status().ToString()));
      } else if (reported->result().rejected_size() > 0) {
        const ItemStatus& r = reported->result().rejected(0);
        Fail(absl::StrCat("Report rejected: code ", r.code(), " ", r.message()));
      }
      leases_ += leased->size();
    }
  }

  void PingLoop() {
    client::PingOptions p;
    p.batch_size = kSignalsPerTick;
    auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), p);
    if (!pinger.ok()) {
      Fail(absl::StrCat("PingClient: ", pinger.status().ToString()));
      return;
    }
    auto next = std::chrono::steady_clock::now();
    double last = 0;
    for (uint64_t n = 0; !stop_;) {
      for (int k = 0; k < kSignalsPerTick * load_factor_; ++k, ++n) {
        Signal s;
        s.set_url(HostUrl(static_cast<int>((n * 7919) % kUrls)));
        last = std::max(last + 1e-4, cluster_->Now());
        s.set_time(last);
        s.set_source(n % 2 ? SIGNAL_SOURCE_CDN : SIGNAL_SOURCE_SITEMAP);
        if (absl::Status added = (*pinger)->Add(s); !added.ok()) {
          Fail(absl::StrCat("Add: ", added.ToString()));
        }
      }
      if (absl::Status flushed = (*pinger)->Flush(); !flushed.ok()) {
        Fail(absl::StrCat("Flush: ", flushed.ToString()));
      }
      for (const client::RejectedSignal& r : (*pinger)->TakeRejected()) {
        Fail(absl::StrCat("signal rejected: ", r.status.ToString()));
      }
      next += std::chrono::milliseconds(100);
      std::this_thread::sleep_until(next);
    }
    signals_ = (*pinger)->stats().counted;
  }

  // Importance updates of existing URLs and cluster stats, ten a second.
  void OperatorLoop() {
    client::AdminClient admin = Admin();
    for (int n = 0; !stop_; ++n) {
      std::vector<UrlSpec> urls;
      for (int k = 0; k < 20; ++k) {
        UrlSpec spec;
        spec.set_url(HostUrl((n * 20 + k) % kUrls));
        spec.set_importance(1.0 + (n + k) % 7);
        urls.push_back(spec);
      }
      // Items a shard could not take now (UNAVAILABLE: the coordinator
      // saw a call to it time out) are sent again, as the error says.
      for (int attempt = 1; !urls.empty(); ++attempt) {
        absl::StatusOr<UpsertUrlsResponse> up = admin.UpsertUrls(urls);
        if (!up.ok()) {
          Fail(absl::StrCat("Upsert: ", up.status().ToString()));
          break;
        }
        std::vector<UrlSpec> again;
        for (const ItemStatus& r : up->result().rejected()) {
          if (r.code() != static_cast<int>(absl::StatusCode::kUnavailable) || attempt == 10) {
            Fail(absl::StrCat("Upsert rejected ", urls[r.index()].url(), ": code ", r.code(), " ",
                              r.message()));
          } else {
            again.push_back(urls[r.index()]);
          }
        }
        retried_items_ += again.size();
        urls.swap(again);
        if (!urls.empty()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      }
      absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
      if (!stats.ok() || stats->live_shards() != kShards) {
        Fail(absl::StrCat("stats: ", stats.ok() ? "a shard is out" : stats.status().ToString()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // VmRSS of the shards, then the coordinator.
  std::vector<long> Rss() const {
    std::vector<long> kb;
    for (int s = 0; s < kShards; ++s) kb.push_back(RssKb(cluster_->shard_pid(s)));
    kb.push_back(RssKb(cluster_->coordinator_pid()));
    return kb;
  }

  static std::string Show(const std::vector<long>& kb) {
    std::string text;
    for (size_t i = 0; i < kb.size(); ++i) {
      absl::StrAppend(&text,
                      i + 1 < kb.size() ? absl::StrCat("shard", i) : std::string("coordinator"),
                      " ", kb[i] / 1024.0, " MiB  ");
    }
    return text;
  }

  absl::Mutex mu_;
  std::vector<std::string> errors_;
  int64_t error_count_ = 0;
  std::atomic<int64_t> leases_{0};
  std::atomic<uint64_t> signals_{0};
  std::atomic<int> load_factor_{kWarmupFactor};
  std::atomic<int64_t> retried_items_{0};
  std::atomic<bool> stop_{false};
};

TEST_F(SoakTest, SteadyLoadRunsWithoutErrorsAndFlatMemory) {
  const double warmup = EnvSeconds("RECRAWL_SOAK_WARMUP_SECONDS", 30);
  const double soak = EnvSeconds("RECRAWL_SOAK_SECONDS", 40);
  deploy::LocalClusterOptions o = TestClusterOptions(kShards);
  o.bandwidth = kBandwidth;
  // RocksDB's memtables and block cache are bounded, but at their defaults
  // (16 + 64 MiB, 64 MiB) a shard's memory grows with the writes for half
  // an hour before they are full (~35 KiB/s here). Small ones fill within
  // the warm-up, so what the soak measures is everything else.
  o.shard_flags.push_back("--write_buffer_kb=256");
  o.shard_flags.push_back("--block_cache_mb=1");
  StartCluster(std::move(o));
  for (int first = 0; first < kUrls; first += 500) {
    UpsertHosts(first, 500, cluster_->Now() - 3600);
  }
  ASSERT_TRUE(Admin().SetBandwidth(kWarmupFactor * kBandwidth, {}).ok());

  std::vector<std::thread> load;
  load.emplace_back([this] { FetcherLoop(0); });
  load.emplace_back([this] { FetcherLoop(1); });
  load.emplace_back([this] { PingLoop(); });
  load.emplace_back([this] { OperatorLoop(); });

  // The warm-up runs at four times the steady load, so that the servers
  // reach the allocations of their busiest moments (thread pools, arenas,
  // compactions) before memory is measured.
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  ASSERT_TRUE(Admin().SetBandwidth(kBandwidth, {}).ok());
  load_factor_ = 1;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::vector<long> after_warmup = Rss();
  std::printf("after %.0f s warm-up: %s\n", warmup, Show(after_warmup).c_str());
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(soak);
  std::vector<long> peak = after_warmup;
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    const std::vector<long> now = Rss();
    for (size_t i = 0; i < now.size(); ++i) peak[i] = std::max(peak[i], now[i]);
    std::printf("t=%.0f s: %s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                Show(now).c_str());
  }
  const std::vector<long> at_end = Rss();
  stop_ = true;
  for (std::thread& t : load) t.join();

  std::printf(
      "soak %.0f s: %lld leases, %llu signals counted, %lld upserts sent "
      "again after UNAVAILABLE; end: %s\n",
      soak, static_cast<long long>(leases_.load()),
      static_cast<unsigned long long>(signals_.load()),
      static_cast<long long>(retried_items_.load()), Show(at_end).c_str());
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(error_count_, 0);
  for (const std::string& e : errors_) ADD_FAILURE() << e;
  EXPECT_GT(leases_.load(), 0);
#ifdef __SANITIZE_ADDRESS__
  // Under ASan the servers' resident memory is mostly shadow memory and
  // the quarantine of freed blocks (256 MiB, filling as the load frees),
  // not theirs: shown above, not asserted. LeakSanitizer checks them at
  // exit instead (Stop below fails on a leak).
  const bool measure = false;
#else
  const bool measure = true;
#endif
  for (size_t i = 0; measure && i < at_end.size(); ++i) {
    ASSERT_GT(after_warmup[i], 0);
    EXPECT_LE(at_end[i], after_warmup[i] * 1.10)
        << "process " << i << " grew from " << after_warmup[i] << " kB to " << at_end[i]
        << " kB (peak " << peak[i] << " kB)";
  }
  EXPECT_TRUE(cluster_->Stop().ok()) << LogTail("coordinator");
}

}  // namespace
}  // namespace tests
}  // namespace recrawl
