#include "sim/simulator.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace recrawl {
namespace sim {

CrawlLog RunScheduler(const Realization& world, int num_pages, Scheduler& scheduler) {
  // Per page: index of the first change after now, and its value at the last
  // crawl, so "changed since the last crawl" is one comparison.
  std::vector<int64_t> next_change(world.change_begin.begin(), world.change_begin.end() - 1);
  std::vector<int64_t> next_change_at_crawl = next_change;
  std::vector<std::pair<int32_t, double>> crawls;
  crawls.reserve(world.slot_times.size());
  for (size_t j = 0; j < world.slot_times.size(); ++j) {
    const double t = world.slot_times[j];
    for (int64_t k = world.signal_begin[j]; k < world.signal_begin[j + 1]; ++k) {
      scheduler.OnSignal(world.signal_page[k], world.signal_time[k]);
    }
    const int page = scheduler.Next(t);
    if (page == Scheduler::kIdle) continue;
    int64_t& next = next_change[page];
    const int64_t end = world.change_begin[page + 1];
    while (next < end && world.change_times[next] <= t) ++next;
    const bool changed = next != next_change_at_crawl[page];
    next_change_at_crawl[page] = next;
    scheduler.OnCrawl(page, t, changed);
    crawls.emplace_back(page, t);
  }
  // Bucket the crawls by page (counting sort keeps each page's times in order).
  CrawlLog log;
  log.crawl_begin.assign(num_pages + 1, 0);
  for (const auto& c : crawls) ++log.crawl_begin[c.first + 1];
  for (int i = 0; i < num_pages; ++i) log.crawl_begin[i + 1] += log.crawl_begin[i];
  log.crawl_times.resize(crawls.size());
  std::vector<int64_t> fill(log.crawl_begin.begin(), log.crawl_begin.end() - 1);
  for (const auto& c : crawls) log.crawl_times[fill[c.first]++] = c.second;
  return log;
}

}  // namespace sim
}  // namespace recrawl
