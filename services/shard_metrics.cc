#include "services/shard_metrics.h"

#include <utility>

namespace recrawl {
namespace services {
namespace {

prometheus::Gauge& NewGauge(prometheus::Registry& registry,
                            const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {});
}

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    default:
      return std::to_string(static_cast<int>(code));
  }
}

}  // namespace

ShardMetrics::ShardMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      rpcs_(prometheus::BuildCounter()
                .Name("recrawl_shard_rpcs_total")
                .Help("Finished RPCs by method and status code")
                .Register(*registry_)),
      latency_(prometheus::BuildHistogram()
                   .Name("recrawl_shard_rpc_seconds")
                   .Help("RPC handling time (streams: per batch)")
                   .Register(*registry_)),
      items_(prometheus::BuildCounter()
                 .Name("recrawl_shard_items_total")
                 .Help("Items of batch requests by kind and fate")
                 .Register(*registry_)),
      urls_(NewGauge(*registry_, "recrawl_shard_urls", "URLs held")),
      hosts_(NewGauge(*registry_, "recrawl_shard_hosts", "Politeness hosts")),
      leases_in_flight_(NewGauge(*registry_, "recrawl_shard_leases_in_flight",
                                 "Active leases")),
      level_(NewGauge(*registry_, "recrawl_shard_crawl_value_level",
                      "Crawl value of the latest lease (the level Lambda)")),
      urls_learning_(NewGauge(*registry_, "recrawl_shard_urls_learning",
                              "URLs whose estimate rests on crawl outcomes")),
      rejected_fits_(NewGauge(*registry_, "recrawl_shard_rejected_fits",
                              "Estimates or outcomes rejected since start")),
      probe_leases_(NewGauge(*registry_, "recrawl_shard_probe_leases",
                             "Leases given to probe crawls since start")),
      memory_(NewGauge(*registry_, "recrawl_shard_memory_bytes",
                       "Bytes of the core's in-memory tables")),
      expired_leases_(NewGauge(*registry_, "recrawl_shard_expired_leases",
                               "Leases that expired since start")),
      index_candidates_(NewGauge(*registry_, "recrawl_shard_index_candidates",
                                 "Pages at or above the level Lambda")),
      index_rebuilds_(NewGauge(*registry_, "recrawl_shard_index_rebuilds",
                               "O(URLs) index re-levels since start")),
      index_raises_(NewGauge(*registry_, "recrawl_shard_index_raises",
                             "Raises of the level Lambda since start")) {}

void ShardMetrics::Rpc(const std::string& method, grpc::StatusCode code,
                       double seconds) {
  rpcs_.Add({{"method", method}, {"code", CodeName(code)}}).Increment();
  // 10 µs to ~10 s.
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10};
  latency_.Add({{"method", method}}, kBuckets).Observe(seconds);
}

void ShardMetrics::Items(const std::string& kind, const std::string& fate,
                         uint64_t n) {
  if (n == 0) return;
  items_.Add({{"kind", kind}, {"fate", fate}})
      .Increment(static_cast<double>(n));
}

void ShardMetrics::Update(const ShardStats& stats, uint64_t memory_bytes) {
  urls_.Set(static_cast<double>(stats.urls()));
  hosts_.Set(static_cast<double>(stats.hosts()));
  leases_in_flight_.Set(static_cast<double>(stats.leases_in_flight()));
  level_.Set(stats.crawl_value_level());
  urls_learning_.Set(static_cast<double>(stats.estimator().urls_learning()));
  rejected_fits_.Set(static_cast<double>(stats.estimator().rejected_fits()));
  probe_leases_.Set(static_cast<double>(stats.estimator().probe_leases_total()));
  memory_.Set(static_cast<double>(memory_bytes));
  expired_leases_.Set(static_cast<double>(stats.expired_leases_total()));
  index_candidates_.Set(static_cast<double>(stats.index().candidates()));
  index_rebuilds_.Set(static_cast<double>(stats.index().rebuilds()));
  index_raises_.Set(static_cast<double>(stats.index().raises()));
}

}  // namespace services
}  // namespace recrawl
