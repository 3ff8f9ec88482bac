// One crawl of a SimulatedWeb by a running LocalCluster, in the cluster's
// scaled time, through the client library as a real deployment would:
//
//  * fetcher threads (FetcherClient) lease URLs at their slot times, fetch
//    = ask the web whether the page changed since its last fetch at the
//    slot time, and report changed / unchanged by lease id;
//  * a ping thread (PingClient) pushes the web's signals as their time
//    comes;
//  * the calling thread follows the bandwidth schedule (AdminClient
//    SetBandwidth at each step's time) and reports progress.
//
// Web time 0 is cluster time `start`, when every page was fetched (the
// loader gave that as each URL's last crawl time).
#ifndef RECRAWL_DEMO_CRAWL_RUN_H_
#define RECRAWL_DEMO_CRAWL_RUN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "demo/simulated_web.h"
#include "deploy/local_cluster.h"
#include "sim/world.h"

namespace recrawl {
namespace demo {

// Counters of a crawl, also the progress reports' payload.
struct CrawlProgress {
  double web_time = 0.0;  // cluster time − start
  double real_seconds = 0.0;
  int64_t leases = 0;            // slots leased for the run (before its end)
  int64_t crawls = 0;            // reported and accepted
  int64_t unchanged_crawls = 0;  // of those, pages unchanged since last crawl
  int64_t rejected_reports = 0;
  int64_t signals = 0;  // acknowledged by the cluster
  // Of those, the ones the shards counted (the others came before or
  // within T_DELAY of their URL's last crawl, or were duplicates).
  int64_t signals_counted = 0;
  // Signals PingClient sent again after a server answered UNAVAILABLE for
  // them (the coordinator does while its stream to a shard is broken).
  int64_t signals_resent = 0;
  double freshness = 1.0;  // over [0, web_time]
};

struct CrawlRunOptions {
  double start = 0.0;     // cluster time of web time 0
  double duration = 0.0;  // web seconds; leases for later slots are not crawled
  // Bandwidth over web time (start[0] = 0); the cluster is set to rate[0]
  // at the start and to each next rate at its start.
  sim::BandwidthSchedule bandwidth;
  // Fetcher threads; 0 with `signals` measures the signal path alone.
  int fetchers = 2;
  // Whether the pinger sends the web's signals (false: the crawl path
  // alone).
  bool signals = true;
  // Whether the pinger streams them straight to the shards that own their
  // URLs (PingOptions::route_to_shards, with the cluster's internal token),
  // as the ingestion gateway does with --route_to_shards, rather than
  // through the coordinator. Straight to the shards the coordinator does no
  // work for a signal and each shard gets the pinger's whole batches, not
  // the coordinator's per-shard parts of them: the servers spend less than
  // half the CPU a signal (docs/benchmarks.md, "Main job at 10^6 URLs").
  bool signals_to_shards = true;
  // Most URLs a fetcher asks for in one Lease call: the coordinator's
  // default --max_lease_batch. At 10,000 crawls/s two fetchers leasing
  // 0.2 s ahead want 1,000 a call; calls of 500 cost the servers about 7 µs
  // more a crawl (docs/benchmarks.md, "Main job at 10^6 URLs").
  int lease_batch = 1000;
  // Clock seconds ahead of now a fetcher leases slots (FetcherOptions): a
  // fetcher then gets up to a batch of slots per call instead of the few due
  // at that moment; each is still fetched at its slot time. Fewer, larger
  // calls cost the servers less (docs/benchmarks.md, "Main job at 10^6
  // URLs": at 10^6 URLs and 10,000 crawls/s, 0.2 s rather than 0.05 s
  // saves about a sixth of a crawl's server CPU at the same freshness).
  double lookahead = 0.2;
  // Real seconds between progress reports.
  double progress_period = 1.0;
  // A benchmark baseline: the fetchers only lease (no fetch, no report), so
  // the run measures what the cluster hands out without the crawl's work.
  // Leased URLs stay leased, so the web must hold more URLs than the run
  // leases.
  bool lease_only = false;
};

struct CrawlRunResult {
  CrawlProgress totals;
  // Real seconds from web time 0 until the last fetcher stopped, and until
  // the pinger had every signal acknowledged (later than the crawl's end
  // when the cluster took signals more slowly than the web made them).
  double fetch_seconds = 0.0;
  double ping_seconds = 0.0;
  // Load average (1 min) when the crawl began and ended.
  double load_at_start = 0.0;
  double load_at_end = 0.0;
  // Leases whose slot fell before web time 0 (the coordinator's grace),
  // crawled at 0.
  int64_t early_leases = 0;
  // Freshness per window of the web (SimulatedWeb::CloseWindows).
  std::vector<double> window_freshness;
  // Crawls and signals the web handed out (its own counts).
  WebCounts web;
  // CPU seconds (user + system) spent from web time 0 until the fetchers
  // and the pinger stopped: by the cluster's server processes, and by this
  // process's threads, split into the client library's side (leases,
  // reports, signals: the fetcher and pinger threads without their calls
  // into the web) and the simulated web's (fetches, popping signals).
  struct CpuUse {
    double shards = 0.0;
    double coordinator = 0.0;
    double fetchers = 0.0;
    double pinger = 0.0;
    double web = 0.0;
  };
  CpuUse cpu;
  // The shards' scheduling-index work during the crawl (IndexWork, summed
  // over the shards): what a crawl costs the index, by count.
  struct IndexUse {
    uint64_t valuations = 0;
    uint64_t wakeups = 0;
    uint64_t rebuilds = 0;
    uint64_t raises = 0;
  };
  IndexUse index;
};

// Runs the crawl until web time `duration`, or until *stop turns true
// (then CANCELLED). `on_progress` is called from the calling thread every
// progress_period and once at the end.
absl::StatusOr<CrawlRunResult> RunCrawl(
    const deploy::LocalCluster& cluster, SimulatedWeb& web, const CrawlRunOptions& options,
    const std::atomic<bool>& stop, const std::function<void(const CrawlProgress&)>& on_progress);

// Upserts every page of `web` (μ, and the true Δ, λ, ν as priors; pages
// without a source get λ = ν = 0) with `last_crawl_time`, in batches,
// calling on_batch(pages loaded) after each. Items a shard did not answer
// in time are sent again (an upsert is idempotent), a few rounds. CANCELLED
// once *stop.
absl::Status LoadWeb(const deploy::LocalCluster& cluster, const SimulatedWeb& web,
                     double last_crawl_time, const std::atomic<bool>& stop,
                     const std::function<void(int64_t)>& on_batch);

}  // namespace demo
}  // namespace recrawl

#endif  // RECRAWL_DEMO_CRAWL_RUN_H_
