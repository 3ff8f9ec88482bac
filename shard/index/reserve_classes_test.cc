#include "shard/index/reserve_classes.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

// Each entry's bound holds from its time on: value + slope (t' − t) is at
// most the class's bound at t'.
TEST(ReserveClassesTest, BoundsEveryEntryFromItsTimeOn) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  struct Added {
    double t, value, slope;
  };
  for (int seed = 0; seed < 50; ++seed) {
    ReserveClasses reserve;
    reserve.Start(100.0);
    std::vector<Added> added;
    // Half in bulk (ordered once), half one by one after.
    for (PageId id = 0; id < 200; ++id) {
      const double t = 100.0 + 50.0 * u(rng);
      const double slope = id % 17 == 0 ? 0.0 : std::exp(8.0 * u(rng) - 4.0);
      added.push_back({t, 100.0 * u(rng), slope});
      reserve.Add(id, t, added.back().value, slope);
      if (id == 99) reserve.Order();
    }
    const double at = 200.0 + 100.0 * u(rng);
    // Popped in order of their bounds at `at`, each at least the true
    // growth line of its page there, and never rising from pop to pop.
    double previous = INFINITY;
    size_t popped = 0;
    while (!reserve.empty()) {
      const int c = reserve.TopClass(at);
      ASSERT_GE(c, 0);
      const double bound = reserve.TopBound(at);
      const ReserveClasses::Entry e = reserve.Pop(c);
      const Added& a = added[e.page];
      EXPECT_GE(bound, a.value + a.slope * (at - a.t)) << "page " << e.page;
      EXPECT_LE(bound, previous);
      previous = bound;
      ++popped;
    }
    EXPECT_EQ(popped, added.size());
    EXPECT_EQ(reserve.TopClass(at), -1);
  }
}

// A class's rate is its quarter-octave's upper edge: a slow page is not
// bounded at the rate of a fast one.
TEST(ReserveClassesTest, SlowPagesGrowAtTheirOwnRate) {
  ReserveClasses reserve;
  reserve.Start(0.0);
  reserve.Add(1, 0.0, 10.0, 0.01);  // slow, on top at t = 0
  reserve.Add(2, 0.0, 5.0, 1.0);    // fast
  reserve.Order();
  EXPECT_EQ(reserve.Top(reserve.TopClass(0.0))->page, 1u);
  // At t = 100 the slow one is bounded by ≤ 10 + 1.19·0.01·100, the fast
  // one by ≥ 5 + 100: the fast one's class is on top.
  EXPECT_EQ(reserve.Top(reserve.TopClass(100.0))->page, 2u);
  EXPECT_LT(reserve.TopBound(100.0), 5.0 + 1.2 * 100.0);
}

TEST(ReserveClassesTest, ClearFreesItsStorage) {
  ReserveClasses reserve;
  reserve.Start(0.0);
  for (PageId id = 0; id < 1000; ++id) reserve.Add(id, 0.0, id, 0.5);
  reserve.Order();
  EXPECT_GE(reserve.MemoryBytes(), 1000 * sizeof(ReserveClasses::Entry));
  reserve.Clear();
  EXPECT_TRUE(reserve.empty());
  EXPECT_EQ(reserve.MemoryBytes(), 0u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
