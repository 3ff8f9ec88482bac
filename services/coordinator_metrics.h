// The coordinator's Prometheus metrics: per-RPC counts and latencies
// (recorded by a server interceptor for every RPC), and gauges of the
// cluster state (refreshed by the server's health loop).
#ifndef RECRAWL_SERVICES_COORDINATOR_METRICS_H_
#define RECRAWL_SERVICES_COORDINATOR_METRICS_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "proto/coordinator.pb.h"
#include "services/rpc_metrics.h"

namespace recrawl {
namespace services {

class CoordinatorMetrics {
 public:
  CoordinatorMetrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // One finished RPC (a stream counts once, at its end).
  void Rpc(const std::string& method, grpc::StatusCode code, double seconds);
  void Update(const ClusterStats& stats);

  // For ServerBuilder::experimental().SetInterceptorCreators: records every
  // RPC of the server (by the last part of its method name) with Rpc().
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Interceptor();

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& rpcs_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Gauge& bandwidth_;
  prometheus::Gauge& live_shards_;
  TotalCounter slots_handed_out_;
  TotalCounter slots_dropped_;
  prometheus::Gauge& pending_reports_;
  TotalCounter leases_delivered_;
  TotalCounter lease_requests_abandoned_;
  TotalCounter leases_undelivered_;
  TotalCounter leases_released_;
  prometheus::Gauge& pending_lease_releases_;
  TotalCounter routing_hosts_computed_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_COORDINATOR_METRICS_H_
