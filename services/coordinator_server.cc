// recrawl_coordinator: the cluster's front door as a gRPC server.
//
//   coordinator_server --shards=10.0.0.1:50051,10.0.0.2:50051 --num_shards=2
//       --bandwidth=100 --mode=merge --port=50050 --metrics_port=9100
//   coordinator_server --shards_dns=recrawl-shards.default.svc:50051 ...
//
// Serves CoordinatorService (proto/coordinator.proto), the standard gRPC
// health service (SERVING while at least one shard is live) and server
// reflection; Prometheus metrics on --metrics_port. It keeps no durable
// state: shards are found by address and place themselves by the index
// they report. With --token_file every call needs a role token
// (services/auth.h) and the coordinator calls the shards with the file's
// first internal token. SIGTERM or SIGINT: report NOT_SERVING, stop
// accepting calls and let the ones in flight finish (up to
// --drain_seconds).
//
// Times: slot times, --grace and --max_lookahead are in cluster-clock
// seconds (scaled with --time_scale, as the shards' clock);
// --health_period, --failure_timeout, --shard_deadline and
// --shard_batch_deadline are real seconds.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/credentials.h"
#include "cluster/routing.h"
#include "coordinator/coordinator.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/exposer.h"
#include "services/auth_flags.h"
#include "services/clock.h"
#include "services/clock_flags.h"
#include "services/coordinator_metrics.h"
#include "services/coordinator_service.h"
#include "services/coordinator_shards.h"
#include "services/parse_errors.h"
#include "services/server_lifecycle.h"
#include "services/shard_tls_flags.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, shards, "", "Comma-separated shard addresses host:port");
ABSL_FLAG(std::string, shards_dns, "",
          "name:port whose A records are the shards (e.g. a Kubernetes headless "
          "service); resolved again at every health check");
ABSL_FLAG(int, num_shards, 1, "Number of shards of the cluster (each shard must agree)");
ABSL_FLAG(double, bandwidth, 10.0, "R: crawls per second (cluster-clock seconds)");
ABSL_FLAG(std::string, mode, "merge", "merge, equal or adaptive");
ABSL_FLAG(std::string, routing, "site",
          "How URLs are routed to shards: site (by registrable domain) or host "
          "(clusters whose stores were made before site routing); the shards' "
          "stores must agree");
ABSL_FLAG(int, max_lease_batch, 1000, "Most URLs one Lease call may ask for");
ABSL_FLAG(double, max_lookahead, 1.0, "How far ahead slots may be leased, clock seconds");
ABSL_FLAG(double, grace, 0.25, "A slot no fetcher takes within this many clock seconds is dropped");
ABSL_FLAG(double, health_period, 0.25, "Real seconds between shard health checks");
ABSL_FLAG(double, failure_timeout, 1.5,
          "A shard without a successful health check for this many real seconds is out");
ABSL_FLAG(double, shard_deadline, 0.25,
          "Real seconds a shard has to answer a call on a request's path");
ABSL_FLAG(double, shard_batch_deadline, 5.0,
          "Real seconds a shard has to answer a batch write (reports, upserts, deletes, "
          "politeness, policy); a call that runs out of time fails for that request only");
ABSL_FLAG(double, rebalance_period, 1.0, "Real seconds between adaptive budget steps");
ABSL_FLAG(double, lease_duration, 0.0, "Lease duration the shards give (0: theirs)");
ABSL_FLAG(int, max_batch_items, 10000, "Items allowed per batch request");
ABSL_FLAG(int64_t, max_held_reports, 1000000,
          "Crawl reports held in memory for shards that are out");
ABSL_FLAG(int64_t, routing_cache_hosts, 262144,
          "Hosts whose owning shard routing remembers (~60 bytes each plus the name); "
          "ClusterStats.routing_hosts_computed counts the others");
ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on");
ABSL_FLAG(int, port, 50050, "gRPC port (0: any free port, see --port_file)");
ABSL_FLAG(int, metrics_port, -1, "Prometheus metrics port (-1: none; 0: any free port)");
ABSL_FLAG(std::string, port_file, "", "Write \"<grpc port> <metrics port>\" here once serving");
ABSL_FLAG(double, drain_seconds, 5.0, "On SIGTERM, how long calls in flight may take");

namespace recrawl {
namespace services {
namespace {

absl::StatusOr<coordinator::Mode> ParseMode(const std::string& name) {
  if (name == "merge") return coordinator::Mode::kMerge;
  if (name == "equal") return coordinator::Mode::kSplitEqual;
  if (name == "adaptive") return coordinator::Mode::kSplitAdaptive;
  return absl::InvalidArgumentError(
      absl::StrCat("--mode: must be merge, equal or adaptive, not \"", name, "\""));
}

// The shard addresses: --shards as given, or --shards_dns's A records.
std::vector<std::string> ShardAddresses() {
  std::vector<std::string> out;
  const std::string list = absl::GetFlag(FLAGS_shards);
  if (!list.empty()) {
    for (absl::string_view a : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      out.emplace_back(a);
    }
    return out;
  }
  const std::string dns = absl::GetFlag(FLAGS_shards_dns);
  const size_t colon = dns.rfind(':');
  const std::string name = dns.substr(0, colon);
  const std::string port = dns.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (const int err = getaddrinfo(name.c_str(), port.c_str(), &hints, &result); err != 0) {
    spdlog::warn("resolving {}: {}", dns, gai_strerror(err));
    return out;
  }
  std::set<std::string> unique;
  for (addrinfo* a = result; a != nullptr; a = a->ai_next) {
    char ip[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)) != nullptr) {
      unique.insert(absl::StrCat(ip, ":", port));
    }
  }
  freeaddrinfo(result);
  return std::vector<std::string>(unique.begin(), unique.end());
}

int Main() {
  const sigset_t stop_signals = BlockStopSignals();

  if (absl::GetFlag(FLAGS_shards).empty() == absl::GetFlag(FLAGS_shards_dns).empty()) {
    spdlog::error("give exactly one of --shards and --shards_dns");
    return 2;
  }
  if (const std::string dns = absl::GetFlag(FLAGS_shards_dns);
      !dns.empty() && dns.rfind(':') == std::string::npos) {
    spdlog::error("--shards_dns: must be name:port, got \"{}\"", dns);
    return 2;
  }
  absl::StatusOr<Clock> scaled_clock = ClockFromFlags();
  if (!scaled_clock.ok()) {
    spdlog::error("{}", scaled_clock.status().ToString());
    return 2;
  }
  const Clock clock = *scaled_clock;
  absl::StatusOr<coordinator::Mode> mode = ParseMode(absl::GetFlag(FLAGS_mode));
  if (!mode.ok()) {
    spdlog::error("{}", std::string(mode.status().message()));
    return 2;
  }
  absl::StatusOr<cluster::Routing> routing = cluster::ParseRouting(absl::GetFlag(FLAGS_routing));
  if (!routing.ok()) {
    spdlog::error("--{}", std::string(routing.status().message()));
    return 2;
  }
  coordinator::CoordinatorOptions options;
  options.num_shards = absl::GetFlag(FLAGS_num_shards);
  options.directory.routing = std::string(cluster::RoutingName(*routing));
  options.bandwidth = absl::GetFlag(FLAGS_bandwidth);
  options.mode = *mode;
  options.pacer.grace = absl::GetFlag(FLAGS_grace);
  options.pacer.max_lookahead = absl::GetFlag(FLAGS_max_lookahead);
  // The directory and the rebalancing run on the cluster clock.
  options.directory.failure_timeout = absl::GetFlag(FLAGS_failure_timeout) * clock.scale();
  options.rebalance_period = absl::GetFlag(FLAGS_rebalance_period) * clock.scale();
  if (absl::Status s = coordinator::Coordinator::Validate(options); !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 2;
  }
  CoordinatorServiceOptions service_options;
  service_options.routing = *routing;
  service_options.max_lease_batch = absl::GetFlag(FLAGS_max_lease_batch);
  service_options.max_batch_items = absl::GetFlag(FLAGS_max_batch_items);
  service_options.shard_deadline = absl::GetFlag(FLAGS_shard_deadline);
  service_options.shard_batch_deadline = absl::GetFlag(FLAGS_shard_batch_deadline);
  service_options.probe_deadline =
      std::min(absl::GetFlag(FLAGS_failure_timeout) / 2, 2 * absl::GetFlag(FLAGS_health_period));
  service_options.lease_duration = absl::GetFlag(FLAGS_lease_duration);
  service_options.max_held_reports =
      static_cast<size_t>(std::max<int64_t>(absl::GetFlag(FLAGS_max_held_reports), 0));
  service_options.routing_cache_hosts =
      static_cast<size_t>(std::max<int64_t>(absl::GetFlag(FLAGS_routing_cache_hosts), 0));
  if (service_options.max_lease_batch < 1 || service_options.max_batch_items < 1 ||
      service_options.routing_cache_hosts < 1 || !(service_options.shard_deadline > 0.0) ||
      !(service_options.shard_batch_deadline > 0.0) ||
      !(absl::GetFlag(FLAGS_health_period) > 0.0)) {
    spdlog::error(
        "--max_lease_batch, --max_batch_items and --routing_cache_hosts must be >= 1, "
        "--shard_deadline, --shard_batch_deadline and --health_period > 0");
    return 2;
  }

  absl::StatusOr<ServerSecurity> security = ServerSecurityFromFlags();
  if (!security.ok()) {
    spdlog::error("{}", security.status().ToString());
    return 2;
  }
  const std::string shard_token = security->tokens.TokenOf(cluster::Role::kInternal);
  if (security->authorizer.enabled() && shard_token.empty()) {
    spdlog::warn("--token_file has no internal token: calls to the shards carry none");
  }
  absl::StatusOr<ShardTls> shard_tls = ShardTlsFromFlags();
  if (!shard_tls.ok()) {
    spdlog::error("{}", std::string(shard_tls.status().message()));
    return 2;
  }

  coordinator::Coordinator core(options, clock.Now());
  ShardChannels channels(shard_tls->credentials, shard_tls->options, shard_token);
  CoordinatorMetrics metrics;
  CoordinatorServiceImpl service(&core, &clock, &channels, &security->authorizer, &metrics,
                                 service_options);

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
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  InstallProtobufLogHandler();
  // The parse errors' first: the metrics count the status it sends.
  interceptors.push_back(ParseErrorInterceptor());
  interceptors.push_back(metrics.Interceptor());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    spdlog::error("cannot listen on {}:{}", absl::GetFlag(FLAGS_host), absl::GetFlag(FLAGS_port));
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(false);

  // Health checks until shutdown; the first before announcing the port, so
  // that a client started after the port file finds the live shards.
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  auto check = [&] {
    const int live = service.Probe(ShardAddresses());
    server->GetHealthCheckService()->SetServingStatus(live > 0);
  };
  check();
  spdlog::info("coordinator of {} shards serving on port {} (metrics: {}), R = {}/s, mode {}",
               options.num_shards, port, metrics_port, options.bandwidth,
               absl::GetFlag(FLAGS_mode));
  WritePortFile(absl::GetFlag(FLAGS_port_file), port, metrics_port);
  std::thread checker([&] {
    const auto period = std::chrono::duration<double>(absl::GetFlag(FLAGS_health_period));
    std::unique_lock<std::mutex> lock(done_mu);
    while (!done_cv.wait_for(lock, period, [&] { return done; })) {
      lock.unlock();
      check();
      lock.lock();
    }
  });

  std::thread stopper([&] {
    const int sig = WaitForStopSignal(stop_signals);
    spdlog::info("signal {}: draining", sig);
    {
      std::lock_guard<std::mutex> lock(done_mu);
      done = true;
    }
    done_cv.notify_all();
    server->GetHealthCheckService()->SetServingStatus(false);
    server->Shutdown(DeadlineAfter(absl::GetFlag(FLAGS_drain_seconds)));
  });
  server->Wait();
  stopper.join();
  checker.join();
  const ClusterStats stats = service.Stats();
  if (stats.pending_reports() > 0) {
    spdlog::warn("stopping with {} held reports undelivered (shards out)", stats.pending_reports());
  }
  server.reset();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace services
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recrawl coordinator: paces crawl slots at R across the shards, routes URLs, "
      "signals and reports to their shards");
  absl::ParseCommandLine(argc, argv);
  recrawl::services::TurnOffMutexDeadlockDetection();
  return recrawl::services::Main();
}
