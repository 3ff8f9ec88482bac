// Accuracy as a function of time (main paper App. D, Fig. 12: "the accuracy
// ... is computed on the last 1000 crawl events for every time step"): the
// share of the requests that arrived while the last W crawls were made that
// found a fresh copy.
#ifndef RECRAWL_SIM_WINDOWED_ACCURACY_H_
#define RECRAWL_SIM_WINDOWED_ACCURACY_H_

#include <cstdint>
#include <vector>

#include "sim/metrics.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

// Every request of a run, in time order, and whether it was served fresh:
// the same requests (stream (seed, instance_number)) and the same rule as
// Evaluate (metrics.h), so the totals agree with its requests and
// fresh_requests.
struct RequestTimeline {
  std::vector<double> times;          // increasing
  std::vector<int64_t> fresh_before;  // [k]: fresh among the first k requests
};

RequestTimeline CollectRequests(const Instance& instance, const Realization& world,
                                const CrawlLog& log, uint64_t seed, uint64_t instance_number);

// For each time t in `at`: the share of fresh requests in (s, t], where s is
// the time of the W-th most recent crawl at or before t (W = window_crawls),
// or 0 while fewer than W crawls have been made. NaN when that interval holds
// no request. `crawl_times` are all crawl times of the run, increasing.
std::vector<double> AccuracyOverLastCrawls(const RequestTimeline& requests,
                                           const std::vector<double>& crawl_times,
                                           int window_crawls, const std::vector<double>& at);

// All crawl times of a log, increasing.
std::vector<double> SortedCrawlTimes(const CrawlLog& log);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_WINDOWED_ACCURACY_H_
