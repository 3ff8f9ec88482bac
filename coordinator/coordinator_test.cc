#include "coordinator/coordinator.h"

#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

CoordinatorOptions Options(int shards, double bandwidth, Mode mode) {
  CoordinatorOptions o;
  o.num_shards = shards;
  o.bandwidth = bandwidth;
  o.mode = mode;
  o.pacer.grace = 0.5;
  o.pacer.max_lookahead = 1.0;
  o.directory.failure_timeout = 1.5;
  return o;
}

void AllAnswer(Coordinator& c, double now, int except = -1) {
  for (int s = 0; s < c.directory().num_shards(); ++s) {
    if (s == except) continue;
    ASSERT_TRUE(
        c.directory()
            .Record({absl::StrCat("shard", s), true, s, c.directory().num_shards(), "site"}, now)
            .ok());
  }
}

size_t Count(const std::vector<std::vector<double>>& by_shard) {
  size_t n = 0;
  for (const auto& v : by_shard) n += v.size();
  return n;
}

TEST(CoordinatorTest, LeaseIdsCarryTheShard) {
  const uint64_t id = ClusterLeaseId(200, 123456789);
  EXPECT_EQ(ShardOfLeaseId(id), 200);
  EXPECT_EQ(ShardLeaseId(id), 123456789u);
}

TEST(CoordinatorTest, BadOptionsNameTheField) {
  CoordinatorOptions o = Options(0, 10, Mode::kMerge);
  EXPECT_THAT(std::string(Coordinator::Validate(o).message()), HasSubstr("num_shards"));
  o = Options(2, -1, Mode::kMerge);
  EXPECT_THAT(std::string(Coordinator::Validate(o).message()), HasSubstr("bandwidth"));
  EXPECT_TRUE(Coordinator::Validate(Options(4, 100, Mode::kMerge)).ok());
}

TEST(CoordinatorTest, EqualSplitDealsSlotsToLiveShardsOnly) {
  Coordinator c(Options(4, 40.0, Mode::kSplitEqual), 0.0);
  AllAnswer(c, 0.0);
  EXPECT_EQ(c.Tick(0.0).size(), 4u);
  EXPECT_THAT(c.budgets(), ElementsAre(10.0, 10.0, 10.0, 10.0));
  const auto dealt = c.DealSlots(c.TakeSlots(0.0, 0.975, 1000));
  EXPECT_EQ(Count(dealt), 40u);
  for (const auto& v : dealt) EXPECT_EQ(v.size(), 10u);
  // Shard 2 stops answering: out within the timeout, its budget to the rest.
  for (double t = 0.25; t <= 2.0; t += 0.25) AllAnswer(c, t, /*except=*/2);
  const auto changes = c.Tick(2.0);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].shard_index, 2);
  EXPECT_NEAR(c.budgets()[0], 40.0 / 3, 1e-9);
  EXPECT_EQ(c.budgets()[2], 0.0);
  const auto later = c.DealSlots(c.TakeSlots(2.0, 0.975, 1000));
  EXPECT_TRUE(later[2].empty());
  EXPECT_GT(Count(later), 0u);
}

TEST(CoordinatorTest, MergeGivesSlotsToTheBestPeekedValues) {
  Coordinator c(Options(3, 10.0, Mode::kMerge), 0.0);
  AllAnswer(c, 0.0);
  c.Tick(0.0);
  const std::vector<double> slots = c.TakeSlots(0.0, 0.35, 100);  // 0, .1, .2, .3
  ASSERT_EQ(slots.size(), 4u);
  size_t assigned = 0;
  const auto by_shard =
      c.MergeSlots(slots, {{0.5, 0.1}, {}, {0.9, 0.4, 0.3}}, {4, 4, 4}, &assigned);
  // Values in order 0.9 (shard 2), 0.5 (0), 0.4 (2), 0.3 (2).
  EXPECT_EQ(assigned, 4u);
  EXPECT_THAT(by_shard[2],
              ElementsAre(DoubleNear(0.0, 1e-12), DoubleNear(0.2, 1e-12), DoubleNear(0.3, 1e-12)));
  EXPECT_THAT(by_shard[0], ElementsAre(DoubleNear(0.1, 1e-12)));
  EXPECT_TRUE(by_shard[1].empty());
}

// Peeks follow the shards' recent shares of the merged slots, with a margin;
// a shard that wins past what it sent stops the merge there.
TEST(CoordinatorTest, PeekSizesFollowTheSharesAndTheMergeStopsAtAShortPeek) {
  Coordinator c(Options(2, 1000.0, Mode::kMerge), 0.0);
  const std::vector<bool> live = {true, true};
  // Alike at first: 1.5 · 100/2 + 8 each.
  EXPECT_THAT(c.PeekSizes(100, live), ElementsAre(83, 83));
  EXPECT_THAT(c.PeekSizes(4, live), ElementsAre(4, 4));
  EXPECT_THAT(c.PeekSizes(100, {true, false}), ElementsAre(100, 0));
  // Shard 1 sent 3 of the 3 asked and would win all: only 3 slots merge.
  const std::vector<double> slots = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5};
  size_t assigned = 0;
  auto by_shard = c.MergeSlots(slots, {{0.1, 0.05}, {0.9, 0.8, 0.7}}, {6, 3}, &assigned);
  EXPECT_EQ(assigned, 3u);
  EXPECT_EQ(by_shard[1].size(), 3u);
  EXPECT_TRUE(by_shard[0].empty());
  // Shard 1 won everything: its share grows, shard 0's shrinks.
  for (int i = 0; i < 20; ++i) {
    c.MergeSlots(slots, {{}, {0.9, 0.8, 0.7, 0.6, 0.5, 0.4}}, {6, 6}, &assigned);
  }
  const std::vector<int> sizes = c.PeekSizes(100, live);
  EXPECT_EQ(sizes[1], 100);
  EXPECT_EQ(sizes[0], 8);
}

TEST(CoordinatorTest, BandwidthChangeKeepsSharesAndPacing) {
  Coordinator c(Options(2, 10.0, Mode::kSplitEqual), 0.0);
  AllAnswer(c, 0.0);
  c.Tick(0.0);
  ASSERT_TRUE(c.SetBandwidth(30.0, 0.0).ok());
  EXPECT_THAT(c.budgets(), ElementsAre(15.0, 15.0));
  EXPECT_EQ(c.SetBandwidth(0.0, 0.0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_DOUBLE_EQ(c.bandwidth(), 30.0);
}

// Adaptive: the shard whose leases carry the higher values gets more.
TEST(CoordinatorTest, AdaptiveMovesBudgetTowardTheHigherLevel) {
  Coordinator c(Options(2, 100.0, Mode::kSplitAdaptive), 0.0);
  AllAnswer(c, 0.0);
  c.Tick(0.0);
  EXPECT_THAT(c.budgets(), ElementsAre(50.0, 50.0));
  c.RecordLeases(0, {4.0, 4.0});
  c.RecordLeases(1, {1.0, 1.0});
  AllAnswer(c, 1.0);
  c.Tick(1.0);
  EXPECT_GT(c.budgets()[0], 50.0);
  EXPECT_NEAR(c.budgets()[0] + c.budgets()[1], 100.0, 1e-9);
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
