// The coordinator under load (docs/benchmarks.md, "Coordinator"): four shard_server processes and a
// coordinator_server on loopback, driven through the client library.
// Measures, each next to a baseline from the same run:
//  (a) leased URLs/s through the coordinator at a bandwidth R that does not
//      limit (baseline: one shard's own Lease RPC, direct);
//  (b) p50/p99 latency of Lease calls of one URL at 1,000 calls/s
//      (baseline: the standard health Check RPC of the same server at the
//      same rate, a bare loopback unary round trip);
//  (c) signals/s through the coordinator with PingClient (baseline: the same
//      PingClient routing straight to the four shards);
//  (d) the most leases in any 1 s window at a moderate R, against R·1 s + 1.
//
//   bazel build -c opt //services:coordinator_benchmark
//   bazel-bin/services/coordinator_benchmark
//       --shard_server=bazel-bin/services/shard_server
//       --coordinator_server=bazel-bin/services/coordinator_server
//
// Clients and servers share the machine's cores.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_support.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "deploy/local_cluster.h"
#include "grpcpp/grpcpp.h"
#include "proto/health.grpc.pb.h"
#include "proto/shard.grpc.pb.h"

ABSL_FLAG(std::string, shard_server, "services/shard_server", "Shard binary");
ABSL_FLAG(std::string, coordinator_server, "services/coordinator_server", "Coordinator binary");
ABSL_FLAG(int, shards, 4, "Shard processes");
ABSL_FLAG(int64_t, urls, 400000, "URLs in the cluster");
ABSL_FLAG(double, seconds, 5.0, "Length of each throughput phase");
ABSL_FLAG(int, fetchers, 2, "Fetcher threads of the lease throughput phase");
ABSL_FLAG(int, lease_batch, 1000, "URLs per Lease call (throughput phase)");
ABSL_FLAG(double, lease_duration, 2.0,
          "Seconds a lease lasts: leased URLs come back after it, so that a "
          "phase does not run out of URLs");
ABSL_FLAG(int, latency_calls, 5000, "Calls of the latency phase");
ABSL_FLAG(double, call_rate, 1000.0, "Calls per second of the latency phase");
ABSL_FLAG(int64_t, signals, 1000000, "Signals of the ingestion phase");
ABSL_FLAG(double, paced_bandwidth, 2000.0, "R of the pacing phase");
ABSL_FLAG(std::string, dir, "", "Working directory (default: a temp dir)");
ABSL_FLAG(std::string, phases, "abcd", "Which measurements to run");

namespace recrawl {
namespace services {
namespace {

using bench::BenchDir;
using bench::Check;
using bench::Clock;
using bench::Percentile;
using bench::Seconds;
using bench::SyntheticUrl;

std::string LoadAverage() {
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  return absl::StrCat(load[0], " ", load[1], " ", load[2]);
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The most of `times` in any window [t, t + width).
int64_t MaxInWindow(std::vector<double> times, double width) {
  std::sort(times.begin(), times.end());
  int64_t best = 0;
  for (size_t lo = 0, hi = 0; hi < times.size(); ++hi) {
    while (times[hi] - times[lo] >= width) ++lo;
    best = std::max<int64_t>(best, hi - lo + 1);
  }
  return best;
}

client::ClientOptions Options(const std::string& target) {
  client::ClientOptions o;
  o.target = target;
  o.max_batch_items = 10000;
  return o;
}

void LoadUrls(const std::string& target, int64_t n) {
  client::AdminClient admin(Options(target));
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double now = UnixNow();
  const Clock::time_point start = Clock::now();
  std::vector<UrlSpec> batch;
  for (int64_t i = 0; i < n; ++i) {
    UrlSpec spec;
    spec.set_url(SyntheticUrl(i));
    spec.set_importance(u(rng));
    spec.set_last_crawl_time(now - 86400 * u(rng));
    batch.push_back(std::move(spec));
    if (batch.size() == 10000 || i + 1 == n) {
      absl::StatusOr<UpsertUrlsResponse> r = admin.UpsertUrls(batch);
      Check(r.status());
      if (r->result().rejected_size() > 0) {
        std::fprintf(stderr, "upsert rejected: %s\n", r->result().rejected(0).message().c_str());
        std::exit(1);
      }
      batch.clear();
    }
  }
  std::printf("load: %lld URLs through the coordinator in %.2f s (%.0fK/s)\n",
              static_cast<long long>(n), Seconds(start), n / Seconds(start) / 1e3);
}

void SetBandwidth(const std::string& target, double r, CoordinatorMode mode) {
  client::AdminClient admin(Options(target));
  Check(admin.SetBandwidth(r, mode).status());
}

// `threads` threads calling `lease(thread)` (which returns the URLs it got)
// for `seconds`; URLs per second.
double LeaseRate(int threads, double seconds, const std::function<int64_t(int thread)>& lease) {
  std::atomic<int64_t> total{0};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      while (Seconds(start) < seconds) total += lease(t);
    });
  }
  for (auto& w : workers) w.join();
  return total / Seconds(start);
}

void LeaseThroughput(const deploy::LocalCluster& cluster) {
  const int threads = absl::GetFlag(FLAGS_fetchers);
  const int batch = absl::GetFlag(FLAGS_lease_batch);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  for (CoordinatorMode mode : {COORDINATOR_MODE_SPLIT_EQUAL, COORDINATOR_MODE_MERGE}) {
    SetBandwidth(cluster.coordinator_address(), 1e6, mode);
    client::FetcherOptions f;
    f.holder = "bench";
    f.lookahead = 1.0;
    std::vector<std::unique_ptr<client::FetcherClient>> fetchers;
    for (int t = 0; t < threads; ++t) {
      fetchers.push_back(
          std::make_unique<client::FetcherClient>(Options(cluster.coordinator_address()), f));
    }
    const double rate = LeaseRate(threads, seconds, [&](int t) {
      absl::StatusOr<FetchLeaseResponse> r = fetchers[t]->LeaseOnce(batch);
      Check(r.status());
      return static_cast<int64_t>(r->leases_size());
    });
    std::printf(
        "(a) leases through the coordinator, %s, R = 1e6, %d "
        "fetchers, batches of %d: %.0fK URLs/s (load %s)\n",
        mode == COORDINATOR_MODE_MERGE ? "merge" : "equal", threads, batch, rate / 1e3,
        LoadAverage().c_str());
  }
  // Baseline: shard 0's Lease RPC, all slots at its now.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto stub = ShardService::NewStub(grpc::CreateCustomChannel(
      cluster.shard_address(0), grpc::InsecureChannelCredentials(), args));
  LeaseRequest request;
  request.set_holder("bench");
  request.set_lease_duration(absl::GetFlag(FLAGS_lease_duration));
  for (int k = 0; k < batch; ++k) request.add_slot_times(0.0);
  const double rate = LeaseRate(threads, seconds, [&](int) {
    grpc::ClientContext context;
    LeaseResponse response;
    const grpc::Status s = stub->Lease(&context, request, &response);
    if (!s.ok()) Check(absl::InternalError(s.error_message()));
    return static_cast<int64_t>(response.leases_size());
  });
  std::printf(
      "(a) baseline: one shard's Lease RPC direct, %d threads, "
      "batches of %d: %.0fK URLs/s (load %s)\n",
      threads, batch, rate / 1e3, LoadAverage().c_str());
}

// Calls `call()` at `rate` per second (open loop: on a fixed schedule)
// `n` times; its latencies in ms.
std::vector<double> PacedLatencies(int n, double rate, const std::function<void()>& call) {
  std::vector<double> ms;
  ms.reserve(n);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(i / rate)));
    const Clock::time_point t = Clock::now();
    call();
    ms.push_back(Seconds(t) * 1e3);
  }
  return ms;
}

void LeaseLatency(const deploy::LocalCluster& cluster) {
  const int n = absl::GetFlag(FLAGS_latency_calls);
  const double rate = absl::GetFlag(FLAGS_call_rate);
  SetBandwidth(cluster.coordinator_address(), 1e6, COORDINATOR_MODE_SPLIT_EQUAL);
  client::FetcherOptions f;
  f.holder = "bench";
  client::FetcherClient fetcher(Options(cluster.coordinator_address()), f);
  int64_t leased = 0;
  const std::vector<double> lease = PacedLatencies(n, rate, [&] {
    absl::StatusOr<FetchLeaseResponse> r = fetcher.LeaseOnce(1);
    Check(r.status());
    leased += r->leases_size();
  });
  const std::string lease_load = LoadAverage();

  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(cluster.coordinator_address(), grpc::InsecureChannelCredentials()));
  const std::vector<double> bare = PacedLatencies(n, rate, [&] {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    health->Check(&context, request, &response);
  });
  std::printf(
      "(b) Lease of 1 URL at %.0f calls/s, %d calls (%lld URLs): "
      "p50 %.3f ms, p99 %.3f ms, max %.3f ms (load %s)\n",
      rate, n, static_cast<long long>(leased), Percentile(lease, 0.5), Percentile(lease, 0.99),
      Percentile(lease, 1.0), lease_load.c_str());
  std::printf(
      "(b) baseline: health Check on the same server at %.0f/s: "
      "p50 %.3f ms, p99 %.3f ms, max %.3f ms (load %s)\n",
      rate, Percentile(bare, 0.5), Percentile(bare, 0.99), Percentile(bare, 1.0),
      LoadAverage().c_str());
}

// Signals on random loaded URLs, each with its own time (so none is a
// duplicate), through `client`; signals per second until all are
// acknowledged.
double SignalRate(client::PingClient* pinger, int64_t urls, int64_t n, double time_base) {
  std::mt19937_64 rng(7);
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    Signal s;
    s.set_url(SyntheticUrl(rng() % urls));
    s.set_time(time_base + i * 1e-6);
    s.set_source(SIGNAL_SOURCE_CDN);
    Check(pinger->Add(std::move(s)));
  }
  Check(pinger->Flush());
  const double rate = n / Seconds(start);
  const client::PingStats stats = pinger->stats();
  std::printf(
      "  (counted %llu, duplicate %llu, stale %llu, unknown %llu, "
      "rejected %llu, retried %llu)\n",
      static_cast<unsigned long long>(stats.counted),
      static_cast<unsigned long long>(stats.duplicate),
      static_cast<unsigned long long>(stats.stale), static_cast<unsigned long long>(stats.unknown),
      static_cast<unsigned long long>(stats.rejected),
      static_cast<unsigned long long>(stats.retried));
  if (stats.rejected > 0) {
    std::printf("  (%llu signals rejected, e.g. %s)\n",
                static_cast<unsigned long long>(stats.rejected),
                pinger->TakeRejected()[0].status.ToString().c_str());
  }
  return rate;
}

void SignalIngestion(const deploy::LocalCluster& cluster) {
  const int64_t urls = absl::GetFlag(FLAGS_urls);
  const int64_t n = absl::GetFlag(FLAGS_signals);
  client::PingOptions ping;
  ping.batch_size = 1000;
  ping.max_in_flight = 8;
  // Signal times a little in the past, distinct between the two runs.
  const double base = UnixNow() - 60;
  const client::ClientOptions options = Options(cluster.coordinator_address());
  auto through = client::PingClient::Create(options, ping);
  Check(through.status());
  const double rate = SignalRate(through->get(), urls, n, base);
  std::printf(
      "(c) signals through the coordinator, batches of 1000, 8 in "
      "flight: %.0fK/s (load %s)\n",
      rate / 1e3, LoadAverage().c_str());
  ping.route_to_shards = true;
  auto direct = client::PingClient::Create(options, ping);
  Check(direct.status());
  const double direct_rate = SignalRate(direct->get(), urls, n, base - 30);
  std::printf(
      "(c) baseline: the same client routing straight to the %d "
      "shards: %.0fK/s (load %s)\n",
      (*direct)->routed_shards(), direct_rate / 1e3, LoadAverage().c_str());
}

void Pacing(const deploy::LocalCluster& cluster) {
  const double r = absl::GetFlag(FLAGS_paced_bandwidth);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  SetBandwidth(cluster.coordinator_address(), r, COORDINATOR_MODE_SPLIT_EQUAL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  client::FetcherOptions f;
  f.holder = "bench";
  const int threads = absl::GetFlag(FLAGS_fetchers);
  std::vector<std::thread> workers;
  std::mutex mu;
  std::vector<double> slot_times, receipt_times;
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      client::FetcherClient fetcher(Options(cluster.coordinator_address()), f);
      while (Seconds(start) < seconds) {
        absl::StatusOr<FetchLeaseResponse> resp = fetcher.LeaseOnce(100);
        Check(resp.status());
        const double now = UnixNow();
        std::lock_guard<std::mutex> lock(mu);
        for (const CoordinatorLease& l : resp->leases()) {
          slot_times.push_back(l.slot_time());
          receipt_times.push_back(now);
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double elapsed = Seconds(start);
  {
    std::vector<double> sorted = slot_times;
    std::sort(sorted.begin(), sorted.end());
    int64_t same = 0;
    double min_gap = 1e9;
    for (size_t i = 1; i < sorted.size(); ++i) {
      const double gap = sorted[i] - sorted[i - 1];
      if (gap == 0.0) ++same;
      min_gap = std::min(min_gap, gap);
    }
    std::printf(
        "  slot times: %lld repeated, smallest gap %.6f s (1/R = "
        "%.6f s)\n",
        static_cast<long long>(same), min_gap, 1.0 / r);
  }
  std::printf(
      "(d) R = %.0f, %d fetchers leasing up to 100 for %.1f s: "
      "%zu URLs (%.1f/s); most in any 1 s window: %lld by slot time, "
      "%lld by receipt; bound R·1 s + 1 = %.0f (load %s)\n",
      r, threads, elapsed, slot_times.size(), slot_times.size() / elapsed,
      static_cast<long long>(MaxInWindow(slot_times, 1.0)),
      static_cast<long long>(MaxInWindow(receipt_times, 1.0)), r + 1, LoadAverage().c_str());
}

void Run() {
  const std::string dir = BenchDir(absl::GetFlag(FLAGS_dir), "recrawl_coordinator_bench");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::printf("load average at start: %s\n", LoadAverage().c_str());
  deploy::LocalClusterOptions options;
  options.data_dir = dir;
  options.shard_server = absl::GetFlag(FLAGS_shard_server);
  options.coordinator_server = absl::GetFlag(FLAGS_coordinator_server);
  options.shards = absl::GetFlag(FLAGS_shards);
  options.bandwidth = 1e6;
  options.mode = "equal";
  options.tokens = false;  // the baselines call the servers bare
  options.shard_flags = {"--block_cache_mb=8", "--max_batch_items=10000"};
  options.coordinator_flags = {
      "--max_lease_batch=10000", "--max_lookahead=1",
      absl::StrCat("--lease_duration=", absl::GetFlag(FLAGS_lease_duration))};
  deploy::LocalCluster cluster(options);
  Check(cluster.Start());
  LoadUrls(cluster.coordinator_address(), absl::GetFlag(FLAGS_urls));
  const std::string phases = absl::GetFlag(FLAGS_phases);
  if (phases.find('a') != std::string::npos) LeaseThroughput(cluster);
  if (phases.find('b') != std::string::npos) LeaseLatency(cluster);
  if (phases.find('c') != std::string::npos) SignalIngestion(cluster);
  if (phases.find('d') != std::string::npos) Pacing(cluster);
  Check(cluster.Stop());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace services
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  recrawl::services::Run();
  return 0;
}
