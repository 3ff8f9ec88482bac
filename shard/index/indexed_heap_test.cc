#include "shard/index/indexed_heap.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

struct Ignore {
  void operator()(int, uint32_t) const {}
};
using Heap = IndexedHeap<int, std::greater<int>, Ignore>;

// A heap that drains while it still gains an entry now and then (a class of
// the candidate pool as signals move its entries to other classes) gives
// memory back without copying itself every few calls: three erasures to a
// push, from 10^5 entries down, copies each entry O(1) times. With a
// shrink to the size at twice the size, the next push copied them all
// again (as in a shard's signals on 10^5 candidates alike: 20K signals a
// second against 560K).
TEST(IndexedHeapTest, DrainingWithPushesCopiesAmortisedO1) {
  Heap heap{std::greater<int>(), Ignore()};
  std::mt19937_64 rng(1);
  constexpr int kEntries = 100000;
  for (int i = 0; i < kEntries; ++i) heap.Push(static_cast<int>(rng() % 1000000));
  const uint64_t before = heap.copies();
  uint64_t calls = 0;
  while (heap.size() > 1000) {
    for (int j = 0; j < 3; ++j) {
      heap.Erase(static_cast<uint32_t>(rng() % heap.size()));
      heap.ReleaseSlack(2);
      ++calls;
    }
    heap.Push(static_cast<int>(rng() % 1000000));
    heap.ReleaseSlack(2);
    ++calls;
  }
  const uint64_t copies = heap.copies() - before;
  std::printf("%llu calls draining %d entries to 1000: %llu copied, capacity %zu\n",
              static_cast<unsigned long long>(calls), kEntries,
              static_cast<unsigned long long>(copies), heap.capacity());
  EXPECT_LE(copies, 2 * calls);
  EXPECT_LE(heap.capacity(), 4u * heap.size() + 2);
}

TEST(IndexedHeapTest, AnEmptiedHeapGivesBackAll) {
  Heap heap{std::greater<int>(), Ignore()};
  for (int i = 0; i < 1000; ++i) heap.Push(i);
  while (!heap.empty()) {
    heap.Erase(0);
    heap.ReleaseSlack(4);
  }
  EXPECT_EQ(heap.capacity(), 0u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
