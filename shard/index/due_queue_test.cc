#include "shard/index/due_queue.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <random>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

using Entry = DueQueue::Entry;

TEST(DueQueueTest, PopsOnlyWhatIsDueInKeyOrder) {
  DueQueue q;
  q.Push({3.0, 1, 0});
  q.Push({1.0, 2, 0});
  q.Push({2.0, 3, 0});
  Entry e;
  EXPECT_FALSE(q.PopDue(0.5, &e));
  ASSERT_TRUE(q.PopDue(2.5, &e));
  EXPECT_EQ(e.page, 2u);
  ASSERT_TRUE(q.PopDue(2.5, &e));
  EXPECT_EQ(e.page, 3u);
  EXPECT_FALSE(q.PopDue(2.5, &e));
  EXPECT_EQ(q.size(), 1u);
  ASSERT_NE(q.Next(), nullptr);
  EXPECT_EQ(q.Next()->page, 1u);
}

TEST(DueQueueTest, KeysBelowTheLastSplitPopFirst) {
  DueQueue q;
  q.Push({10.0, 1, 0});
  q.Push({20.0, 2, 0});
  Entry e;
  ASSERT_TRUE(q.PopDue(10.0, &e));
  // Below the key just popped: a bound a signal moved into the past.
  q.Push({4.0, 3, 0});
  q.Push({-1.0, 4, 0});
  ASSERT_TRUE(q.PopDue(0.0, &e));
  EXPECT_EQ(e.page, 4u);
  ASSERT_TRUE(q.PopDue(30.0, &e));
  EXPECT_EQ(e.page, 3u);
  ASSERT_TRUE(q.PopDue(30.0, &e));
  EXPECT_EQ(e.page, 2u);
  EXPECT_TRUE(q.empty());
}

TEST(DueQueueTest, InfiniteAndNegativeKeysKeepTheirOrder) {
  DueQueue q;
  const double inf = std::numeric_limits<double>::infinity();
  q.Push({inf, 1, 0});
  q.Push({-2.5, 2, 0});
  q.Push({0.0, 3, 0});
  q.Push({-0.5, 4, 0});
  Entry e;
  for (PageId want : {2u, 4u, 3u}) {
    ASSERT_TRUE(q.PopDue(1e300, &e));
    EXPECT_EQ(e.page, want);
  }
  EXPECT_FALSE(q.PopDue(1e300, &e));
  ASSERT_TRUE(q.PopDue(inf, &e));
  EXPECT_EQ(e.page, 1u);
}

// Random pushes, pops, clocks that sometimes go back and rewrites, against
// a multimap.
TEST(DueQueueTest, MatchesAnOrderedMapUnderRandomOperations) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    DueQueue q;
    std::multimap<double, PageId> oracle;
    double t = 0.0;
    PageId next_page = 0;
    for (int step = 0; step < 20000; ++step) {
      const double r = u(rng);
      if (r < 0.5) {
        // Mostly ahead of the clock, some behind it, some ties.
        double key = t + (u(rng) < 0.1 ? -u(rng) : 50.0 * u(rng) * u(rng));
        if (u(rng) < 0.05) key = static_cast<double>(static_cast<int>(key));
        q.Push({key, next_page, 0});
        oracle.emplace(key, next_page++);
      } else if (r < 0.97) {
        t += u(rng) < 0.02 ? -2.0 * u(rng) : 0.2 * u(rng);
        Entry e;
        const bool popped = q.PopDue(t, &e);
        const bool due = !oracle.empty() && oracle.begin()->first <= t;
        ASSERT_EQ(popped, due) << "seed " << seed << " step " << step;
        if (!popped) continue;
        ASSERT_EQ(e.key, oracle.begin()->first);
        // Among equal keys any may come first.
        auto range = oracle.equal_range(e.key);
        auto it = range.first;
        while (it != range.second && it->second != e.page) ++it;
        ASSERT_NE(it, range.second) << "popped a page it did not hold";
        oracle.erase(it);
      } else {
        // Drop the odd pages and move the others' keys.
        const double shift = u(rng) - 0.5;
        q.Rewrite([&](Entry* e) {
          if (e->page % 2 == 1) return false;
          e->key += shift;
          return true;
        });
        std::multimap<double, PageId> moved;
        for (const auto& [key, page] : oracle) {
          if (page % 2 == 0) moved.emplace(key + shift, page);
        }
        oracle.swap(moved);
      }
      ASSERT_EQ(q.size(), oracle.size());
      const Entry* next = q.Next();
      if (next != nullptr) {
        ASSERT_FALSE(oracle.empty());
        ASSERT_EQ(next->key, oracle.begin()->first);
      }
    }
  }
}

TEST(DueQueueTest, HoldsAboutSixteenBytesAnEntry) {
  DueQueue q;
  q.Reserve(100000);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 100.0);
  for (PageId i = 0; i < 100000; ++i) q.Push({u(rng), i, 0});
  // Splits and pops move entries between chunks; the slab does not grow.
  Entry e;
  for (int i = 0; i < 50000; ++i) {
    ASSERT_TRUE(q.PopDue(1e9, &e));
    q.Push({e.key + u(rng), e.page, 0});
  }
  EXPECT_LT(q.MemoryBytes(), 100000 * 17);
}

TEST(DueQueueTest, ClearEmptiesIt) {
  DueQueue q;
  for (PageId i = 0; i < 1000; ++i) q.Push({1.0 * i, i, 0});
  Entry e;
  ASSERT_TRUE(q.PopDue(10.0, &e));
  q.Clear();
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.PopDue(1e9, &e));
  EXPECT_EQ(q.Next(), nullptr);
  q.Push({5.0, 1, 0});
  ASSERT_TRUE(q.PopDue(5.0, &e));
  EXPECT_EQ(e.page, 1u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
