// Random parked entries for the tests of parked_heap.h and
// parked_classes.h: pages pushed at rising times, a fifth of them changed
// (their entries stale) right after.
#ifndef RECRAWL_SHARD_INDEX_PARKED_ENTRIES_TESTING_H_
#define RECRAWL_SHARD_INDEX_PARKED_ENTRIES_TESTING_H_

#include <cstdint>
#include <random>
#include <vector>

#include "shard/index/candidate_pool.h"

namespace recrawl {
namespace shard {

struct RandomParkedPages {
  // An entry is live while its page's stamp is its `slot`.
  std::vector<uint32_t> stamps;
  std::vector<CandidatePool::Entry> live;
  double t = 0.0;  // the last push's time
  bool IsLive(const CandidatePool::Entry& e) const { return stamps[e.page] == e.slot; }
};

// Pushes `pages` entries, make(rng, page, t) for pages 0, 1, ... at times
// rising from a random start, into *parked (a ParkedHeap or ParkedClasses).
template <typename Parked, typename Make>
RandomParkedPages PushRandomPages(std::mt19937_64& rng, int pages, Make make, Parked* parked) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  RandomParkedPages r;
  r.stamps.assign(pages, 0);
  auto is_live = [&r](const CandidatePool::Entry& e) { return r.IsLive(e); };
  r.t = 1000.0 * u(rng);
  for (PageId page = 0; page < static_cast<PageId>(pages); ++page) {
    r.t += u(rng);
    CandidatePool::Entry e = make(rng, page, r.t);
    r.stamps[page] = e.slot = page + 1;
    parked->Push(e, r.t, is_live);
    if (u(rng) < 0.2) {
      r.stamps[page] = 0;  // the page changed: its entry is stale
    } else {
      r.live.push_back(e);
    }
  }
  return r;
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_PARKED_ENTRIES_TESTING_H_
