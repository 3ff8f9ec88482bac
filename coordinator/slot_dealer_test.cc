#include "coordinator/slot_dealer.h"

#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

TEST(SlotDealerTest, NoBudgetNoSlot) {
  SlotDealer dealer(3);
  EXPECT_EQ(dealer.Deal(), -1);
  dealer.SetBudgets({0.0, 0.0, 0.0});
  EXPECT_EQ(dealer.Deal(), -1);
}

TEST(SlotDealerTest, EqualBudgetsTakeTurns) {
  SlotDealer dealer(4);
  dealer.SetBudgets({25.0, 25.0, 25.0, 25.0});
  std::vector<int> last(4, -100);
  for (int j = 0; j < 400; ++j) {
    const int s = dealer.Deal();
    ASSERT_GE(s, 0);
    if (last[s] >= 0) {
      EXPECT_EQ(j - last[s], 4);
    }
    last[s] = j;
  }
}

// Shares are exact to within one slot over any prefix, and a shard's slots
// are spread: never more than ⌈R/R_s⌉ + 1 apart.
TEST(SlotDealerTest, SlotsFollowTheBudgetsEvenly) {
  SlotDealer dealer(3);
  const std::vector<double> budgets = {60.0, 30.0, 10.0};
  dealer.SetBudgets(budgets);
  std::vector<int> count(3, 0), last(3, -1);
  for (int j = 1; j <= 10000; ++j) {
    const int s = dealer.Deal();
    ++count[s];
    if (last[s] >= 0) {
      EXPECT_LE(j - last[s], static_cast<int>(100.0 / budgets[s]) + 1) << s;
    }
    last[s] = j;
    for (int t = 0; t < 3; ++t) EXPECT_NEAR(count[t], j * budgets[t] / 100.0, 1.0);
  }
}

TEST(SlotDealerTest, AShardThatIsOutGetsNothingAndRejoinsFairly) {
  SlotDealer dealer(2);
  dealer.SetBudgets({50.0, 50.0});
  for (int j = 0; j < 11; ++j) dealer.Deal();
  dealer.SetBudgets({100.0, 0.0});
  for (int j = 0; j < 50; ++j) EXPECT_EQ(dealer.Deal(), 0);
  dealer.SetBudgets({50.0, 50.0});
  std::vector<int> count(2, 0);
  for (int j = 0; j < 100; ++j) ++count[dealer.Deal()];
  EXPECT_NEAR(count[0], 50, 1);
  EXPECT_NEAR(count[1], 50, 1);
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
