#include "coordinator/slot_pacer.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

SlotPacer::Options Grace(double grace, double lookahead = 1.0) {
  SlotPacer::Options options;
  options.grace = grace;
  options.max_lookahead = lookahead;
  return options;
}

TEST(SlotPacerTest, SlotsAreOnTheGridJOverR) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0));
  EXPECT_THAT(pacer.Take(0.35, 0.35, 100),
              ElementsAre(DoubleNear(0.0, 1e-12), DoubleNear(0.1, 1e-12), DoubleNear(0.2, 1e-12),
                          DoubleNear(0.3, 1e-12)));
  EXPECT_THAT(pacer.Take(0.35, 0.35, 100), ElementsAre());
  EXPECT_THAT(pacer.Take(0.41, 0.41, 100), ElementsAre(DoubleNear(0.4, 1e-12)));
  EXPECT_NEAR(pacer.NextSlotTime(0.41), 0.5, 1e-12);
}

TEST(SlotPacerTest, MaxSlotsLimitsATakeAndKeepsTheRest) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0));
  EXPECT_EQ(pacer.Take(0.55, 0.55, 2).size(), 2u);
  EXPECT_THAT(pacer.Take(0.55, 0.55, 100).front(), DoubleNear(0.2, 1e-12));
  EXPECT_TRUE(pacer.Take(0.55, 0.55, 0).empty());
}

TEST(SlotPacerTest, LookaheadIsClamped) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0, /*lookahead=*/0.5));
  // Up to now + 0.5 although the fetcher asked for 5 s ahead.
  EXPECT_EQ(pacer.Take(0.0, 5.0, 1000).size(), 6u);
  // `until` before now means now.
  EXPECT_THAT(pacer.Take(0.65, 0.0, 1000), ElementsAre(DoubleNear(0.6, 1e-12)));
}

TEST(SlotPacerTest, UntakenSlotsAreDroppedAfterTheGraceNotSavedUp) {
  SlotPacer pacer(10.0, 0.0, Grace(0.25, 0.0));
  // Idle for 100 s: only the slots of the last 0.25 s are left.
  std::vector<double> slots = pacer.Take(100.0, 100.0, 1 << 20);
  EXPECT_THAT(slots,
              ElementsAre(DoubleNear(99.8, 1e-9), DoubleNear(99.9, 1e-9), DoubleNear(100.0, 1e-9)));
  EXPECT_EQ(pacer.stats().dropped, 998u);
  EXPECT_EQ(pacer.stats().handed_out, 3u);
}

TEST(SlotPacerTest, RateChangeTakesEffectFromTheNextSlot) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0, 0.0));
  ASSERT_EQ(pacer.Take(0.52, 0.52, 100).size(), 6u);  // 0 .. 0.5
  ASSERT_TRUE(pacer.SetBandwidth(20.0, 0.52).ok());
  EXPECT_DOUBLE_EQ(pacer.bandwidth(), 20.0);
  EXPECT_THAT(
      pacer.Take(0.66, 0.66, 100),
      ElementsAre(DoubleNear(0.55, 1e-12), DoubleNear(0.60, 1e-12), DoubleNear(0.65, 1e-12)));
}

TEST(SlotPacerTest, DueSlotsOfTheOldRateStayTakeable) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0, 0.0));
  ASSERT_EQ(pacer.Take(0.05, 0.05, 100).size(), 1u);  // slot 0
  // Slots 0.1 .. 0.3 are due and not taken when R drops to 1.
  ASSERT_TRUE(pacer.SetBandwidth(1.0, 0.33).ok());
  EXPECT_THAT(pacer.Take(0.4, 0.4, 100),
              ElementsAre(DoubleNear(0.1, 1e-12), DoubleNear(0.2, 1e-12), DoubleNear(0.3, 1e-12)));
  EXPECT_THAT(pacer.Take(1.35, 1.35, 100), ElementsAre(DoubleNear(1.3, 1e-12)));
}

TEST(SlotPacerTest, RateChangeAfterSlotsTakenAheadStartsAfterThem) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0, 1.0));
  ASSERT_EQ(pacer.Take(0.0, 0.5, 100).size(), 6u);  // 0 .. 0.5, handed ahead
  ASSERT_TRUE(pacer.SetBandwidth(2.0, 0.1).ok());
  EXPECT_THAT(pacer.Take(0.1, 1.1, 100), ElementsAre(DoubleNear(1.0, 1e-12)));
}

TEST(SlotPacerTest, RateChangeBeforeTheFirstSlot) {
  SlotPacer pacer(1.0, 10.0, Grace(1.0, 0.0));
  ASSERT_TRUE(pacer.SetBandwidth(4.0, 5.0).ok());
  // The previous slot was at 9 (start − 1/R_old); the next is 1/4 later.
  EXPECT_NEAR(pacer.NextSlotTime(5.0), 9.25, 1e-12);
}

TEST(SlotPacerTest, BadBandwidthIsRejectedNamingTheField) {
  SlotPacer pacer(10.0, 0.0, Grace(1.0));
  for (double bad :
       {0.0, -1.0, 1e-9, 9.9e-4, std::nan(""), std::numeric_limits<double>::infinity(), 1e12}) {
    absl::Status status = pacer.SetBandwidth(bad, 1.0);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(status.message()), HasSubstr("bandwidth")) << bad;
  }
  EXPECT_DOUBLE_EQ(pacer.bandwidth(), 10.0);
  EXPECT_TRUE(pacer.SetBandwidth(1e-3, 1.0).ok());  // one slot every 1000 s
}

// Random fetchers and operator changes: slots are handed out once, in
// order, within [now − grace, now + lookahead], at least 1/R_max apart, so
// any window of length L holds at most R_max·L + 1 of them; at a constant
// rate nothing is lost (every slot is handed out or dropped).
TEST(SlotPacerTest, RandomTakesAndChangesKeepThePacingBound) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const bool change_rate = seed % 2 == 0;
    const double grace = 0.2 * unit(rng);
    const double lookahead = 0.5 * unit(rng);
    double rate = 5.0 + 95.0 * unit(rng);
    double max_rate = rate;
    SlotPacer pacer(rate, 0.0, Grace(grace, lookahead));
    double now = 0.0;
    std::vector<double> handed;
    for (int step = 0; step < 3000; ++step) {
      now += -std::log(1.0 - unit(rng)) * 0.05;
      if (change_rate && unit(rng) < 0.02) {
        rate = 5.0 + 95.0 * unit(rng);
        max_rate = std::max(max_rate, rate);
        ASSERT_TRUE(pacer.SetBandwidth(rate, now).ok());
      }
      const double until = now + lookahead * unit(rng);
      const int k = 1 + static_cast<int>(20 * unit(rng));
      const std::vector<double> slots = pacer.Take(now, until, k);
      ASSERT_LE(slots.size(), static_cast<size_t>(k));
      for (double s : slots) {
        ASSERT_GE(s, now - grace - 1e-9) << "seed " << seed;
        ASSERT_LE(s, now + lookahead + 1e-9) << "seed " << seed;
        if (!handed.empty()) {
          ASSERT_GE(s - handed.back(), 1.0 / max_rate - 1e-9);
        }
        handed.push_back(s);
      }
    }
    for (double window : {0.05, 0.3, 1.0}) {
      size_t lo = 0;
      for (size_t hi = 0; hi < handed.size(); ++hi) {
        while (handed[hi] - handed[lo] > window) ++lo;
        ASSERT_LE(static_cast<double>(hi - lo + 1), max_rate * window + 1.0 + 1e-9)
            << "seed " << seed;
      }
    }
    if (!change_rate) {
      const double end = now + lookahead + 0.0123;  // past every slot taken ahead
      pacer.Take(end, end, 1 << 30);
      const uint64_t slots_so_far = static_cast<uint64_t>(std::floor(end * rate)) + 1;
      EXPECT_EQ(pacer.stats().handed_out + pacer.stats().dropped, slots_so_far) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
