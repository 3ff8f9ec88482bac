// A shard server's Prometheus metrics: per-RPC counts and latencies, items
// by fate, and gauges and counters from the core's stats (refreshed by the
// server). Not thread-safe but Rpc and Items (prometheus-cpp's own locks).
#ifndef RECRAWL_SERVICES_SHARD_METRICS_H_
#define RECRAWL_SERVICES_SHARD_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "proto/shard.pb.h"
#include "services/rpc_metrics.h"

namespace recrawl {
namespace services {

class ShardMetrics {
 public:
  ShardMetrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // One finished RPC (a stream counts once, at its end).
  void Rpc(const std::string& method, grpc::StatusCode code, double seconds);
  // Items of batch requests by what became of them, e.g.
  // Items("signals", "counted", 250).
  void Items(const std::string& kind, const std::string& fate, uint64_t n);
  void Update(const ShardStats& stats, uint64_t memory_bytes);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& rpcs_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& items_;
  prometheus::Gauge& urls_;
  prometheus::Gauge& hosts_;
  prometheus::Gauge& leases_in_flight_;
  prometheus::Gauge& crawl_value_level_;
  prometheus::Gauge& urls_learning_;
  TotalCounter rejected_fits_;
  TotalCounter probe_leases_;
  prometheus::Gauge& memory_;
  TotalCounter leases_;
  TotalCounter expired_leases_;
  TotalCounter released_leases_;
  TotalCounter peeked_leases_;
  prometheus::Gauge& index_candidates_;
  TotalCounter index_rebuilds_;
  TotalCounter index_raises_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_METRICS_H_
