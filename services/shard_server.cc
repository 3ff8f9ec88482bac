// recrawl_shard: one shard of recrawl as a gRPC server.
//
//   shard_server --data_dir=/var/lib/recrawl/shard0 --port=50051
//       --metrics_port=9100 --shard_index=0 --num_shards=1
//
// Serves ShardService (proto/shard.proto), the standard gRPC health service
// and server reflection; Prometheus metrics on --metrics_port. With
// --token_file every ShardService call needs a token of role internal;
// --tls_cert/--tls_key serve TLS (services/auth.h). SIGTERM or
// SIGINT: report NOT_SERVING, stop accepting calls, let the ones in flight
// finish (up to --drain_seconds), flush the store and close it.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "policy/crawl_policy.h"
#include "prometheus/exposer.h"
#include "services/auth_flags.h"
#include "services/clock.h"
#include "services/clock_flags.h"
#include "services/parse_errors.h"
#include "services/server_lifecycle.h"
#include "services/shard_metrics.h"
#include "services/shard_service.h"
#include "shard/malloc_options.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, data_dir, "", "Directory of the shard's RocksDB store");
ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on");
ABSL_FLAG(int, port, 50051, "gRPC port (0: any free port, see --port_file)");
ABSL_FLAG(int, metrics_port, -1, "Prometheus metrics port (-1: none; 0: any free port)");
ABSL_FLAG(std::string, port_file, "", "Write \"<grpc port> <metrics port>\" here once serving");
ABSL_FLAG(uint32_t, shard_index, 0, "This shard's index");
ABSL_FLAG(uint32_t, num_shards, 1, "Number of shards");
ABSL_FLAG(std::string, routing, "",
          "How a new store routes URLs: site (by registrable domain, the "
          "default) or host; a store keeps its own, and a different one "
          "given here is refused");
ABSL_FLAG(bool, sync, false, "fsync every write (survives a machine crash)");
ABSL_FLAG(std::string, policy, "",
          "Crawl value: greedy, greedy_cis, greedy_ncis or approxJ; replaces "
          "the store's setting (empty: the store's, greedy_ncis if new)");
ABSL_FLAG(double, t_delay, -1.0,
          "Seconds after a crawl within which signals are dropped (main paper "
          "App. C); replaces the store's setting (< 0: the store's, 0 if new)");
ABSL_FLAG(bool, register_unknown_urls, false,
          "Register URLs first seen in a signal (else count and skip them)");
ABSL_FLAG(double, default_change_rate, 1.0 / 86400, "Δ of URLs upserted without one, per second");
ABSL_FLAG(double, default_recall, 0.5, "λ of URLs upserted without one");
ABSL_FLAG(double, default_false_rate, 0.1 / 86400, "ν of URLs upserted without one, per second");
ABSL_FLAG(double, default_importance, 1.0, "μ of URLs registered by a signal");
ABSL_FLAG(double, max_clock_skew, 300.0, "Seconds a client's time may be ahead of the shard's");
ABSL_FLAG(bool, clamp_future_times, false,
          "Take times beyond the skew as now instead of rejecting them");
ABSL_FLAG(double, lease_duration, 600.0, "Default lease duration, seconds");
ABSL_FLAG(double, failure_backoff, 60.0,
          "Seconds a URL is held back after a failed fetch (doubling)");
ABSL_FLAG(int, max_batch_items, 10000, "Items allowed per batch request");
ABSL_FLAG(bool, pool_host_priors, true,
          "Give a URL with the default prior its host's prior, learnt from the host's crawls "
          "pooled (4 bytes a host, and ~100 more a host with crawl outcomes on two pages or "
          "more; --nopool_host_priors: each URL learns from its own prior alone; docs/design.md, "
          "\"Host pooling\")");
ABSL_FLAG(double, trusted_source_share, 0.5,
          "Rank a host's pages by the signal sources whose log-odds per signal is at least this "
          "share of its best source's, once its crawls show it (0: every source; docs/"
          "operations.md, \"Per-source trust\")");
ABSL_FLAG(double, joint_signal_window, 60.0,
          "Signals of different sources for one URL whose times lie within this many seconds "
          "are taken as one change's, in learning per-source trust and in ranking by the "
          "trusted sources (0: never; docs/operations.md, \"Per-source trust\")");
ABSL_FLAG(int, block_cache_mb, 64, "RocksDB block cache, MiB");
ABSL_FLAG(int, write_buffer_kb, 0,
          "Memtable size of the URL records and of the journal, KiB "
          "each (0: 16 MiB and 64 MiB); memory grows with writes by up to "
          "about both before they are flushed");
ABSL_FLAG(double, drain_seconds, 5.0,
          "On SIGTERM, how long calls in flight may take to finish (gRPC "
          "also waits this long for connected clients to go away)");

namespace recrawl {
namespace services {
namespace {

absl::StatusOr<shard::ShardOptions> OptionsFromFlags() {
  shard::ShardOptions o;
  o.shard_index = absl::GetFlag(FLAGS_shard_index);
  o.num_shards = absl::GetFlag(FLAGS_num_shards);
  if (const std::string name = absl::GetFlag(FLAGS_routing); !name.empty()) {
    absl::StatusOr<cluster::Routing> routing = cluster::ParseRouting(name);
    if (!routing.ok()) return routing.status();
    o.routing = *routing;
  }
  const std::string policy_name = absl::GetFlag(FLAGS_policy);
  if (!policy_name.empty()) {
    absl::StatusOr<policy::CrawlPolicy> policy = policy::CrawlPolicy::Parse(policy_name);
    if (!policy.ok()) return policy.status();
    o.policy = *policy;
  }
  o.t_delay = std::max(absl::GetFlag(FLAGS_t_delay), 0.0);
  o.override_policy = !policy_name.empty();
  o.override_t_delay = absl::GetFlag(FLAGS_t_delay) >= 0.0;
  o.default_change_rate = absl::GetFlag(FLAGS_default_change_rate);
  o.default_recall = absl::GetFlag(FLAGS_default_recall);
  o.default_false_rate = absl::GetFlag(FLAGS_default_false_rate);
  o.default_importance = absl::GetFlag(FLAGS_default_importance);
  o.register_unknown_urls = absl::GetFlag(FLAGS_register_unknown_urls);
  o.max_clock_skew = absl::GetFlag(FLAGS_max_clock_skew);
  o.clamp_future_times = absl::GetFlag(FLAGS_clamp_future_times);
  o.default_lease_duration = absl::GetFlag(FLAGS_lease_duration);
  o.failure_backoff = absl::GetFlag(FLAGS_failure_backoff);
  o.max_batch_items = absl::GetFlag(FLAGS_max_batch_items);
  o.sync_writes = absl::GetFlag(FLAGS_sync);
  o.trusted_source_share = absl::GetFlag(FLAGS_trusted_source_share);
  o.pool_host_priors = absl::GetFlag(FLAGS_pool_host_priors);
  o.joint_signal_window = absl::GetFlag(FLAGS_joint_signal_window);
  if (o.max_batch_items < 1) {
    return absl::InvalidArgumentError("--max_batch_items must be >= 1");
  }
  if (!(o.trusted_source_share >= 0.0 && o.trusted_source_share <= 1.0)) {
    return absl::InvalidArgumentError("--trusted_source_share must be in [0, 1]");
  }
  if (!(o.joint_signal_window >= 0.0 && std::isfinite(o.joint_signal_window))) {
    return absl::InvalidArgumentError("--joint_signal_window must be a finite number >= 0");
  }
  return o;
}

int Main() {
  const sigset_t stop_signals = BlockStopSignals();

  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty()) {
    spdlog::error("--data_dir is required");
    return 2;
  }
  absl::StatusOr<shard::ShardOptions> options = OptionsFromFlags();
  if (!options.ok()) {
    spdlog::error("{}", options.status().ToString());
    return 2;
  }
  absl::StatusOr<Clock> scaled_clock = ClockFromFlags();
  if (!scaled_clock.ok()) {
    spdlog::error("{}", scaled_clock.status().ToString());
    return 2;
  }
  const Clock clock = *scaled_clock;
  absl::StatusOr<ServerSecurity> security = ServerSecurityFromFlags();
  if (!security.ok()) {
    spdlog::error("{}", security.status().ToString());
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  shard::UrlStoreOptions store_options;
  store_options.block_cache_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_block_cache_mb)) << 20;
  // The shard turns them on once it serves.
  store_options.defer_compactions = true;
  if (const int kb = absl::GetFlag(FLAGS_write_buffer_kb); kb < 0) {
    spdlog::error("--write_buffer_kb must be >= 0, got {}", kb);
    return 2;
  } else if (kb > 0) {
    store_options.write_buffer_bytes = static_cast<size_t>(kb) << 10;
    store_options.meta_write_buffer_bytes = static_cast<size_t>(kb) << 10;
  }
  absl::StatusOr<std::unique_ptr<shard::UrlStore>> store =
      shard::UrlStore::Open(data_dir, store_options);
  if (!store.ok()) {
    spdlog::error("{}", store.status().ToString());
    return 1;
  }
  const double store_open_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  absl::StatusOr<std::unique_ptr<shard::Shard>> core =
      shard::Shard::Open(*std::move(store), *options, clock.Now());
  if (!core.ok()) {
    spdlog::error("{}", core.status().ToString());
    return 1;
  }
  const shard::StartupReport& report = (*core)->startup();
  spdlog::info(
      "loaded {} URLs, {} hosts, {} active leases, {} holds in {:.3f} s "
      "(store open {:.3f} s, hosts {:.3f} s, URL scan + load {:.3f} s, journal replay {:.3f} s, "
      "index build {:.3f} s, index level {:.3f} s; {} malformed records skipped, {} orphan "
      "patches)",
      report.urls, report.hosts, report.leases, report.holds,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      store_open_seconds, report.hosts_seconds, report.load_seconds, report.replay_seconds,
      report.index_seconds, report.level_seconds, report.malformed, report.orphans);
  for (const std::string& e : report.errors) spdlog::warn("skipped: {}", e);

  ShardMetrics metrics;
  ShardServiceImpl service(core->get(), &clock, &security->authorizer, &metrics);

  std::unique_ptr<prometheus::Exposer> exposer;
  int metrics_port = -1;
  if (absl::GetFlag(FLAGS_metrics_port) >= 0) {
    exposer = std::make_unique<prometheus::Exposer>(
        absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_metrics_port)));
    exposer->RegisterCollectable(metrics.registry());
    metrics_port = exposer->GetListeningPorts().at(0);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  AddListeningAddress(absl::GetFlag(FLAGS_host), absl::GetFlag(FLAGS_port), security->credentials,
                      &builder, &port);
  // Batches of max_batch_items URLs of up to 2 KiB each.
  builder.SetMaxReceiveMessageSize(64 << 20);
  InstallProtobufLogHandler();
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(ParseErrorInterceptor());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  if (security->authorizer.enabled()) {
    builder.RegisterService(&service);
  } else {
    builder.RegisterService(&service);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {}:{}", absl::GetFlag(FLAGS_host), absl::GetFlag(FLAGS_port));
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  spdlog::info(
      "serving shard {} of {} on port {} (metrics: {}), {:.3f} s "
      "after start",
      options->shard_index, options->num_shards, port, metrics_port,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  WritePortFile(absl::GetFlag(FLAGS_port_file), port, metrics_port);

  // Gauges every second until shutdown.
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  std::thread refresher([&] {
    std::unique_lock<std::mutex> lock(done_mu);
    while (!done_cv.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
      lock.unlock();
      service.RefreshMetrics();
      lock.lock();
    }
  });

  std::thread stopper([&] {
    const int sig = WaitForStopSignal(stop_signals);
    spdlog::info("signal {}: draining", sig);
    server->GetHealthCheckService()->SetServingStatus(false);
    server->Shutdown(DeadlineAfter(absl::GetFlag(FLAGS_drain_seconds)));
  });
  server->Wait();
  stopper.join();
  {
    std::lock_guard<std::mutex> lock(done_mu);
    done = true;
  }
  done_cv.notify_all();
  refresher.join();

  if (absl::Status s = service.Flush(); !s.ok()) {
    spdlog::error("flushing the store: {}", s.ToString());
  }
  server.reset();
  core->reset();  // closes RocksDB
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace services
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recrawl shard server: serves ShardService for the URLs of one shard");
  absl::ParseCommandLine(argc, argv);
  recrawl::services::TurnOffMutexDeadlockDetection();
  recrawl::shard::SetShardMallocOptions();
  return recrawl::services::Main();
}
