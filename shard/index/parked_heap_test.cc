#include "shard/index/parked_heap.h"

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "shard/index/candidate_pool.h"
#include "shard/index/parked_entries_testing.h"

namespace recrawl {
namespace shard {
namespace {

using Entry = CandidatePool::Entry;
constexpr double kInf = std::numeric_limits<double>::infinity();

Entry RandomEntry(std::mt19937_64& rng, PageId page, double t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Entry e;
  e.at = t - 5.0 * u(rng);
  e.value = 100.0 * u(rng);
  e.base = e.value * (1.0 + 0.1 * u(rng));
  e.slope = CandidatePool::CeilFloat(u(rng) * (u(rng) < 0.1 ? 50.0 : 1.0));
  e.rise = CandidatePool::CeilFloat(u(rng));
  e.later_slope = CandidatePool::CeilFloat(e.slope + 2.0 * u(rng));
  e.page = page;
  e.tag = 0;
  e.slot = page;  // its stamp: live while it matches
  return e;
}

// At every later time the top's bound is at least every live entry's
// growth bound, and popping gives the entries in the order of their keys:
// each popped entry's growth bound is at most the bound of the top before
// it (so a search may stop at the first top that cannot beat its best).
TEST(ParkedHeapTest, TopBoundsEveryEntryAtLaterTimes) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int round = 0; round < 200; ++round) {
    ParkedHeap heap;
    const RandomParkedPages r = PushRandomPages(rng, 300, RandomEntry, &heap);
    const std::vector<Entry>& live = r.live;
    const double t = r.t;
    auto is_live = [&r](const Entry& e) { return r.IsLive(e); };
    for (const Entry& e : live) EXPECT_GE(heap.slope(), e.later_slope);
    const double later = t + 100.0 * u(rng);
    ASSERT_TRUE(heap.DropStaleTop(is_live));
    double previous = heap.TopBound(later);
    for (const Entry& e : live) {
      EXPECT_GE(previous, CandidatePool::GrowthBound(e, later)) << "round " << round;
    }
    size_t popped = 0;
    while (heap.DropStaleTop(is_live)) {
      const double bound = heap.TopBound(later);
      EXPECT_LE(bound, previous);
      const Entry e = heap.PopTop();
      EXPECT_GE(bound, CandidatePool::GrowthBound(e, later));
      previous = bound;
      ++popped;
    }
    EXPECT_EQ(popped, live.size());
  }
}

// An entry without a finite bound keys first; the others keep their order.
TEST(ParkedHeapTest, UnboundedEntryComesFirst) {
  std::mt19937_64 rng(4);
  ParkedHeap heap;
  auto is_live = [](const Entry&) { return true; };
  for (PageId page = 0; page < 10; ++page) heap.Push(RandomEntry(rng, page, 10.0), 10.0, is_live);
  Entry voided = RandomEntry(rng, 10, 10.0);
  voided.base = kInf;
  heap.Push(voided, 10.0, is_live);
  EXPECT_EQ(heap.TopBound(11.0), kInf);
  EXPECT_EQ(heap.PopTop().page, 10u);
  EXPECT_LT(heap.TopBound(11.0), kInf);
}

// Stale entries are dropped by compactions as the heap grows: a host whose
// pages are parked over and over keeps about its live entries.
TEST(ParkedHeapTest, CompactionsKeepStaleEntriesBounded) {
  std::mt19937_64 rng(5);
  ParkedHeap heap;
  std::vector<uint32_t> stamps(50, 0);
  auto is_live = [&](const Entry& e) { return stamps[e.page] == e.slot; };
  uint32_t stamp = 0;
  double t = 0.0;
  for (int i = 0; i < 100000; ++i) {
    t += 0.01;
    Entry e = RandomEntry(rng, static_cast<PageId>(i % 50), t);
    e.later_slope = 1.0f;  // no re-key for a larger slope
    e.slope = std::min(e.slope, e.later_slope);
    stamps[e.page] = e.slot = ++stamp;
    heap.Push(e, t, is_live);
    EXPECT_LE(heap.size(), 2 * 50 + 16u);
  }
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
