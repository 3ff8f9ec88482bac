// What both servers' Prometheus metrics share: the RPC latency buckets, the
// `code` label (the canonical gRPC status name, e.g. "INVALID_ARGUMENT"),
// and counters that mirror a total kept elsewhere (the cores count; the
// metrics follow at each refresh).
#ifndef RECRAWL_SERVICES_RPC_METRICS_H_
#define RECRAWL_SERVICES_RPC_METRICS_H_

#include <cstdint>
#include <string>

#include "grpcpp/grpcpp.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace recrawl {
namespace services {

// 10 µs to ~10 s. Never destroyed, so that a server thread still running
// an RPC while the process exits does not read a destroyed vector.
const prometheus::Histogram::BucketBoundaries& RpcLatencyBuckets();

// "OK", "CANCELLED", ..., "UNAUTHENTICATED"; a code outside the canonical
// ones as its number.
std::string StatusCodeName(grpc::StatusCode code);

// A Prometheus counter that follows a monotonic total: Set(total) adds what
// it grew by since the last Set. Not thread-safe (one refreshing thread).
class TotalCounter {
 public:
  TotalCounter(prometheus::Registry& registry, const std::string& name, const std::string& help);
  void Set(uint64_t total);

 private:
  prometheus::Counter& counter_;
  uint64_t last_ = 0;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_RPC_METRICS_H_
