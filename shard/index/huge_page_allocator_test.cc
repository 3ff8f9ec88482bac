#include "shard/index/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

TEST(HugePageAllocatorTest, LargeArraysAreAlignedAndCountedInSmallPages) {
  HugePageVector<uint64_t> v(3 * kHugePageBytes / sizeof(uint64_t) + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(AllocatedBytes(v), 3 * kHugePageBytes + kSmallPageBytes);
  std::iota(v.begin(), v.end(), uint64_t{0});
  EXPECT_EQ(v.back(), v.size() - 1);
  // Growing copies into a new mapping and unmaps the old one.
  v.resize(2 * v.size());
  EXPECT_EQ(v[12345], 12345u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
}

TEST(HugePageAllocatorTest, SmallArraysComeFromTheHeap) {
  HugePageVector<int> v(1000, 7);
  EXPECT_EQ(AllocatedBytes(v), v.capacity() * sizeof(int));
  EXPECT_EQ(v[999], 7);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(AllocatedBytes(v), 0u);
}

// Whole pages of `r` in memory (mincore).
size_t ResidentPages(MemoryRange r) {
  const MemoryRange pages = WholePages(r);
  std::vector<unsigned char> resident(pages.bytes / kSmallPageBytes);
  if (mincore(pages.begin, pages.bytes, resident.data()) != 0) return ~size_t{0};
  size_t n = 0;
  for (unsigned char c : resident) n += c & 1;
  return n;
}

TEST(HugePageAllocatorTest, SpareCapacityIsPopulatedAheadAndReleasedAfter) {
  HugePageVector<uint64_t> v;
  v.reserve(4 * kHugePageBytes / sizeof(uint64_t));
  v.resize(1000, 7);
  const MemoryRange spare = SpareCapacity(v);
  EXPECT_EQ(spare.begin, reinterpret_cast<char*>(v.data() + 1000));
  EXPECT_EQ(spare.bytes, 4 * kHugePageBytes - 1000 * sizeof(uint64_t));
  const size_t pages = WholePages(spare).bytes / kSmallPageBytes;
  ASSERT_GT(pages, 0u);
  EXPECT_LT(ResidentPages(spare), pages);  // address space only
  // Populated in two ranges' turns (the same array, halves), as a load's
  // tables are.
  const MemoryRange first = {spare.begin, spare.bytes / 2};
  const MemoryRange second = {spare.begin + spare.bytes / 2, spare.bytes - spare.bytes / 2};
  if (!PopulateInTurn({first, second}, 8)) {
    GTEST_SKIP() << "the kernel does not populate (MADV_POPULATE_WRITE is Linux 5.14 on)";
  }
  EXPECT_EQ(ResidentPages(spare), pages);
  v.resize(v.capacity(), 3);  // the populated memory is the array's
  EXPECT_EQ(v[999], 7u);
  EXPECT_EQ(v.back(), 3u);
  v.resize(1000);
  // What is spare is given back; the elements stay.
  Release(SpareCapacity(v));
  EXPECT_EQ(ResidentPages(SpareCapacity(v)), 0u);
  EXPECT_EQ(v[999], 7u);
  EXPECT_EQ(AllocatedBytes(v), kHugePageBytes);
  // Released pages read as zeros when written again.
  v.resize(2000);
  EXPECT_EQ(v[1999], 0u);
}

TEST(HugePageAllocatorTest, SmallArraysHaveNoSpareRange) {
  HugePageVector<int> v;
  v.reserve(100);
  EXPECT_EQ(SpareCapacity(v).bytes, 0u);
  PopulateInTurn({SpareCapacity(v)}, 4);  // nothing to do
  Release(SpareCapacity(v));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
