#include "services/shard_metrics.h"

#include <utility>

#include "services/rpc_metrics.h"

namespace recrawl {
namespace services {
namespace {

prometheus::Gauge& NewGauge(prometheus::Registry& registry, const std::string& name,
                            const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
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
      leases_in_flight_(NewGauge(*registry_, "recrawl_shard_leases_in_flight", "Active leases")),
      crawl_value_level_(NewGauge(*registry_, "recrawl_shard_crawl_value_level",
                                  "Crawl value of the latest lease (the level Lambda)")),
      urls_learning_(NewGauge(*registry_, "recrawl_shard_urls_learning",
                              "URLs whose estimate rests on crawl outcomes")),
      rejected_fits_(*registry_, "recrawl_shard_rejected_fits_total",
                     "Estimates or outcomes rejected"),
      probe_leases_(*registry_, "recrawl_shard_probe_leases_total", "Leases given to probe crawls"),
      memory_(NewGauge(*registry_, "recrawl_shard_memory_bytes",
                       "Bytes of the core's in-memory tables")),
      leases_(*registry_, "recrawl_shard_leases_total", "Leases granted"),
      expired_leases_(*registry_, "recrawl_shard_expired_leases_total", "Leases that expired"),
      released_leases_(*registry_, "recrawl_shard_released_leases_total",
                       "Active leases ended by ReleaseLeases"),
      peeked_leases_(*registry_, "recrawl_shard_peeked_leases_total",
                     "Leases granted to a named peek's candidates"),
      index_candidates_(NewGauge(*registry_, "recrawl_shard_index_candidates",
                                 "Pages at or above the level Lambda")),
      index_rebuilds_(*registry_, "recrawl_shard_index_rebuilds_total", "O(URLs) index re-levels"),
      index_raises_(*registry_, "recrawl_shard_index_raises_total", "Raises of the level Lambda") {}

void ShardMetrics::Rpc(const std::string& method, grpc::StatusCode code, double seconds) {
  rpcs_.Add({{"method", method}, {"code", StatusCodeName(code)}}).Increment();
  latency_.Add({{"method", method}}, RpcLatencyBuckets()).Observe(seconds);
}

void ShardMetrics::Items(const std::string& kind, const std::string& fate, uint64_t n) {
  if (n == 0) return;
  items_.Add({{"kind", kind}, {"fate", fate}}).Increment(static_cast<double>(n));
}

void ShardMetrics::Update(const ShardStats& stats, uint64_t memory_bytes) {
  urls_.Set(static_cast<double>(stats.urls()));
  hosts_.Set(static_cast<double>(stats.hosts()));
  leases_in_flight_.Set(static_cast<double>(stats.leases_in_flight()));
  crawl_value_level_.Set(stats.crawl_value_level());
  urls_learning_.Set(static_cast<double>(stats.estimator().urls_learning()));
  rejected_fits_.Set(stats.estimator().rejected_fits());
  probe_leases_.Set(stats.estimator().probe_leases_total());
  memory_.Set(static_cast<double>(memory_bytes));
  leases_.Set(stats.leases_total());
  expired_leases_.Set(stats.expired_leases_total());
  released_leases_.Set(stats.released_leases_total());
  peeked_leases_.Set(stats.peeked_leases_total());
  index_candidates_.Set(static_cast<double>(stats.index().candidates()));
  index_rebuilds_.Set(stats.index().rebuilds());
  index_raises_.Set(stats.index().raises());
}

}  // namespace services
}  // namespace recrawl
