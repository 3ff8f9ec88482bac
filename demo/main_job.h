// The main job: a simulated web crawled by a local cluster, once
// with the shards ranking by GREEDY-NCIS and once by GREEDY (signals
// ignored), on the same web (same seed), each on a fresh cluster under
// data_dir/<policy>; the bandwidth goes R → 1.5R → R at thirds of the run.
// Both are compared with BASELINE, the optimal continuous policy without
// signals (policy/optimal_policy.h), whose accuracy is analytic at each
// bandwidth.
#ifndef RECRAWL_DEMO_MAIN_JOB_H_
#define RECRAWL_DEMO_MAIN_JOB_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "demo/crawl_run.h"
#include "demo/simulated_web.h"
#include "deploy/local_cluster.h"

namespace recrawl {
namespace demo {

struct MainJobOptions {
  // num_pages, seed and the page distributions; horizon is `duration`.
  SimulatedWebConfig web;
  // Binaries, shard count and time scale; data_dir is the parent of the
  // per-policy directories.
  deploy::LocalClusterOptions cluster;
  double duration = 240.0;    // simulated seconds
  double bandwidth = 2000.0;  // R, crawls per simulated second
  // Fetcher threads (0 with `signals`: the signal path alone) and whether
  // the web's signals are sent (false: the crawl path alone); CrawlRunOptions.
  int fetchers = 2;
  bool signals = true;
  // CrawlRunOptions::signals_to_shards.
  bool signals_to_shards = CrawlRunOptions().signals_to_shards;
  // CrawlRunOptions::lookahead, in simulated seconds.
  double lookahead = CrawlRunOptions().lookahead;
  // Keep data_dir/<policy> after the run (else removed).
  bool keep_data = false;
  // Shard policies to run, in order ("greedy_ncis", "greedy", ...).
  std::vector<std::string> policies = {"greedy_ncis", "greedy"};
  // Then one more run of the first policy whose fetchers only lease
  // (CrawlRunOptions::lease_only): the benchmark's baseline.
  bool lease_only_baseline = false;
};

struct PolicyRun {
  std::string policy;
  bool lease_only = false;
  CrawlRunResult result;
  double load_seconds = 0.0;  // real
  double wall_seconds = 0.0;  // real, cluster start to stop
};

struct MainJobResult {
  sim::BandwidthSchedule schedule;  // web time
  std::vector<PolicyRun> runs;
  // BASELINE's expected accuracy at each step's rate.
  std::vector<double> baseline;
};

// R for the first third, 1.5R for the second, R for the last.
sim::BandwidthSchedule MainJobSchedule(double bandwidth, double duration);

// What the job tells its user while it runs.
struct MainJobObserver {
  // A line of news ("GREEDY-NCIS: loading 100000 pages").
  std::function<void(const std::string&)> note;
  // Progress of the crawl of `policy`.
  std::function<void(const std::string& policy, const CrawlProgress&)> progress;
};

absl::StatusOr<MainJobResult> RunMainJob(const MainJobOptions& options,
                                         const std::atomic<bool>& stop,
                                         const MainJobObserver& observer);

// The status line: progress bar, simulated time, crawls/s, signals/s,
// freshness so far.
std::string StatusLine(const std::string& policy, const CrawlProgress& p, double duration);

// The summary tables (markdown).
std::string SummaryTable(const MainJobOptions& options, const MainJobResult& result);

}  // namespace demo
}  // namespace recrawl

#endif  // RECRAWL_DEMO_MAIN_JOB_H_
