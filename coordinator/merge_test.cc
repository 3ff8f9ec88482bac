#include "coordinator/merge.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::ElementsAre;

TEST(MergeTest, SlotsGoToTheBestValuesInOrder) {
  EXPECT_THAT(AssignSlotsByMerge({{5.0, 1.0}, {4.0, 3.0, 2.0}, {}}, 4), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(AssignSlotsByMerge({{5.0, 1.0}, {4.0, 3.0, 2.0}}, 10), ElementsAre(0, 1, 1, 1, 0));
  EXPECT_THAT(AssignSlotsByMerge({}, 3), ElementsAre());
  EXPECT_THAT(AssignSlotsByMerge({{1.0}}, 0), ElementsAre());
}

TEST(MergeTest, TiesGoToTheLowerShard) {
  EXPECT_THAT(AssignSlotsByMerge({{2.0}, {2.0}, {2.0}}, 3), ElementsAre(0, 1, 2));
}

// A shard that sent part of its candidates can win the slot after its last
// one, so the merge stops there; a complete list just runs out.
TEST(MergeTest, StopsWhereATruncatedListRunsOut) {
  EXPECT_THAT(AssignSlotsByMerge({{5.0, 4.0}, {4.5, 1.0}}, 4, {true, false}), ElementsAre(0, 1, 0));
  EXPECT_THAT(AssignSlotsByMerge({{5.0, 4.0}, {4.5, 1.0}}, 4, {false, true}),
              ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(AssignSlotsByMerge({{5.0}, {4.5, 4.2, 1.0}}, 3, {false, true}), ElementsAre(0, 1, 1));
}

// Against sorting everything: the merge takes the k best values overall.
TEST(MergeTest, EqualsTheTopOfTheUnion) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int shards = 1 + trial % 7;
    std::vector<std::vector<double>> values(shards);
    std::vector<std::pair<double, int>> all;
    for (int s = 0; s < shards; ++s) {
      const int n = static_cast<int>(u(rng) * 20);
      for (int i = 0; i < n; ++i) values[s].push_back(u(rng));
      std::sort(values[s].rbegin(), values[s].rend());
      for (double v : values[s]) all.emplace_back(-v, s);
    }
    std::sort(all.begin(), all.end());
    const int k = static_cast<int>(u(rng) * 40);
    const std::vector<int> slots = AssignSlotsByMerge(values, k);
    ASSERT_EQ(slots.size(), std::min<size_t>(k, all.size()));
    for (size_t j = 0; j < slots.size(); ++j) ASSERT_EQ(slots[j], all[j].second);
  }
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
