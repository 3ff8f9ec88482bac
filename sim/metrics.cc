#include "sim/metrics.h"

#include <algorithm>

#include "sim/rng.h"

namespace recrawl {
namespace sim {

RunMetrics Evaluate(const Instance& instance, const Realization& world, const CrawlLog& log,
                    uint64_t seed, uint64_t instance_number, double from) {
  RunMetrics out;
  const int m = static_cast<int>(instance.pages.size());
  out.page_crawls.assign(m, 0);
  std::vector<double> harmonic = {0.0};  // H(n), grown on demand
  for (int i = 0; i < m; ++i) {
    const double* changes = world.change_times.data() + world.change_begin[i];
    const int64_t num_changes = world.change_begin[i + 1] - world.change_begin[i];
    const double* crawls = log.crawl_times.data() + log.crawl_begin[i];
    const int64_t num_crawls = log.crawl_begin[i + 1] - log.crawl_begin[i];
    out.page_crawls[i] = num_crawls;
    out.crawls += num_crawls;

    // Changes up to time x: index of the first change > x.
    int64_t changes_seen = 0;
    auto changes_upto = [&](double x) {
      while (changes_seen < num_changes && changes[changes_seen] <= x) ++changes_seen;
      return changes_seen;
    };
    // Wasted crawls: no change since the previous crawl.
    {
      int64_t before = 0;
      int64_t k = 0;
      for (int64_t c = 0; c < num_crawls; ++c) {
        while (k < num_changes && changes[k] <= crawls[c]) ++k;
        if (k == before) ++out.wasted_crawls;
        before = k;
      }
    }

    const double mu = instance.pages[i].importance;
    if (mu <= 0) continue;
    Rng requests(seed, instance_number, i, Stream::kRequests);
    int64_t crawl_idx = 0;         // crawls at or before the request
    int64_t changes_at_crawl = 0;  // changes up to the last crawl
    for (double s = requests.Exponential(mu); s <= world.horizon; s += requests.Exponential(mu)) {
      while (crawl_idx < num_crawls && crawls[crawl_idx] <= s) {
        changes_at_crawl = changes_upto(crawls[crawl_idx]);
        ++crawl_idx;
      }
      const int64_t n = changes_upto(s) - changes_at_crawl;
      if (s <= from) continue;
      ++out.requests;
      if (n == 0) ++out.fresh_requests;
      while (static_cast<int64_t>(harmonic.size()) <= n) {
        harmonic.push_back(harmonic.back() + 1.0 / harmonic.size());
      }
      out.harmonic_cost_sum += harmonic[n];
    }
  }
  return out;
}

}  // namespace sim
}  // namespace recrawl
