// What a run achieved (main paper Sec. 6.2; Kolobov et al. Eqs. 5, 16): the
// share of requests served fresh, the harmonic and binary staleness costs of
// the requests, per-page crawl counts, and crawls that found no change.
#ifndef RECRAWL_SIM_METRICS_H_
#define RECRAWL_SIM_METRICS_H_

#include <cstdint>
#include <vector>

#include "sim/world.h"

namespace recrawl {
namespace sim {

struct RunMetrics {
  int64_t requests = 0;
  int64_t fresh_requests = 0;
  // Σ over requests of H(N), N = changes since the page's last crawl before
  // the request and H(N) = 1 + 1/2 + ... + 1/N (Kolobov's harmonic penalty).
  double harmonic_cost_sum = 0.0;
  int64_t crawls = 0;
  int64_t wasted_crawls = 0;         // crawls of a page unchanged since its last crawl
  std::vector<int64_t> page_crawls;  // per page

  double accuracy() const {
    return requests > 0 ? static_cast<double>(fresh_requests) / requests : 0.0;
  }
  double binary_cost() const { return 1.0 - accuracy(); }  // share served stale
  double harmonic_cost() const { return requests > 0 ? harmonic_cost_sum / requests : 0.0; }
  double wasted_share() const {
    return crawls > 0 ? static_cast<double>(wasted_crawls) / crawls : 0.0;
  }
  // Page i's empirical crawl rate: crawls / horizon.
  double PageRate(int page, double horizon) const { return page_crawls[page] / horizon; }
};

// Crawl log of one run: crawl_times[crawl_begin[i] .. crawl_begin[i+1]) are
// page i's crawl times, increasing (t = 0 is implicit).
struct CrawlLog {
  std::vector<int64_t> crawl_begin;
  std::vector<double> crawl_times;
};

// Scores the crawl log against the realization. Requests are Poisson(μ_i)
// on (from, horizon], drawn from their own stream (seed, instance_number), so
// every policy run on the instance meets the same requests. A request at s is
// fresh iff no change fell in (c, s], c = the last crawl at or before s.
RunMetrics Evaluate(const Instance& instance, const Realization& world, const CrawlLog& log,
                    uint64_t seed, uint64_t instance_number, double from = 0.0);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_METRICS_H_
