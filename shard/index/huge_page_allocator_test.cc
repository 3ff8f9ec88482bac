#include "shard/index/huge_page_allocator.h"

#include <cstdint>
#include <numeric>

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

}  // namespace
}  // namespace shard
}  // namespace recrawl
