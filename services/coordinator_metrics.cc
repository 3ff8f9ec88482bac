#include "services/coordinator_metrics.h"

#include <chrono>
#include <utility>

#include "services/rpc_metrics.h"

namespace recrawl {
namespace services {
namespace {

prometheus::Gauge& Gauge(prometheus::Registry& registry, const std::string& name,
                         const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

// Times one RPC from its start to the status it sends.
class RpcInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcInterceptor(CoordinatorMetrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->Rpc(
          method_, methods->GetSendStatus().error_code(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }
    methods->Proceed();
  }

 private:
  CoordinatorMetrics* const metrics_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
};

class RpcInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcInterceptorFactory(CoordinatorMetrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // "/recrawl.CoordinatorService/Lease" → "Lease".
    const std::string full = info->method() != nullptr ? info->method() : "";
    return new RpcInterceptor(metrics_, full.substr(full.rfind('/') + 1));
  }

 private:
  CoordinatorMetrics* const metrics_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
CoordinatorMetrics::Interceptor() {
  return std::make_unique<RpcInterceptorFactory>(this);
}

CoordinatorMetrics::CoordinatorMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      rpcs_(prometheus::BuildCounter()
                .Name("recrawl_coordinator_rpcs_total")
                .Help("Finished RPCs by method and gRPC status code (number)")
                .Register(*registry_)),
      latency_(prometheus::BuildHistogram()
                   .Name("recrawl_coordinator_rpc_seconds")
                   .Help("RPC handling time, shard calls included")
                   .Register(*registry_)),
      bandwidth_(Gauge(*registry_, "recrawl_coordinator_bandwidth", "R, crawls per second")),
      live_shards_(Gauge(*registry_, "recrawl_coordinator_live_shards", "Shards answering")),
      slots_handed_out_(*registry_, "recrawl_coordinator_slots_handed_out_total",
                        "Slots handed out"),
      slots_dropped_(*registry_, "recrawl_coordinator_slots_dropped_total",
                     "Slots no fetcher took within the grace"),
      pending_reports_(Gauge(*registry_, "recrawl_coordinator_pending_reports",
                             "Crawl reports held for shards that are out")),
      leases_delivered_(*registry_, "recrawl_coordinator_leases_delivered_total",
                        "Leases handed to fetchers"),
      lease_requests_abandoned_(*registry_, "recrawl_coordinator_lease_requests_abandoned_total",
                                "Lease calls to shards given up on (their grants are released)"),
      leases_undelivered_(*registry_, "recrawl_coordinator_leases_undelivered_total",
                          "Leases granted whose fetcher's call had ended (released)"),
      leases_released_(*registry_, "recrawl_coordinator_leases_released_total",
                       "Leases the shards ended on the coordinator's releases"),
      pending_lease_releases_(Gauge(*registry_, "recrawl_coordinator_pending_lease_releases",
                                    "Lease requests and leases still to release at their shards")),
      routing_hosts_computed_(*registry_, "recrawl_coordinator_routing_hosts_computed_total",
                              "Hosts whose owning shard routing computed rather than remembered") {}

void CoordinatorMetrics::Rpc(const std::string& method, grpc::StatusCode code, double seconds) {
  rpcs_.Add({{"method", method}, {"code", StatusCodeName(code)}}).Increment();
  latency_.Add({{"method", method}}, RpcLatencyBuckets()).Observe(seconds);
}

void CoordinatorMetrics::Update(const ClusterStats& stats) {
  bandwidth_.Set(stats.bandwidth());
  live_shards_.Set(stats.live_shards());
  slots_handed_out_.Set(stats.slots_handed_out());
  slots_dropped_.Set(stats.slots_dropped());
  pending_reports_.Set(static_cast<double>(stats.pending_reports()));
  leases_delivered_.Set(stats.leases_delivered());
  lease_requests_abandoned_.Set(stats.lease_requests_abandoned());
  leases_undelivered_.Set(stats.leases_undelivered());
  leases_released_.Set(stats.leases_released());
  pending_lease_releases_.Set(static_cast<double>(stats.pending_lease_releases()));
  routing_hosts_computed_.Set(stats.routing_hosts_computed());
}

}  // namespace services
}  // namespace recrawl
