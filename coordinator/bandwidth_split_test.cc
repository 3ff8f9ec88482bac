#include "coordinator/bandwidth_split.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(BandwidthSplitTest, EqualGivesLiveShardsROverN) {
  EXPECT_THAT(EqualSplit(90.0, {true, false, true, true}), ElementsAre(30.0, 0.0, 30.0, 30.0));
}

TEST(BandwidthSplitTest, EqualLevelsAreAFixedPoint) {
  const std::vector<double> budgets = {10.0, 30.0, 60.0};
  EXPECT_THAT(AdaptiveStep(100.0, budgets, {2.0, 2.0, 2.0}, {true, true, true}),
              ElementsAre(DoubleNear(10.0, 1e-9), DoubleNear(30.0, 1e-9), DoubleNear(60.0, 1e-9)));
}

TEST(BandwidthSplitTest, BudgetMovesTowardTheHigherLevel) {
  const std::vector<double> next = AdaptiveStep(100.0, {50.0, 50.0}, {4.0, 1.0}, {true, true});
  EXPECT_GT(next[0], 50.0);
  EXPECT_LT(next[1], 50.0);
  EXPECT_NEAR(Sum(next), 100.0, 1e-9);
}

TEST(BandwidthSplitTest, DeadShardsGetNothingAndTheRestShareR) {
  const std::vector<double> next = AdaptiveStep(100.0, {25.0, 25.0, 25.0, 25.0},
                                                {1.0, 1.0, 1.0, 1.0}, {true, false, true, true});
  EXPECT_THAT(next, ElementsAre(DoubleNear(100.0 / 3, 1e-9), 0.0, DoubleNear(100.0 / 3, 1e-9),
                                DoubleNear(100.0 / 3, 1e-9)));
  EXPECT_THAT(AdaptiveStep(100.0, {50.0, 50.0}, {1.0, 1.0}, {false, false}), ElementsAre(0.0, 0.0));
}

TEST(BandwidthSplitTest, UnknownLevelsKeepTheirShareAndNewShardsStartFair) {
  // Shard 2 joined (no budget, no level yet); shard 1 has not reported.
  const std::vector<double> next =
      AdaptiveStep(90.0, {45.0, 45.0, 0.0}, {1.0, std::nan(""), -1.0}, {true, true, true});
  EXPECT_NEAR(Sum(next), 90.0, 1e-9);
  EXPECT_NEAR(next[1] / next[2], 45.0 / 30.0, 1e-9);
}

TEST(BandwidthSplitTest, NoLiveShardGetsLessThanTheFloor) {
  AdaptiveSplitOptions options;
  options.min_share = 0.1;
  options.step = 1.0;
  const std::vector<double> next =
      AdaptiveStep(100.0, {50.0, 50.0}, {1e6, 1e-6}, {true, true}, options);
  EXPECT_NEAR(next[1], 0.1 * 50.0, 1e-9);
  EXPECT_NEAR(next[0], 100.0 - 5.0, 1e-9);
}

// Shards whose level falls with their budget as Λ_s = c_s / R_s^p (p = 1 for
// GREEDY on pages whose values grow linearly; steeper and flatter too):
// repeated steps equalise the levels, i.e. reach the split of one Λ.
TEST(BandwidthSplitTest, RepeatedStepsEqualiseLevels) {
  const std::vector<double> scale = {1.0, 8.0, 0.5, 3.0};
  for (double p : {0.5, 1.0, 2.0}) {
    AdaptiveSplitOptions options;
    options.step = 0.5 / p;
    options.min_share = 0.0;
    std::vector<double> budgets = EqualSplit(100.0, {true, true, true, true});
    std::vector<double> levels(4);
    for (int step = 0; step < 100; ++step) {
      for (int s = 0; s < 4; ++s) levels[s] = scale[s] / std::pow(budgets[s], p);
      budgets = AdaptiveStep(100.0, budgets, levels, {true, true, true, true}, options);
    }
    for (int s = 0; s < 4; ++s) levels[s] = scale[s] / std::pow(budgets[s], p);
    for (int s = 1; s < 4; ++s) EXPECT_NEAR(levels[s] / levels[0], 1.0, 1e-3) << p;
    EXPECT_NEAR(Sum(budgets), 100.0, 1e-9);
  }
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
