// recrawl on this machine: a local cluster (N shard_server + a
// coordinator_server on loopback, stores under --data_dir).
//
//   recrawl_local [demo]   the main job (demo/main_job.h): a simulated web
//                          crawled by the cluster under GREEDY-NCIS and under
//                          GREEDY, compared with BASELINE; summary on stdout
//   recrawl_local serve    start the cluster (real time) and, with --ingest,
//                          an ingest_server in front of it; load the
//                          simulated web's URLs, serve until Ctrl-C / SIGTERM
//
// Ctrl-C or SIGTERM stops the fetchers and pingers, stops the cluster's
// processes (drain, flush, close) and exits 130.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "demo/crawl_run.h"
#include "demo/main_job.h"
#include "demo/simulated_web.h"
#include "deploy/local_cluster.h"
#include "services/server_lifecycle.h"

ABSL_FLAG(int, urls, 100000, "Pages of the simulated web");
ABSL_FLAG(int, shards, 4, "Shard processes");
ABSL_FLAG(double, duration, 240.0, "demo: simulated seconds crawled per policy");
ABSL_FLAG(double, bandwidth, 2000.0,
          "demo: R, crawls per simulated second (1.5R in the middle third)");
ABSL_FLAG(double, time_scale, 3.0,
          "demo: simulated seconds per real second (serve runs in real time)");
ABSL_FLAG(int, fetchers, 2, "demo: fetcher threads (0 with --signals: the signal path alone)");
ABSL_FLAG(double, lookahead, recrawl::demo::MainJobOptions().lookahead,
          "demo: simulated seconds ahead of now fetchers lease slots (0: only "
          "slots that are due)");
ABSL_FLAG(bool, signals, true, "demo: send the web's signals (false: the crawl path alone)");
ABSL_FLAG(bool, signals_to_shards, recrawl::demo::MainJobOptions().signals_to_shards,
          "demo: the pinger streams signals straight to the shards that own their URLs "
          "(false: through the coordinator)");
ABSL_FLAG(std::string, mode, "merge",
          "The coordinator's --mode: merge (the exact argmax across shards), equal or "
          "adaptive (the bandwidth split across shards)");
ABSL_FLAG(std::string, data_dir, "./data", "Where the stores, tokens and logs go");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the simulated web");
ABSL_FLAG(bool, keep_data, false, "demo: keep data_dir/<policy> after the run");
ABSL_FLAG(std::string, policies, "greedy_ncis,greedy",
          "demo: shard policies to compare, comma-separated");
ABSL_FLAG(bool, lease_only_baseline, false,
          "demo: add a run of the first policy whose fetchers only lease "
          "(no fetch, no report), the throughput benchmark's baseline");
ABSL_FLAG(std::string, shard_server, "bazel-bin/services/shard_server", "The shard_server binary");
ABSL_FLAG(std::string, coordinator_server, "bazel-bin/services/coordinator_server",
          "The coordinator_server binary");
ABSL_FLAG(bool, ingest, true,
          "serve: also start the ingestion gateway (IndexNow, CDN purges over HTTP)");
ABSL_FLAG(std::string, ingest_server, "bazel-bin/ingest/ingest_server", "The ingest_server binary");

namespace recrawl {
namespace deploy {
namespace {

using demo::CrawlProgress;
using demo::LoadWeb;
using demo::MainJobObserver;
using demo::MainJobOptions;
using demo::MainJobResult;
using demo::RunMainJob;
using demo::SimulatedWeb;
using demo::SimulatedWebConfig;
using demo::StatusLine;
using demo::SummaryTable;

constexpr int kExitStopped = 130;

std::atomic<bool> stop_requested{false};

void OnStopSignal(int) { stop_requested.store(true); }

void InstallStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

LocalClusterOptions ClusterOptionsFromFlags() {
  LocalClusterOptions o;
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.shard_server = absl::GetFlag(FLAGS_shard_server);
  o.coordinator_server = absl::GetFlag(FLAGS_coordinator_server);
  o.shards = absl::GetFlag(FLAGS_shards);
  o.bandwidth = absl::GetFlag(FLAGS_bandwidth);
  o.mode = absl::GetFlag(FLAGS_mode);
  return o;
}

SimulatedWebConfig WebFromFlags() {
  SimulatedWebConfig web;
  web.num_pages = absl::GetFlag(FLAGS_urls);
  web.seed = absl::GetFlag(FLAGS_seed);
  return web;
}

// Redraws one line on a terminal; elsewhere (a log, a pipe) prints a line
// every few seconds.
class StatusPrinter {
 public:
  StatusPrinter() : terminal_(isatty(STDERR_FILENO)) {}

  void Show(const std::string& line, bool final) {
    if (terminal_) {
      std::cerr << "\r" << line << "\033[K" << (final ? "\n" : "") << std::flush;
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (final || now - last_ >= std::chrono::seconds(5)) {
      std::cerr << line << "\n" << std::flush;
      last_ = now;
    }
  }

  void Note(const std::string& text) { std::cerr << text << "\n" << std::flush; }

 private:
  const bool terminal_;
  std::chrono::steady_clock::time_point last_{};
};

// A flag outside its range: the message names the flag.
absl::Status CheckFlags() {
  auto positive = [](const char* name, double v) {
    return v > 0 && std::isfinite(v) ? absl::OkStatus()
                                     : absl::InvalidArgumentError(absl::StrCat(
                                           "--", name, ": must be positive and finite, got ", v));
  };
  for (absl::Status s : {positive("urls", absl::GetFlag(FLAGS_urls)),
                         positive("shards", absl::GetFlag(FLAGS_shards)),
                         positive("duration", absl::GetFlag(FLAGS_duration)),
                         positive("bandwidth", absl::GetFlag(FLAGS_bandwidth)),
                         positive("time_scale", absl::GetFlag(FLAGS_time_scale))}) {
    if (!s.ok()) return s;
  }
  if (absl::GetFlag(FLAGS_fetchers) < 0 ||
      (absl::GetFlag(FLAGS_fetchers) == 0 && !absl::GetFlag(FLAGS_signals))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fetchers: must be >= 1, or 0 with --signals; got ", absl::GetFlag(FLAGS_fetchers)));
  }
  if (absl::GetFlag(FLAGS_data_dir).empty()) {
    return absl::InvalidArgumentError("--data_dir: must not be empty");
  }
  return absl::OkStatus();
}

int Demo() {
  MainJobOptions options;
  options.web = WebFromFlags();
  options.cluster = ClusterOptionsFromFlags();
  options.cluster.time_scale = absl::GetFlag(FLAGS_time_scale);
  options.duration = absl::GetFlag(FLAGS_duration);
  options.bandwidth = absl::GetFlag(FLAGS_bandwidth);
  options.fetchers = absl::GetFlag(FLAGS_fetchers);
  options.signals = absl::GetFlag(FLAGS_signals);
  options.signals_to_shards = absl::GetFlag(FLAGS_signals_to_shards);
  options.lookahead = absl::GetFlag(FLAGS_lookahead);
  options.keep_data = absl::GetFlag(FLAGS_keep_data);
  options.lease_only_baseline = absl::GetFlag(FLAGS_lease_only_baseline);
  options.policies = absl::StrSplit(absl::GetFlag(FLAGS_policies), ',');

  StatusPrinter status;
  MainJobObserver observer;
  observer.note = [&](const std::string& text) { status.Note(text); };
  observer.progress = [&](const std::string& policy, const CrawlProgress& p) {
    status.Show(StatusLine(policy, p, options.duration), p.web_time >= options.duration);
  };
  const auto began = std::chrono::steady_clock::now();
  absl::StatusOr<MainJobResult> result = RunMainJob(options, stop_requested, observer);
  if (stop_requested) {
    std::cerr << "\nstopped; the cluster's processes were stopped\n";
    return kExitStopped;
  }
  if (!result.ok()) {
    std::cerr << "\nrecrawl_local: " << result.status() << "\n";
    return 1;
  }
  std::cout << "\nMain job: " << options.web.num_pages << " URLs, " << options.cluster.shards
            << " shards, " << options.duration << " simulated s at R = " << options.bandwidth
            << " (1.5R in the middle third), time scale " << options.cluster.time_scale << ", "
            << options.fetchers << " fetchers, seed " << options.web.seed << "\n\n"
            << SummaryTable(options, *result) << "\nTotal real time: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()
            << " s\n";
  return 0;
}

int Serve() {
  LocalClusterOptions options = ClusterOptionsFromFlags();
  if (absl::GetFlag(FLAGS_ingest)) {
    options.ingest_server = absl::GetFlag(FLAGS_ingest_server);
    // The gateway sends its signals straight to the shards that own them, as
    // the main job's pinger does: on loopback it reaches every shard, and the
    // cluster's token file holds the internal token it needs.
    options.ingest_flags.push_back("--route_to_shards");
  }
  absl::StatusOr<SimulatedWeb> web = SimulatedWeb::Create(WebFromFlags());
  if (!web.ok()) {
    std::cerr << "recrawl_local: " << web.status() << "\n";
    return 1;
  }
  LocalCluster cluster(options);
  if (absl::Status s = cluster.Start(); !s.ok()) {
    std::cerr << "recrawl_local: " << s << "\n";
    return 1;
  }
  // recrawlctl takes its role's token from the cluster's token file.
  const std::string token_file = options.data_dir + "/tokens";
  std::cerr << "loading " << web->num_pages() << " URLs ...\n";
  if (absl::Status s = LoadWeb(cluster, *web, cluster.Now(), stop_requested, [](int64_t) {});
      !s.ok()) {
    std::cerr << "recrawl_local: " << s << "\n";
    cluster.Stop().IgnoreError();
    return stop_requested ? kExitStopped : 1;
  }
  std::cout << "serving: coordinator at " << cluster.coordinator_address() << " (" << options.shards
            << " shards, bandwidth " << options.bandwidth << "/s)\n"
            << "role tokens: " << token_file
            << " (recrawlctl takes its command's role's from it; --role "
            << "chooses another)\n"
            << "try: bazel-bin/client/recrawlctl --target=" << cluster.coordinator_address()
            << " --token_file=" << token_file << " stats\n";
  if (!options.ingest_server.empty()) {
    std::cout << "ingest gateway: http://" << cluster.ingest_address()
              << " (IndexNow, CDN purges; IndexNow keys: bazel-bin/client/recrawlctl --gateway="
              << cluster.ingest_address() << " --token_file=" << token_file
              << " ingest keys list)\n";
  }
  std::cout << "Ctrl-C stops the cluster.\n" << std::flush;
  while (!stop_requested) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  absl::Status stopped = cluster.Stop();
  std::cerr << "stopped: " << stopped << "\n";
  return kExitStopped;
}

}  // namespace
}  // namespace deploy
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recrawl_local [demo|serve] [flags]: the main job on a local cluster, "
      "or the cluster alone (serve)");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  recrawl::services::TurnOffMutexDeadlockDetection();
  const std::string mode = args.size() > 1 ? args[1] : "demo";
  if (args.size() > 2 || (mode != "demo" && mode != "serve")) {
    std::cerr << "usage: recrawl_local [demo|serve] [flags] (--help)\n";
    return 2;
  }
  if (absl::Status s = recrawl::deploy::CheckFlags(); !s.ok()) {
    std::cerr << "recrawl_local: " << s.message() << "\n";
    return 2;
  }
  recrawl::deploy::InstallStopHandlers();
  return mode == "serve" ? recrawl::deploy::Serve() : recrawl::deploy::Demo();
}
