#include "policy/lds.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace policy {
namespace {

using ::testing::HasSubstr;

// Reference: Algorithm 3 read directly, O(n) per slot. At slot t page k is
// eligible when t·p_k > N_k (its next crawl is released) and is due at
// ⌈(N_k + 1)/p_k⌉; the eligible page due first runs (ties: lowest index).
// Returns LdsScheduler::kIdle when no page is eligible.
std::vector<int> NaiveEdf(const std::vector<double>& share, int64_t slots) {
  std::vector<int64_t> crawls(share.size(), 0);
  std::vector<int> out;
  for (int64_t t = 1; t <= slots; ++t) {
    int best = LdsScheduler::kIdle;
    double best_deadline = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < share.size(); ++k) {
      if (!(share[k] > 0.0)) continue;
      const double n = static_cast<double>(crawls[k]);
      if (!(static_cast<double>(t) * share[k] > n)) continue;
      const double deadline = std::ceil((n + 1.0) / share[k]);
      if (best == LdsScheduler::kIdle || deadline < best_deadline) {
        best = static_cast<int>(k);
        best_deadline = deadline;
      }
    }
    if (best != LdsScheduler::kIdle) ++crawls[best];
    out.push_back(best);
  }
  return out;
}

std::vector<double> Shares(const LdsScheduler& s) {
  std::vector<double> share(s.num_pages());
  for (int k = 0; k < s.num_pages(); ++k) share[k] = s.share(k);
  return share;
}

// max over t <= schedule.size() and k of |t·p_k − N_k(t)|.
double MaxDiscrepancy(const std::vector<double>& share, const std::vector<int>& schedule) {
  std::vector<int64_t> crawls(share.size(), 0);
  double worst = 0.0;
  for (size_t t = 1; t <= schedule.size(); ++t) {
    if (schedule[t - 1] >= 0) ++crawls[schedule[t - 1]];
    for (size_t k = 0; k < share.size(); ++k) {
      worst = std::max(
          worst, std::fabs(static_cast<double>(t) * share[k] - static_cast<double>(crawls[k])));
    }
  }
  return worst;
}

std::vector<int> RunSlots(LdsScheduler& s, int64_t slots) {
  std::vector<int> out;
  for (int64_t j = 0; j < slots; ++j) out.push_back(s.Next());
  return out;
}

// Random rates summing to `bandwidth`: a mix of spread-out magnitudes,
// exact zeros and a few dominant pages.
std::vector<double> RandomRates(int n, double bandwidth, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> rates(n);
  double sum = 0.0;
  for (int k = 0; k < n; ++k) {
    const double r = u(rng);
    rates[k] = r < 0.1 ? 0.0 : std::exp(6.0 * u(rng));  // up to ~400x apart
    sum += rates[k];
  }
  if (sum == 0.0) {
    rates[0] = 1.0;
    sum = 1.0;
  }
  for (double& r : rates) r *= bandwidth / sum;
  return rates;
}

TEST(LdsSchedulerTest, DiscrepancyBoundAndNaiveAgreementOnRandomRates) {
  std::mt19937_64 rng(20240611);
  const int sizes[] = {1, 2, 3, 7, 40, 250};
  for (int n : sizes) {
    for (int rep = 0; rep < 3; ++rep) {
      const double bandwidth = std::exp(std::uniform_real_distribution<double>(-3.0, 6.0)(rng));
      const std::vector<double> rates = RandomRates(n, bandwidth, rng);
      absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(rates, bandwidth);
      ASSERT_TRUE(s.ok()) << s.status();
      const std::vector<double> share = Shares(*s);
      const int64_t slots = n >= 250 ? 8000 : 20000;
      const std::vector<int> fast = RunSlots(*s, slots);
      for (int page : fast) ASSERT_NE(page, LdsScheduler::kIdle);
      EXPECT_LE(MaxDiscrepancy(share, fast), 1.0 + 1e-9) << "n=" << n << " rep=" << rep;
      // Both evaluate the same release and deadline expressions, so they
      // agree slot for slot even without dyadic rates.
      const std::vector<int> naive = NaiveEdf(share, slots);
      EXPECT_LE(MaxDiscrepancy(share, naive), 1.0 + 1e-9);
      EXPECT_EQ(fast, naive) << "n=" << n << " rep=" << rep;
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(s->crawls(k), std::count(fast.begin(), fast.end(), k));
      }
    }
  }
}

TEST(LdsSchedulerTest, DyadicRatesAreExactlyPeriodic) {
  // p_k = c_k / 2^10 exactly: after every 1024 slots page k has had exactly
  // c_k crawls (the bound forces N_k(1024 j) = j c_k), and heap and naive
  // versions agree slot for slot.
  std::mt19937_64 rng(7);
  for (int rep = 0; rep < 5; ++rep) {
    const int period = 1024;
    std::vector<int64_t> counts(1 + rep * 6, 0);
    std::uniform_int_distribution<size_t> pick(0, counts.size() - 1);
    for (int j = 0; j < period; ++j) ++counts[pick(rng)];
    const double bandwidth = 0.25 * (rep + 1);  // dyadic too
    std::vector<double> rates;
    for (int64_t c : counts) {
      rates.push_back(bandwidth * static_cast<double>(c) / period);
    }
    absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(rates, bandwidth);
    ASSERT_TRUE(s.ok()) << s.status();
    for (size_t k = 0; k < counts.size(); ++k) {
      ASSERT_EQ(s->share(k), static_cast<double>(counts[k]) / period);
    }
    const std::vector<int> fast = RunSlots(*s, 3 * period);
    EXPECT_EQ(fast, NaiveEdf(Shares(*s), 3 * period));
    EXPECT_LE(MaxDiscrepancy(Shares(*s), fast), 1.0);
    for (int cycle = 1; cycle <= 3; ++cycle) {
      for (size_t k = 0; k < counts.size(); ++k) {
        EXPECT_EQ(std::count(fast.begin(), fast.begin() + cycle * period, static_cast<int>(k)),
                  cycle * counts[k]);
      }
    }
  }
}

TEST(LdsSchedulerTest, EqualSharesRoundRobin) {
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create({1.0, 1.0, 1.0, 1.0}, 4.0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(RunSlots(*s, 8), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST(LdsSchedulerTest, ThirdsStayFullAndWithinBoundOverManySlots) {
  // 1/3 is not representable: products t·p_k round to either side of the
  // integers. The schedule must still fill every slot and keep the bound.
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create({1.0, 1.0, 1.0}, 3.0);
  ASSERT_TRUE(s.ok());
  const int64_t slots = 300000;
  for (int64_t t = 1; t <= slots; ++t) {
    const int page = s->Next();
    ASSERT_NE(page, LdsScheduler::kIdle) << "slot " << t;
    for (int k = 0; k < 3; ++k) {
      ASSERT_LE(std::fabs(static_cast<double>(t) / 3.0 - static_cast<double>(s->crawls(k))),
                1.0 + 1e-9);
    }
  }
  EXPECT_EQ(s->slot(), slots);
}

TEST(LdsSchedulerTest, ZeroRatesNeverScheduledAndSinglePageTakesAll) {
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create({0.0, 2.5, 0.0}, 2.5);
  ASSERT_TRUE(s.ok());
  for (int page : RunSlots(*s, 100)) EXPECT_EQ(page, 1);
  EXPECT_EQ(s->crawls(0), 0);
  EXPECT_EQ(s->crawls(1), 100);
}

TEST(LdsSchedulerTest, UnderfilledRatesLeaveIdleSlotsAndKeepBound) {
  // Σρ = R/2: half the slots must be idle, and no page may run ahead of its
  // share (N_k(t) <= ⌈t p_k⌉).
  std::mt19937_64 rng(99);
  const std::vector<double> full = RandomRates(20, 10.0, rng);
  std::vector<double> half;
  for (double r : full) half.push_back(0.5 * r);
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(half, 10.0);
  ASSERT_TRUE(s.ok());
  const int64_t slots = 10000;
  const std::vector<int> fast = RunSlots(*s, slots);
  const int64_t idle = std::count(fast.begin(), fast.end(), LdsScheduler::kIdle);
  EXPECT_NEAR(static_cast<double>(idle), 0.5 * slots, 20.0);
  EXPECT_LE(MaxDiscrepancy(Shares(*s), fast), 1.0 + 1e-9);
  EXPECT_EQ(fast, NaiveEdf(Shares(*s), slots));
}

TEST(LdsSchedulerTest, RoundingSlackInRateSumIsAccepted) {
  // Rates from a solver sum to R only up to rounding.
  const double bandwidth = 1.0;
  std::vector<double> rates(10, 0.1);  // Σ = 0.9999999999999999
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(rates, bandwidth);
  ASSERT_TRUE(s.ok());
  for (int page : RunSlots(*s, 1000)) EXPECT_NE(page, LdsScheduler::kIdle);
  rates[0] *= 1.0 + 1e-12;  // Σ slightly above R: rescaled, still accepted
  EXPECT_TRUE(LdsScheduler::Create(rates, bandwidth).ok());
}

TEST(LdsSchedulerTest, SlotTimesAreEvenlySpaced) {
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create({3.0, 1.0}, 4.0);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->SlotTime(1), 0.25);
  EXPECT_DOUBLE_EQ(s->SlotTime(10), 2.5);
  EXPECT_EQ(s->slot(), 0);
  s->Next();
  EXPECT_EQ(s->slot(), 1);
}

TEST(LdsScheduleTest, BatchEqualsIncremental) {
  std::mt19937_64 rng(5);
  const std::vector<double> rates = RandomRates(30, 7.0, rng);
  absl::StatusOr<std::vector<int>> batch = LdsSchedule(rates, 7.0, 5000);
  ASSERT_TRUE(batch.ok());
  absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(rates, 7.0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*batch, RunSlots(*s, 5000));
  absl::StatusOr<std::vector<int>> empty = LdsSchedule(rates, 7.0, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(LdsSchedulerTest, RejectsInvalidInput) {
  auto error = [](const std::vector<double>& rates, double bandwidth) {
    absl::StatusOr<LdsScheduler> s = LdsScheduler::Create(rates, bandwidth);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.status().message());
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(error({1.0}, 0.0), HasSubstr("bandwidth"));
  EXPECT_THAT(error({1.0}, -1.0), HasSubstr("bandwidth"));
  EXPECT_THAT(error({1.0}, nan), HasSubstr("bandwidth"));
  EXPECT_THAT(error({1.0}, inf), HasSubstr("bandwidth"));
  EXPECT_THAT(error({0.5, -0.1}, 1.0), HasSubstr("rate of page 1"));
  EXPECT_THAT(error({nan}, 1.0), HasSubstr("rate of page 0"));
  EXPECT_THAT(error({inf}, 1.0), HasSubstr("rate of page 0"));
  EXPECT_THAT(error({0.6, 0.6}, 1.0), HasSubstr("more than the bandwidth"));
  EXPECT_FALSE(LdsSchedule({1.0}, 1.0, -1).ok());
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
