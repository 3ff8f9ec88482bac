#include "policy/crawl_value.h"

#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "policy/residual.h"
#include "policy/threshold_policy.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

PageModel Make(double mu, double delta, double lambda, double nu) {
  return *PageModel::Create({mu, delta, lambda, nu});
}

TEST(CrawlValueTest, GreedyIsTheNoSignalValue) {
  const PageModel p = Make(0.3, 0.7, 0.5, 0.2);
  for (double tau : {0.0, 0.01, 1.0, 9.0}) {
    const double want = 0.3 / 0.7 * Residual(1, 0.7 * tau);
    // GREEDY ignores signals entirely.
    EXPECT_DOUBLE_EQ(CrawlValue(CrawlPolicy::Greedy(), p, tau, 0), want);
    EXPECT_DOUBLE_EQ(CrawlValue(CrawlPolicy::Greedy(), p, tau, 5), want);
  }
}

TEST(CrawlValueTest, VanishingSignalRateGivesGreedy) {
  // γ → 0 in the NCIS formula recovers V_GREEDY.
  for (double tau : {0.1, 1.0, 5.0}) {
    const double greedy = CrawlValue(CrawlPolicy::Greedy(), Make(1, 1, 0, 0), tau, 0);
    const double ncis = NcisValue(Make(1, 1, 1e-7, 1e-7), tau, 0);
    EXPECT_NEAR(ncis, greedy, 1e-5 * greedy);
  }
}

TEST(CrawlValueTest, VanishingFalseRateGivesGreedyCis) {
  const PageModel p = Make(1, 1.3, 0.6, 0.0);
  for (double tau : {0.1, 1.0, 5.0}) {
    const double cis = CrawlValue(CrawlPolicy::GreedyCis(), p, tau, 0);
    const double ncis = NcisValue(Make(1, 1.3, 0.6, 1e-9), tau, 0);
    EXPECT_NEAR(ncis, cis, 1e-6 * cis);
  }
  // After a signal GREEDY-CIS is certain the page changed.
  EXPECT_DOUBLE_EQ(CrawlValue(CrawlPolicy::GreedyCis(), Make(1, 1.3, 0.6, 0.4), 0.1, 1),
                   1 / 1.3);
}

TEST(CrawlValueTest, GreedyCisClosedForm) {
  // Sec. 5.1: μ̃(R^0((α+γ)ι)/(α+γ) − R^0(γι)/(γ e^{αι})).
  const PageModel p = Make(0.8, 1.5, 0.3, 0.0);
  const double a = p.alpha(), g = p.gamma(), iota = 0.9;
  const double want = 0.8 * (Residual(0, (a + g) * iota) / (a + g) -
                             Residual(0, g * iota) / (g * std::exp(a * iota)));
  EXPECT_NEAR(NcisValue(p, iota, 0), want, 1e-15);
}

TEST(CrawlValueTest, TendsToCeilingAndIncreases) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 30; ++k) {
    const PageModel p = Make(u(rng), 0.05 + u(rng), 0.98 * u(rng), 2 * u(rng));
    double previous = 0.0;
    for (double iota = 1e-3; iota < 1e4; iota *= 1.5) {
      const double v = ValueAtThreshold(p, iota);
      // Strictly increasing until it saturates at the ceiling in doubles.
      if (previous < ValueCeiling(p) * (1 - 1e-12)) {
        EXPECT_GT(v, previous) << "ι=" << iota;
      } else {
        EXPECT_GE(v, previous) << "ι=" << iota;
      }
      EXPECT_LE(v, ValueCeiling(p) * (1 + 1e-12));
      previous = v;
    }
    EXPECT_NEAR(ValueAtThreshold(p, 1e7 / p.change_rate()), ValueCeiling(p),
                1e-9 * ValueCeiling(p));
    EXPECT_EQ(ValueAtThreshold(p, kInf), ValueCeiling(p));
  }
}

TEST(CrawlValueTest, SignalsRaiseTheValue) {
  const PageModel p = Make(1, 1, 0.5, 0.3);
  EXPECT_GT(NcisValue(p, 0.5, 1), NcisValue(p, 0.5, 0));
  EXPECT_GT(NcisValue(p, 0.5, 2), NcisValue(p, 0.5, 1));
  // State (τ, n) is the same as τ_eff = τ + βn with no signal.
  EXPECT_NEAR(NcisValue(p, 0.5, 2), ValueAtThreshold(p, 0.5 + 2 * p.beta()), 1e-14);
}

TEST(CrawlValueTest, ApproxConvergesToExact) {
  const PageModel p = Make(1, 0.5, 0.3, 1.2);  // β small: many terms
  const double iota = 30.0;
  const double exact = ValueAtThreshold(p, iota);
  double previous_gap = kInf;
  for (int j : {1, 2, 4, 8, 16, 32, 64, 128}) {
    const double approx = ValueAtThreshold(p, iota, j);
    const double gap = exact - approx;
    EXPECT_GE(gap, -1e-14 * exact) << "J=" << j;  // every term is >= 0
    EXPECT_LE(gap, previous_gap) << "J=" << j;
    previous_gap = gap;
  }
  EXPECT_LT(previous_gap, 1e-12 * exact);
  EXPECT_LT(ValueAtThreshold(p, iota, 1), 0.9 * exact);  // the cut matters here
}

TEST(CrawlValueTest, FullRecallDependsOnSignalsOnly) {
  // λ = 1: α = 0, V = (μ̃/γ)[(1−ρ^n)/(1−ρ) − nρ^n]; the λ → 1 limit agrees.
  const PageModel p = Make(1, 1, 1, 0.5);
  const double rho = 0.5 / 1.5;
  for (int n = 0; n < 6; ++n) {
    const double want =
        (1 / 1.5) * ((1 - std::pow(rho, n)) / (1 - rho) - n * std::pow(rho, n));
    EXPECT_NEAR(NcisValue(p, 3.0, n), want, 1e-15);
    EXPECT_NEAR(NcisValue(p, 300.0, n), want, 1e-15);
    EXPECT_NEAR(NcisValue(Make(1, 1, 1 - 1e-8, 0.5), 3.0, n), want, 1e-6);
  }
  // Many signals: as good as a known change.
  EXPECT_NEAR(NcisValue(p, 0.0, 60), 1.0, 1e-12);
}

TEST(CrawlValueTest, ZeroChangeRateIsNeverWorthCrawling) {
  EXPECT_EQ(NcisValue(Make(1, 0, 0.5, 0.2), 100.0, 3), 0.0);
  EXPECT_EQ(ValueCeiling(Make(1, 0, 0.5, 0.2)), 0.0);
}

TEST(CrawlValueTest, ZeroRecallIsGreedy) {
  const PageModel p = Make(0.5, 0.8, 0.0, 0.9);
  EXPECT_DOUBLE_EQ(NcisValue(p, 2.0, 4),
                   CrawlValue(CrawlPolicy::Greedy(), p, 2.0, 0));
}

TEST(CrawlValueTest, HugeTermCountIsCutWithBoundedError) {
  // λ=0.01, Δ=1, ν=1, ι=1e5: ⌊ι/β⌋ ≈ 10^7 terms; the cut sum must agree with
  // the separately summed w − e^{−αι}ψ and with the ceiling it approaches.
  const PageModel p = Make(1, 1, 0.01, 1);
  EXPECT_GT(1e5 / p.beta(), 9e6);
  const double v = ValueAtThreshold(p, 1e5);
  EXPECT_NEAR(v, ValueCeiling(p), 1e-12);
  // A threshold where the terms still matter: compare with ψ and w.
  const double iota = 200.0;
  const IntervalStats s = ThresholdIntervalStats(p, iota);
  EXPECT_NEAR(ValueAtThreshold(p, iota),
              s.w - std::exp(-p.alpha() * iota) * s.psi, 1e-12);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
