#include "shard/lease_table.h"

#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

TEST(LeaseTableTest, GrantFindRelease) {
  LeaseTable t;
  t.Grant(7, /*page=*/3, "fetcher-a", /*deadline=*/100.0);
  ASSERT_NE(t.Find(7), nullptr);
  EXPECT_EQ(t.Find(7)->page, 3u);
  EXPECT_EQ(t.Find(7)->holder, "fetcher-a");
  EXPECT_TRUE(t.Find(7)->active);
  EXPECT_EQ(t.OfPage(3), t.Find(7));
  EXPECT_EQ(t.active(), 1u);
  EXPECT_TRUE(t.Release(3));
  EXPECT_EQ(t.Find(7), nullptr);
  EXPECT_EQ(t.OfPage(3), nullptr);
  EXPECT_EQ(t.active(), 0u);
  EXPECT_FALSE(t.Release(3));
}

TEST(LeaseTableTest, ExpiredLeasesStayFindableUntilSuperseded) {
  LeaseTable t;
  t.Grant(1, 10, "a", 50.0);
  t.Grant(2, 11, "a", 60.0);
  std::vector<PageId> expired;
  t.Expire(49.0, &expired);
  EXPECT_TRUE(expired.empty());
  t.Expire(55.0, &expired);
  EXPECT_EQ(expired, std::vector<PageId>({10}));
  EXPECT_EQ(t.active(), 1u);
  // A late report may still name lease 1 ...
  ASSERT_NE(t.Find(1), nullptr);
  EXPECT_FALSE(t.Find(1)->active);
  // ... until page 10 is leased again.
  t.Grant(3, 10, "b", 200.0);
  EXPECT_EQ(t.Find(1), nullptr);
  EXPECT_EQ(t.OfPage(10)->id, 3u);
  // An expired lease is not active when released.
  expired.clear();
  t.Expire(70.0, &expired);
  EXPECT_EQ(expired, std::vector<PageId>({11}));
  EXPECT_FALSE(t.Release(11));
  EXPECT_EQ(t.size(), 1u);
}

TEST(LeaseTableTest, ReleasedLeaseLeavesNoDeadlineBehind) {
  LeaseTable t;
  t.Grant(1, 10, "a", 50.0);
  t.Release(10);
  t.Grant(2, 10, "a", 80.0);
  std::vector<PageId> expired;
  t.Expire(60.0, &expired);
  EXPECT_TRUE(expired.empty());  // lease 1's deadline is gone
  EXPECT_TRUE(t.Find(2)->active);
}

TEST(LeaseTableTest, RestoredInactiveLease) {
  LeaseTable t;
  t.Grant(5, 1, "a", 10.0, /*active=*/false);
  EXPECT_EQ(t.active(), 0u);
  ASSERT_NE(t.Find(5), nullptr);
  std::vector<PageId> expired;
  t.Expire(100.0, &expired);
  EXPECT_TRUE(expired.empty());
}

TEST(LeaseTableTest, Holds) {
  LeaseTable t;
  t.Hold(4, 30.0);
  t.Hold(5, 20.0);
  double until = 0;
  ASSERT_TRUE(t.Held(4, &until));
  EXPECT_EQ(until, 30.0);
  t.Hold(4, 40.0);  // replaces
  std::vector<PageId> due;
  t.ExpireHolds(35.0, &due);
  EXPECT_EQ(due, std::vector<PageId>({5}));
  EXPECT_TRUE(t.Unhold(4));
  EXPECT_FALSE(t.Held(4));
  due.clear();
  t.ExpireHolds(100.0, &due);
  EXPECT_TRUE(due.empty());
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
