#include "shard/peek_log.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

std::vector<PageId> Pages(const std::vector<PeekLog::Pick>& picks) {
  std::vector<PageId> pages;
  for (const PeekLog::Pick& p : picks) pages.push_back(p.page);
  return pages;
}

TEST(PeekLogTest, TakesAPeeksPicksOnceInOrder) {
  PeekLog log(/*first_id=*/100);
  const uint64_t a = log.Begin();
  log.Add({3, 33, 0.0, 3.0});
  log.Add({1, 11, 0.0, 1.0});
  const uint64_t b = log.Begin();
  log.Add({2, 22, 0.0, 2.0});
  EXPECT_EQ(a, 100u);
  EXPECT_EQ(b, 101u);
  std::vector<PeekLog::Pick> picks;
  ASSERT_TRUE(log.Take(a, &picks));
  EXPECT_EQ(Pages(picks), std::vector<PageId>({3, 1}));
  EXPECT_EQ(picks[0].url, 33u);
  EXPECT_EQ(picks[0].value, 3.0);
  EXPECT_FALSE(log.Take(a, &picks));  // once
  EXPECT_TRUE(picks.empty());
  ASSERT_TRUE(log.Take(b, &picks));
  EXPECT_EQ(Pages(picks), std::vector<PageId>({2}));
}

TEST(PeekLogTest, ForgetsTheOldestWhenFullAndNeverNamesZero) {
  PeekLog log(/*first_id=*/0);
  const uint64_t first = log.Begin();
  EXPECT_EQ(first, 1u);
  log.Add({7, 77, 0.0, 7.0});
  for (size_t i = 0; i < PeekLog::kMaxPeeks; ++i) log.Begin();
  std::vector<PeekLog::Pick> picks;
  EXPECT_FALSE(log.Take(first, &picks));
  EXPECT_FALSE(log.Take(0, &picks));
  EXPECT_FALSE(log.Take(first + 2 * PeekLog::kMaxPeeks, &picks));  // not made yet
  EXPECT_TRUE(log.Take(first + PeekLog::kMaxPeeks, &picks));       // the last one made
}

TEST(PeekLogTest, IdsWrapPastZero) {
  PeekLog log(/*first_id=*/UINT64_MAX);
  EXPECT_EQ(log.Begin(), UINT64_MAX);
  EXPECT_EQ(log.Begin(), 1u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
