#include "sim/windowed_accuracy.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "sim/rng.h"

namespace recrawl {
namespace sim {

RequestTimeline CollectRequests(const Instance& instance, const Realization& world,
                                const CrawlLog& log, uint64_t seed, uint64_t instance_number) {
  std::vector<std::pair<double, bool>> all;
  const int m = static_cast<int>(instance.pages.size());
  for (int i = 0; i < m; ++i) {
    const double mu = instance.pages[i].importance;
    if (mu <= 0) continue;
    const double* changes = world.change_times.data() + world.change_begin[i];
    const int64_t num_changes = world.change_begin[i + 1] - world.change_begin[i];
    const double* crawls = log.crawl_times.data() + log.crawl_begin[i];
    const int64_t num_crawls = log.crawl_begin[i + 1] - log.crawl_begin[i];
    // A request at s is fresh iff no change fell in (c, s], c = the page's
    // last crawl at or before s (t = 0 counts as a crawl).
    Rng requests(seed, instance_number, i, Stream::kRequests);
    int64_t crawl_idx = 0, change_idx = 0;
    for (double s = requests.Exponential(mu); s <= world.horizon; s += requests.Exponential(mu)) {
      while (crawl_idx < num_crawls && crawls[crawl_idx] <= s) ++crawl_idx;
      const double last_crawl = crawl_idx > 0 ? crawls[crawl_idx - 1] : 0.0;
      while (change_idx < num_changes && changes[change_idx] <= last_crawl) ++change_idx;
      const bool fresh = change_idx == num_changes || changes[change_idx] > s;
      all.emplace_back(s, fresh);
    }
  }
  std::sort(all.begin(), all.end());
  RequestTimeline out;
  out.times.reserve(all.size());
  out.fresh_before.reserve(all.size() + 1);
  out.fresh_before.push_back(0);
  for (const auto& [s, fresh] : all) {
    out.times.push_back(s);
    out.fresh_before.push_back(out.fresh_before.back() + (fresh ? 1 : 0));
  }
  return out;
}

std::vector<double> AccuracyOverLastCrawls(const RequestTimeline& requests,
                                           const std::vector<double>& crawl_times,
                                           int window_crawls, const std::vector<double>& at) {
  std::vector<double> out;
  out.reserve(at.size());
  const auto& times = requests.times;
  for (double t : at) {
    const int64_t crawls =
        std::upper_bound(crawl_times.begin(), crawl_times.end(), t) - crawl_times.begin();
    const double from = crawls >= window_crawls ? crawl_times[crawls - window_crawls] : 0.0;
    const int64_t lo = std::upper_bound(times.begin(), times.end(), from) - times.begin();
    const int64_t hi = std::upper_bound(times.begin(), times.end(), t) - times.begin();
    out.push_back(hi > lo
                      ? static_cast<double>(requests.fresh_before[hi] - requests.fresh_before[lo]) /
                            (hi - lo)
                      : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

std::vector<double> SortedCrawlTimes(const CrawlLog& log) {
  std::vector<double> out = log.crawl_times;
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sim
}  // namespace recrawl
