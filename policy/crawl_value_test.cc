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
  EXPECT_DOUBLE_EQ(CrawlValue(CrawlPolicy::GreedyCis(), Make(1, 1.3, 0.6, 0.4), 0.1, 1), 1 / 1.3);
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
      // Strictly increasing until it comes within the sum's truncation
      // tolerance of the ceiling.
      if (previous < ValueCeiling(p) * (1 - 10 * kValueTruncationTolerance)) {
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
    // Every term is >= 0; the exact sum is cut once its tail is below
    // kValueTruncationTolerance, which a long APPROX-J may sum further.
    EXPECT_GE(gap, -kValueTruncationTolerance * exact) << "J=" << j;
    EXPECT_LE(gap, previous_gap) << "J=" << j;
    previous_gap = gap;
  }
  EXPECT_LT(std::fabs(previous_gap), kValueTruncationTolerance * exact);
  EXPECT_LT(ValueAtThreshold(p, iota, 1), 0.9 * exact);  // the cut matters here
}

TEST(CrawlValueTest, FullRecallDependsOnSignalsOnly) {
  // λ = 1: α = 0, V = (μ̃/γ)[(1−ρ^n)/(1−ρ) − nρ^n]; the λ → 1 limit agrees.
  const PageModel p = Make(1, 1, 1, 0.5);
  const double rho = 0.5 / 1.5;
  for (int n = 0; n < 6; ++n) {
    const double want = (1 / 1.5) * ((1 - std::pow(rho, n)) / (1 - rho) - n * std::pow(rho, n));
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
  EXPECT_DOUBLE_EQ(NcisValue(p, 2.0, 4), CrawlValue(CrawlPolicy::Greedy(), p, 2.0, 0));
}

TEST(CrawlValueTest, HugeTermCountIsCutWithBoundedError) {
  // λ=0.01, Δ=1, ν=1, ι=1e5: ⌊ι/β⌋ ≈ 10^7 terms; the cut sum must agree with
  // the separately summed w − e^{−αι}ψ and with the ceiling it approaches.
  const PageModel p = Make(1, 1, 0.01, 1);
  EXPECT_GT(1e5 / p.beta(), 9e6);
  const double v = ValueAtThreshold(p, 1e5);
  const double tolerance = 2 * kValueTruncationTolerance * ValueCeiling(p);
  EXPECT_NEAR(v, ValueCeiling(p), tolerance);
  // A threshold where the terms still matter: compare with ψ and w.
  const double iota = 200.0;
  const IntervalStats s = ThresholdIntervalStats(p, iota);
  EXPECT_NEAR(ValueAtThreshold(p, iota), s.w - std::exp(-p.alpha() * iota) * s.psi, tolerance);
}

// dV/dι from NcisValueGrowth against a finite difference, and the growth
// bound V(ι + h) <= V(ι) + slope h + slope_rise h²/2 that the scheduling
// index relies on, for GREEDY, the noiseless case and NCIS (exact and
// APPROX-J) at random states.
TEST(CrawlValueTest, SlopeMatchesDerivativeAndBoundsGrowth) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const double delta = 0.05 + u(rng);
    const double lambda = trial % 4 == 0 ? 0.0 : u(rng);
    const double nu = trial % 4 == 1 ? 0.0 : 0.05 + 0.6 * u(rng);
    const PageModel page = Make(0.1 + u(rng), delta, lambda, nu);
    const int max_terms = trial % 3 == 0 ? 0 : trial % 3;
    const double tau = 6.0 * u(rng) / delta;
    const int64_t n = nu > 0.0 ? trial % 3 : 0;
    const ValueGrowth g = NcisValueGrowth(page, tau, n, max_terms);
    ASSERT_EQ(g.value, NcisValue(page, tau, n, max_terms));
    // ι moves with τ between signals; V is smooth except where ι − iβ
    // crosses 0, so the difference is one-sided and small.
    const double eps = 1e-6 / delta;
    const double ahead = NcisValue(page, tau + eps, n, max_terms);
    const double fd = (ahead - g.value) / eps;
    EXPECT_NEAR(g.slope, fd, 1e-4 * (std::fabs(fd) + 1e-3 * g.value)) << "trial " << trial;
    for (double h : {0.01, 0.3, 1.0, 5.0}) {
      const double later = NcisValue(page, tau + h / delta, n, max_terms);
      const double dt = h / delta;
      EXPECT_LE(later, g.value + g.slope * dt + 0.5 * g.slope_rise * dt * dt + 1e-12 * g.value)
          << "trial " << trial << " h " << h;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1600);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
