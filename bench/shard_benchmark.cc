// The shard core's throughput, memory and start-up (docs/benchmarks.md, "Shard at 10^5, 10^6 and
// 10^7 URLs"), next to RocksDB's raw put rate measured in the same run:
//
//   bazel run -c opt //bench:shard_benchmark -- --urls=1000000
//
// Phases: raw RocksDB puts (120-byte values, WAL, batches of 1000); bulk
// upsert of the URLs; in-process signal ingestion (batches of --batch, WAL,
// no fsync); crawl delays on the largest hosts (--delayed_hosts); leases and
// reports in batches of --batch in steady state (slot times at the crawl
// rate) and a burst of leases at one time; resident memory per URL; restart
// (open + scan + index build) warm and with the store evicted from the page
// cache.
#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_support.h"
#include "bench/index_work_report.h"
#include "services/server_lifecycle.h"
#include "shard/malloc_options.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

ABSL_FLAG(int64_t, urls, 1000000, "URLs in the shard");
ABSL_FLAG(int, batch, 256, "Items per signal, lease and report request");
ABSL_FLAG(int64_t, signals, 2000000, "Signals to ingest");
ABSL_FLAG(int64_t, leases, 0,
          "URLs to lease and report in the steady-state phase (0: a fifth of "
          "the URLs, so that each size covers the same share of a crawl "
          "cycle)");
ABSL_FLAG(int64_t, burst, 20000, "URLs to lease at one time");
ABSL_FLAG(bool, alike, false,
          "Load every URL with importance 1 and no crawl time (an imported list: pages "
          "alike, tied until signals and crawls tell them apart)");
ABSL_FLAG(int, delayed_hosts, 0,
          "The largest hosts (by rank) given a crawl delay of --host_delay before the steady "
          "state (0: none)");
ABSL_FLAG(double, host_delay, 10.0, "Seconds between two crawls of a delayed host");
ABSL_FLAG(double, burst_step, 0.0,
          "Seconds the burst's slot time advances a batch (0: one time; "
          "256 / 100K s: a burst leased at 100K URLs/s in real time)");
ABSL_FLAG(int, target_candidates, 0, "Index option (0: its default): candidates after a rebuild");
ABSL_FLAG(int64_t, journal_window, 0, "Signal journal window in batches (0: the shard's default)");
ABSL_FLAG(int, scan_readahead_kb, -1,
          "Read-ahead of the start-up scan, KiB (-1: the store's default)");
ABSL_FLAG(int, startup_threads, -1,
          "Threads scanning the store at start-up (-1: the shard's default)");
ABSL_FLAG(bool, pool_host_priors, true,
          "Shard option: host-pooled priors (host_prior_table.h; --nopool_host_priors: off)");
ABSL_FLAG(double, trusted_source_share, 0.5, "Shard option: ranking by trusted sources (0: off)");
ABSL_FLAG(bool, shard_malloc_options, true,
          "Set malloc as shard_server does (shard/malloc_options.h)");
ABSL_FLAG(std::string, dir, "", "Working directory (default: a temp dir)");
ABSL_FLAG(bool, keep, false, "Keep the directory afterwards");
ABSL_FLAG(bool, restart_only, false,
          "Only the restarts, of the store a --keep run left in --dir (to "
          "profile start-up)");
ABSL_FLAG(bool, load_only, false, "Stop after the raw put baseline and the load (and its memory)");
ABSL_FLAG(bool, reuse_store, false,
          "Open the store a --keep run left in --dir instead of the raw put "
          "baseline and the load (to profile the later phases)");

namespace recrawl {
namespace shard {
namespace {

using bench::BenchDir;
using bench::Check;
using bench::Clock;
using bench::EvictFromPageCache;
using bench::Percentile;
using bench::RawPutRate;
using bench::Seconds;

template <typename T>
T Check(absl::StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(v);
}

// CPU time of the calling thread: on a loaded machine, what the work itself
// took (wall time also counts the other processes' turns).
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// CPU time of the whole process: a restart's scanning threads (and
// RocksDB's) besides the calling one.
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Resident bytes after returning free heap memory to the system, so that
// what growing tables left behind in malloc's free lists does not count.
int64_t ResidentBytes() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::unique_ptr<Shard> OpenShard(const std::string& dir, double now) {
  UrlStoreOptions store_options;
  store_options.block_cache_bytes = size_t{8} << 20;
  store_options.defer_compactions = true;  // as shard_server opens it
  if (const int kb = absl::GetFlag(FLAGS_scan_readahead_kb); kb >= 0) {
    store_options.scan_readahead_bytes = static_cast<size_t>(kb) << 10;
  }
  std::unique_ptr<UrlStore> store = Check(UrlStore::Open(dir, store_options));
  ShardOptions options;
  options.pool_host_priors = absl::GetFlag(FLAGS_pool_host_priors);
  options.trusted_source_share = absl::GetFlag(FLAGS_trusted_source_share);
  if (const int target = absl::GetFlag(FLAGS_target_candidates); target > 0) {
    options.index.target_candidates = target;
    options.index.max_candidates = 4 * target;
  }
  if (const int t = absl::GetFlag(FLAGS_startup_threads); t >= 0) {
    options.startup_threads = t;
  }
  if (const int64_t w = absl::GetFlag(FLAGS_journal_window); w > 0) {
    options.journal_window = static_cast<uint64_t>(w);
  }
  return Check(Shard::Open(std::move(store), options, now));
}

void Restarts(const std::string& dir, int64_t n, double now);

// The process's resident growth `rss` since a phase began, per URL, beside
// the shard's own tables and its hosts.
void PrintMemory(const char* after, int64_t rss, Shard& shard, int64_t n, double now) {
  const ShardStats stats = shard.GetStats(now);
  const StoreMemory store = shard.StoreMemoryBytes();
  std::printf(
      "resident memory after %s: %.0f bytes/URL (core tables %.1f, index %.1f; RocksDB's "
      "memtables %.1f, table readers %.1f, block cache %.1f; %llu hosts, %llu of them pooled)\n",
      after, static_cast<double>(rss) / n, static_cast<double>(shard.MemoryBytes()) / n,
      static_cast<double>(shard.index().MemoryBytes()) / n,
      static_cast<double>(store.memtables) / n, static_cast<double>(store.table_readers) / n,
      static_cast<double>(store.block_cache) / n, static_cast<unsigned long long>(stats.hosts()),
      static_cast<unsigned long long>(stats.estimator().hosts_pooled()));
}

void Run() {
  const int64_t n = absl::GetFlag(FLAGS_urls);
  const int batch = absl::GetFlag(FLAGS_batch);
  const std::string dir = BenchDir(absl::GetFlag(FLAGS_dir), "recrawl_shard_bench");
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double now = 1.7e9;
  if (absl::GetFlag(FLAGS_restart_only)) {
    Restarts(dir, n, now + 86400);
    return;
  }
  const bool reuse = absl::GetFlag(FLAGS_reuse_store);
  double raw = 0.0;
  if (!reuse) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    raw = RawPutRate(dir + "/raw", n);
    std::filesystem::remove_all(dir + "/raw");
    std::printf("rocksdb raw put (120 B, WAL, batches of 1000): %.0fK/s\n", raw / 1e3);
  }

  const int64_t rss_before = ResidentBytes();
  std::unique_ptr<Shard> shard = OpenShard(dir + "/shard", now);
  if (!reuse) {
    // The ratio times the shard's calls only: making the requests is the
    // client's work (printed beside it).
    const Clock::time_point load_start = Clock::now();
    double shard_seconds = 0.0;
    UpsertUrlsRequest req;
    for (int64_t i = 0; i < n; ++i) {
      UrlSpec* spec = req.add_urls();
      spec->set_url(bench::SyntheticUrl(i));
      if (absl::GetFlag(FLAGS_alike)) {
        spec->set_importance(1.0);
      } else {
        spec->set_importance(u(rng));
        spec->set_last_crawl_time(now - 86400 * u(rng));
      }
      if (req.urls_size() == 1000 || i + 1 == n) {
        const Clock::time_point start = Clock::now();
        Check(shard->UpsertUrls(req, now));
        shard_seconds += Seconds(start);
        req.Clear();
      }
    }
    const double making = Seconds(load_start) - shard_seconds;
    std::printf(
        "upsert %lld URLs (batches of 1000): %.2f s in the shard's calls, %.0fK/s (%.2f x "
        "raw put); making the requests %.2f s more\n",
        static_cast<long long>(n), shard_seconds, n / shard_seconds / 1e3, n / shard_seconds / raw,
        making);
  }
  // The first pick builds the index's level: part of being ready.
  PeekTopRequest peek;
  peek.set_k(1);
  Check(shard->PeekTop(peek, now));
  const int64_t rss = ResidentBytes() - rss_before;
  std::printf(
      "resident memory: %.0f bytes/URL (core tables %.0f bytes/URL, "
      "of which index %.0f; page slot %zu bytes)\n",
      static_cast<double>(rss) / n, static_cast<double>(shard->MemoryBytes()) / n,
      static_cast<double>(shard->index().MemoryBytes()) / n, sizeof(PageSlot));

  if (absl::GetFlag(FLAGS_load_only)) {
    if (!absl::GetFlag(FLAGS_keep)) std::filesystem::remove_all(dir);
    return;
  }
  {
    // Requests are built before timing (a server receives them parsed).
    // The URL list is the client's and is freed with the requests, before
    // the steady state's memory is measured.
    std::vector<std::string> urls(n);
    for (int64_t i = 0; i < n; ++i) urls[i] = bench::SyntheticUrl(i);
    const int64_t total = absl::GetFlag(FLAGS_signals);
    std::vector<SignalBatch> batches;
    for (int64_t i = 0; i < total;) {
      SignalBatch& sb = batches.emplace_back();
      for (int k = 0; k < batch && i < total; ++k, ++i) {
        Signal* s = sb.add_signals();
        s->set_url(urls[rng() % n]);
        s->set_source(SIGNAL_SOURCE_CDN);
      }
    }
    int64_t counted = 0;
    const Clock::time_point start = Clock::now();
    for (const SignalBatch& sb : batches) {
      now += 1e-3;
      counted += Check(shard->IngestSignals(sb, now)).counted();
    }
    const double s = Seconds(start);
    std::printf(
        "signals in process, batches of %d, WAL: %.0fK/s (%.2f x raw "
        "put; %lld counted)\n",
        batch, total / s / 1e3, total / s / raw, static_cast<long long>(counted));
  }
  if (const int hosts = absl::GetFlag(FLAGS_delayed_hosts); hosts > 0) {
    // Politeness as robots.txt crawl delays give it, on the hosts with the
    // most URLs (bench::SyntheticUrl's ranks).
    // In requests of up to 10,000 hosts (the shard's default limit).
    constexpr int kHostsPerRequest = 10000;
    for (int first = 1; first <= hosts; first += kHostsPerRequest) {
      SetHostPolitenessRequest politeness;
      for (int rank = first; rank <= hosts && rank < first + kHostsPerRequest; ++rank) {
        HostPoliteness* h = politeness.add_hosts();
        h->set_host(bench::SyntheticHost(rank));
        h->set_min_delay(absl::GetFlag(FLAGS_host_delay));
      }
      Check(shard->SetHostPoliteness(politeness, now));
    }
  }
  IndexWork work = shard->GetStats(now).index();
  {
    // Steady state: slots at rate R = m / day (each URL crawled about daily),
    // each lease batch reported right after its last slot.
    const int64_t total = absl::GetFlag(FLAGS_leases) > 0 ? absl::GetFlag(FLAGS_leases) : n / 5;
    const double rate = n / 86400.0;
    LeaseRequest lease;
    lease.set_holder("bench");
    lease.set_lease_duration(3600);
    ReportCrawlsRequest report;
    double lease_s = 0, report_s = 0, lease_cpu = 0, report_cpu = 0;
    // Each call's wall time: an O(m) rebuild of the index's level is paid
    // by the one call that finds the candidate pool empty.
    std::vector<double> lease_calls, report_calls;
    int64_t leased = 0;
    while (leased < total) {
      lease.clear_slot_times();
      for (int k = 0; k < batch; ++k) {
        now += 1.0 / rate;
        lease.add_slot_times(now);
      }
      Clock::time_point start = Clock::now();
      double cpu = ThreadCpuSeconds();
      const LeaseResponse r = Check(shard->Lease(lease, now));
      lease_calls.push_back(Seconds(start));
      lease_s += lease_calls.back();
      lease_cpu += ThreadCpuSeconds() - cpu;
      if (r.leases_size() == 0) break;
      leased += r.leases_size();
      report.Clear();
      for (const LeasedUrl& l : r.leases()) {
        CrawlReport* c = report.add_reports();
        c->set_lease_id(l.lease_id());
        c->set_fetch_time(l.slot_time());
        c->set_outcome(rng() % 2 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
      }
      start = Clock::now();
      cpu = ThreadCpuSeconds();
      Check(shard->ReportCrawls(report, now));
      report_calls.push_back(Seconds(start));
      report_s += report_calls.back();
      report_cpu += ThreadCpuSeconds() - cpu;
    }
    std::printf(
        "steady state at R = %.1f/s, batches of %d: leases %.0fK "
        "URLs/s (%.2f x raw put; %.0fK per CPU second), reports %.0fK/s "
        "(%.2f x raw put; %.0fK per CPU second)\n",
        rate, batch, leased / lease_s / 1e3, leased / lease_s / raw, leased / lease_cpu / 1e3,
        leased / report_s / 1e3, leased / report_s / raw, leased / report_cpu / 1e3);
    if (!report_calls.empty()) {
      std::printf(
          "a call's wall time, median / p99 / max: leases %.2f / %.2f / %.1f ms, reports "
          "%.2f / %.2f / %.1f ms (%zu calls each)\n",
          1e3 * Percentile(lease_calls, 0.5), 1e3 * Percentile(lease_calls, 0.99),
          1e3 * Percentile(lease_calls, 1.0), 1e3 * Percentile(report_calls, 0.5),
          1e3 * Percentile(report_calls, 0.99), 1e3 * Percentile(report_calls, 1.0),
          lease_calls.size());
    }
    bench::PrintIndexWorkPerLease(shard->GetStats(now).index(), leased, &work);
    PrintMemory("the steady state", ResidentBytes() - rss_before, *shard, n, now);
  }
  {
    // A burst: the top URLs all at one time (e.g. fetchers starting up),
    // which makes the index lower its level Λ in O(m) steps.
    const int64_t total = absl::GetFlag(FLAGS_burst);
    LeaseRequest lease;
    lease.set_holder("burst");
    int64_t leased = 0;
    const Clock::time_point start = Clock::now();
    while (leased < total) {
      lease.clear_slot_times();
      now += absl::GetFlag(FLAGS_burst_step);
      for (int k = 0; k < batch; ++k) lease.add_slot_times(now);
      const LeaseResponse r = Check(shard->Lease(lease, now));
      if (r.leases_size() == 0) break;
      leased += r.leases_size();
    }
    const double s = Seconds(start);
    std::printf("burst of %lld leases at one time: %.0fK URLs/s\n", static_cast<long long>(leased),
                leased / s / 1e3);
    bench::PrintIndexWorkPerLease(shard->GetStats(now).index(), leased, &work);
  }

  // As after a SIGTERM: the server flushes the store before closing it.
  Check(shard->Flush());
  shard.reset();
  Restarts(dir, n, now);
  if (!absl::GetFlag(FLAGS_keep)) std::filesystem::remove_all(dir);
}

// The store's open and scan alone, then the shard's restart warm and cold.
void Restarts(const std::string& dir, int64_t n, double now) {
  PeekTopRequest peek;
  peek.set_k(1);
  {
    // The store's part alone: open and scan (records parsed, nothing built).
    const Clock::time_point start = Clock::now();
    std::unique_ptr<UrlStore> store = Check(UrlStore::Open(dir + "/shard"));
    int64_t records = 0;
    Check(store->ScanUrls([&records](cluster::UrlId, const UrlRecord&) { ++records; }));
    std::printf("store alone, warm: open + scan %.2f s (%lld records)\n", Seconds(start),
                static_cast<long long>(records));
  }
  for (const bool cold : {false, true}) {
    if (cold) EvictFromPageCache(dir + "/shard");
    const int64_t rss_closed = ResidentBytes();
    const Clock::time_point start = Clock::now();
    const double cpu_start = ThreadCpuSeconds();
    const double process_cpu_start = ProcessCpuSeconds();
    std::unique_ptr<Shard> shard = OpenShard(dir + "/shard", now);
    const double open_s = Seconds(start);
    Check(shard->PeekTop(peek, now));
    const double s = Seconds(start);
    const double cpu_s = ThreadCpuSeconds() - cpu_start;
    const double process_cpu_s = ProcessCpuSeconds() - process_cpu_start;
    if (!cold) PrintMemory("the restart", ResidentBytes() - rss_closed, *shard, n, now);
    std::printf(
        "restart %s: open + scan + build + index level %.2f s, first "
        "pick after %.2f s, %.2f s CPU of this thread, %.2f s of the "
        "process (%lld URLs, %lld leases, %lld journal entries)\n",
        cold ? "cold" : "warm", open_s, s, cpu_s, process_cpu_s,
        static_cast<long long>(shard->startup().urls),
        static_cast<long long>(shard->startup().leases),
        static_cast<long long>(shard->startup().journal_entries));
    const StartupReport& r = shard->startup();
    std::printf(
        "  of which host records %.2f s, scan + load %.2f s, journal replay %.2f s, index "
        "build %.2f s, index level %.2f s (store's estimate: %lld "
        "URLs)\n",
        r.hosts_seconds, r.load_seconds, r.replay_seconds, r.index_seconds, r.level_seconds,
        static_cast<long long>(r.estimated_urls));
    shard.reset();
  }
}

}  // namespace
}  // namespace shard
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // phases show as they end
  // The shard in process runs as shard_server runs it.
  recrawl::services::TurnOffMutexDeadlockDetection();
  if (absl::GetFlag(FLAGS_shard_malloc_options)) {
    recrawl::shard::SetShardMallocOptions();
  }
  recrawl::shard::Run();
  return 0;
}
