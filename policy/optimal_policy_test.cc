#include "policy/optimal_policy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"
#include "policy/residual.h"
#include "policy/root_finding.h"
#include "policy/threshold_policy.h"

namespace recrawl {
namespace policy {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

double Sum(const std::vector<double>& v) {
  long double s = 0.0L;
  for (double x : v) s += x;
  return static_cast<double>(s);
}

double TotalImportance(const std::vector<PageParams>& pages) {
  long double s = 0.0L;
  for (const PageParams& p : pages) s += p.importance;
  return static_cast<double>(s);
}

// The page as the solvers see it: importance normalised, recall capped.
PageModel SolverModel(const std::vector<PageParams>& pages, size_t i) {
  PageParams p = pages[i];
  p.importance /= TotalImportance(pages);
  p.recall = std::min(p.recall, kMaxSolverRecall);
  return *PageModel::Create(p);
}

double Ceiling(const PageModel& page) {
  if (page.importance() <= 0.0 || page.change_rate() <= 0.0) return 0.0;
  return page.importance() / page.change_rate();
}

// μ, Δ ~ U[0, 1] (the paper's synthetic instances), no signals.
std::vector<PageParams> UniformPages(int m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<PageParams> pages(m);
  for (PageParams& p : pages) {
    p.importance = u(rng);
    p.change_rate = u(rng);
  }
  return pages;
}

// Pages with informative noisy signals: recall in [0.2, 1), false signals
// at up to 2Δ, some noiseless (ν = 0).
std::vector<PageParams> SignalPages(int m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<PageParams> pages = UniformPages(m, rng);
  for (PageParams& p : pages) {
    p.recall = 0.2 + 0.79 * u(rng);
    p.false_rate = u(rng) < 0.25 ? 0.0 : 2.0 * p.change_rate * u(rng);
  }
  return pages;
}

void ExpectRelNear(double actual, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(actual - expected), rel * std::fabs(expected))
      << what << ": " << actual << " vs " << expected;
}

// Checks Σ rates = R and the KKT conditions of Theorem 1 / problem (5):
// every crawled page sits on the level (V_i(ι_i) = Λ, or on the jump of a
// ν = 0 page at Λ = μ̃/Δ), every uncrawled page has μ̃/Δ <= Λ, and the
// reported rates and freshness are those of the reported thresholds.
void ExpectOptimalityConditions(const std::vector<PageParams>& pages, double bandwidth,
                                const ContinuousPolicy& sol, bool signals) {
  const size_t m = pages.size();
  ASSERT_EQ(sol.rates.size(), m);
  ASSERT_EQ(sol.thresholds.size(), m);
  ASSERT_EQ(sol.freshness.size(), m);
  ASSERT_EQ(sol.signal_crawl_probability.size(), m);
  ExpectRelNear(Sum(sol.rates), bandwidth, 1e-12, "sum of rates");
  double accuracy = 0.0;
  for (size_t i = 0; i < m; ++i) {
    const std::string where = absl::StrCat("page ", i);
    PageModel page = SolverModel(pages, i);
    if (!signals) page = page.WithoutSignals();
    const double ceiling = Ceiling(page);
    accuracy += page.importance() * sol.freshness[i];
    ASSERT_GE(sol.rates[i], 0.0) << where;
    if (sol.rates[i] == 0.0) {
      EXPECT_LE(ceiling, sol.level) << where;
      EXPECT_EQ(sol.thresholds[i], kInf) << where;
      EXPECT_EQ(sol.freshness[i], page.change_rate() > 0.0 ? 0.0 : 1.0) << where;
      continue;
    }
    EXPECT_GT(ceiling, 0.0) << where;
    const double p = sol.signal_crawl_probability[i];
    if (p < 1.0) {
      // On the jump of a noiseless-signal page: Λ = μ̃/Δ, crawled on signals.
      EXPECT_TRUE(page.signals_informative() && page.false_rate() == 0.0) << where;
      EXPECT_EQ(sol.level, ceiling) << where;
      EXPECT_EQ(sol.thresholds[i], kInf) << where;
      EXPECT_NEAR(sol.rates[i], p * page.gamma(), 1e-12 * page.gamma()) << where;
      EXPECT_NEAR(sol.freshness[i], sol.rates[i] / page.change_rate(), 1e-12) << where;
      continue;
    }
    EXPECT_EQ(p, 1.0) << where;
    ASSERT_LT(sol.thresholds[i], kInf) << where;
    // V is a difference of terms of size up to μ̃/Δ, so it carries an
    // absolute rounding floor of a few ulps of μ̃/Δ; it matters only when Λ
    // is ~1e-5 of the ceiling or less, i.e. when the budget far exceeds what
    // the pages can use (e.g. λ ≈ 1, ν = 0 pages crawled on every signal).
    EXPECT_NEAR(ValueAtThreshold(page, sol.thresholds[i]), sol.level,
                1e-9 * sol.level + 1e-14 * ceiling)
        << where << " V(threshold) = level";
    // rate = f(ι) = 1/ψ(ι) up to the rounding of ι itself: where f is steep
    // in ι (λ near 1: ι = nβ + s with β ~ 1e9, so ι's ulp is ~1e-6 of s), the
    // rate lies between f at the neighbouring doubles.
    const double iota = sol.thresholds[i];
    const IntervalStats stats = ThresholdIntervalStats(page, iota);
    const double f_lo = 1.0 / ThresholdIntervalStats(page, iota * (1 + 4 * kEpsilon)).psi;
    const double f_hi = 1.0 / ThresholdIntervalStats(page, iota * (1 - 4 * kEpsilon)).psi;
    EXPECT_GE(sol.rates[i], f_lo * (1 - 1e-12)) << where << " rate = 1/psi";
    EXPECT_LE(sol.rates[i], f_hi * (1 + 1e-12)) << where << " rate = 1/psi";
    if (f_hi - f_lo <= 1e-12 * f_lo) {
      EXPECT_NEAR(sol.freshness[i], stats.freshness(), 1e-12) << where;
    } else {
      EXPECT_NEAR(sol.freshness[i], stats.freshness(), 1e-6) << where;
    }
  }
  EXPECT_NEAR(sol.accuracy, accuracy, 1e-12);
  EXPECT_GT(sol.accuracy, 0.0);
  EXPECT_LE(sol.accuracy, 1.0);
}

// ---------------------------------------------------------------------------
// Brute force: the best split of R over a grid, for n <= 4 pages. Each page's
// objective is tabulated at rates k·R/N first, so the enumeration of the
// C(N + n − 1, n − 1) splits only adds numbers.

double BestGridObjective(int n, int steps, const std::function<double(int, double)>& objective,
                         double bandwidth) {
  std::vector<std::vector<double>> table(n, std::vector<double>(steps + 1));
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= steps; ++k) {
      table[i][k] = objective(i, bandwidth * k / steps);
    }
  }
  double best = -kInf;
  std::function<void(int, int, double)> rec = [&](int i, int left, double acc) {
    if (i == n - 1) {
      best = std::max(best, acc + table[i][left]);
      return;
    }
    for (int k = 0; k <= left; ++k) rec(i + 1, left - k, acc + table[i][k]);
  };
  rec(0, steps, 0.0);
  return best;
}

// μ̃·freshness of a page crawled at frequency f by the best policy of
// Theorem 1's family with that frequency: the threshold ι with 1/ψ(ι) = f
// (ψ increases in ι), or for ν = 0 below f = γ the signal-thinning segment.
double ThresholdObjectiveAtRate(const PageModel& page, double f) {
  if (page.change_rate() <= 0.0) return page.importance();
  if (!(f > 0.0)) return 0.0;
  if (!page.signals_informative()) {
    return PeriodicObjective(f, page.importance(), page.change_rate());
  }
  if (page.false_rate() <= 0.0 && f <= page.gamma()) {
    return page.importance() * f / page.change_rate();
  }
  const double interval = 1.0 / f;
  const double scale = 1.0 / page.change_rate();
  const double iota =
      FindRootIncreasing([&](double x) { return ThresholdIntervalStats(page, x).psi - interval; },
                         0.0, scale, 1e13 * scale);
  if (std::isinf(iota)) return 0.0;
  return page.importance() * ThresholdIntervalStats(page, iota).freshness();
}

// ---------------------------------------------------------------------------

TEST(InverseResidual1Test, InvertsR1AcrossTheRange) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 2000; ++k) {
    // y from 1e-300 to 1 − 1e-15, log-uniform on each side of 1/2.
    const bool low = k % 2 == 0;
    const double e = -std::pow(10.0, std::log10(300.0) * u(rng));
    const double tail = std::pow(10.0, low ? e : e * 15.0 / 300.0);
    const double y = low ? 0.5 * tail : 1.0 - 0.5 * tail;
    const double x = InverseResidual1(y, 1.0 - y);
    ASSERT_TRUE(std::isfinite(x) && x > 0.0) << y;
    if (y <= 0.5) {
      ExpectRelNear(Residual(1, x), y, 1e-13, absl::StrCat("R1 at y=", y));
    } else {
      ExpectRelNear(ResidualComplement(1, x), 1.0 - y, 1e-13, absl::StrCat("1-R1 at y=", y));
    }
  }
  EXPECT_EQ(InverseResidual1(0.0, 1.0), 0.0);
  EXPECT_EQ(InverseResidual1(1.0, 0.0), kInf);
}

TEST(PeriodicObjectiveTest, EdgeCases) {
  EXPECT_EQ(PeriodicObjective(0.0, 2.0, 1.0), 0.0);
  EXPECT_EQ(PeriodicObjective(1.0, 2.0, 0.0), 2.0);  // never changes
  // ξ = Δ: (μ/Δ)·Δ·(1 − e^{−1}).
  EXPECT_NEAR(PeriodicObjective(0.5, 2.0, 0.5), 2.0 * (1.0 - std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(PeriodicObjective(1e12, 2.0, 1.0), 2.0, 1e-11);
}

// ---------------------------------------------------------------------------
// SolveLevelForBudget on curves with a closed-form solution.

TEST(SolveLevelForBudgetTest, ContinuousCurves) {
  // rate_i(Λ) = a_i (1/Λ − 1/c_i): Σ over pages with c_i > Λ is explicit.
  const std::vector<double> a = {1.0, 2.0, 0.5, 3.0};
  const std::vector<double> c = {1.0, 0.5, 4.0, 0.25};
  auto rate = [&](size_t i, double level) { return a[i] * (1 / level - 1 / c[i]); };
  for (double budget : {0.01, 0.3, 1.0, 5.0, 123.0}) {
    absl::StatusOr<LevelSolution> sol = SolveLevelForBudget(c, rate, budget);
    ASSERT_TRUE(sol.ok()) << sol.status();
    // Check against the explicit solution for the active set it chose.
    double sa = 0, sac = 0;
    for (size_t i = 0; i < 4; ++i) {
      if (c[i] > sol->level) {
        sa += a[i];
        sac += a[i] / c[i];
      } else {
        EXPECT_EQ(sol->rates[i], 0.0);
      }
    }
    ExpectRelNear(sol->level, sa / (budget + sac), 1e-13, "level");
    ExpectRelNear(Sum(sol->rates), budget, 1e-13, "sum");
  }
}

TEST(SolveLevelForBudgetTest, InfiniteRatesAtTheLowerEnd) {
  // A page whose rate is +∞ below a level (its threshold rounds to 0 there,
  // as ThresholdForValue's can at tiny levels): the bracket's lower end then
  // totals +∞. Brent's interpolation would turn that into a NaN level, and
  // the bisection on the doubles never ended (a full fig6 run hung on it).
  // rate = c − Λ for Λ ≥ 0.5: 1 − Λ = 0.1 gives Λ = 0.9.
  const std::vector<double> c = {1.0};
  auto rate = [&](size_t, double level) {
    return level < 0.5 ? std::numeric_limits<double>::infinity() : 1.0 - level;
  };
  absl::StatusOr<LevelSolution> sol = SolveLevelForBudget(c, rate, 0.1);
  ASSERT_TRUE(sol.ok()) << sol.status();
  ExpectRelNear(sol->level, 0.9, 1e-13, "level");
  ExpectRelNear(sol->rates[0], 0.1, 1e-12, "rate");
}

TEST(SolveLevelForBudgetTest, NotANumberRateIsAnError) {
  const std::vector<double> c = {1.0, 2.0};
  auto rate = [&](size_t i, double level) {
    return i == 1 && level < 0.5 ? std::nan("") : c[i] - level;
  };
  absl::StatusOr<LevelSolution> sol = SolveLevelForBudget(c, rate, 2.5);
  ASSERT_FALSE(sol.ok());
  EXPECT_THAT(sol.status().message(), HasSubstr("rate of page 1"));
}

TEST(SolveLevelForBudgetTest, BudgetInsideAJump) {
  // Page 0: continuous, rate 1/Λ − 1 below Λ = 1. Page 1: rate 2 + (0.5 − Λ)
  // below Λ = 0.5, then 0: it jumps from 2 to 0 at its ceiling.
  const std::vector<double> c = {1.0, 0.5};
  auto rate = [&](size_t i, double level) { return i == 0 ? 1 / level - 1 : 2 + (0.5 - level); };
  // At Λ = 0.5: page 0 takes 1; page 1 anything in [0, 2].
  absl::StatusOr<LevelSolution> sol = SolveLevelForBudget(c, rate, 2.5);
  ASSERT_TRUE(sol.ok());
  EXPECT_EQ(sol->level, 0.5);
  EXPECT_NEAR(sol->rates[0], 1.0, 1e-15);
  EXPECT_NEAR(sol->rates[1], 1.5, 1e-15);
  EXPECT_EQ(sol->rates_at_level[1], 0.0);  // interpolated inside the jump
  EXPECT_NEAR(sol->rates_at_level[0], 1.0, 1e-15);
  // Above the jump: continuous again, Λ < 0.5: 1/Λ − 1 + 2.5 − Λ = 4.
  sol = SolveLevelForBudget(c, rate, 4.0);
  ASSERT_TRUE(sol.ok());
  EXPECT_LT(sol->level, 0.5);
  ExpectRelNear(sol->level, (0.5 * (-2.5 + std::sqrt(2.5 * 2.5 + 4))), 1e-13, "level");
  ExpectRelNear(sol->rates[1], sol->rates_at_level[1], 1e-14, "page 1");
  // Below the jump: only page 0, 1/Λ − 1 = 0.5.
  sol = SolveLevelForBudget(c, rate, 0.5);
  ASSERT_TRUE(sol.ok());
  ExpectRelNear(sol->level, 1 / 1.5, 1e-13, "level");
  EXPECT_EQ(sol->rates[1], 0.0);
}

TEST(SolveLevelForBudgetTest, SteepCurveNearItsCeiling) {
  // rate_0(Λ) = 1/log(1/(1 − Λ)) on (0, 1): rates below ~1/37 are reached
  // only within an ulp of the ceiling; the solution interpolates there.
  // Page 1 takes 1/Λ − 1 up to its ceiling 2 (so 1 at Λ = 0.5, 0 at 1).
  const std::vector<double> c = {1.0, 2.0};
  auto rate = [&](size_t i, double level) {
    return i == 0 ? -1 / std::log1p(-level) : 1 / level - 0.5;
  };
  // At Λ → 1: page 1 has 0.5; page 0 anything in (0, ~0.028).
  for (double budget : {0.5 + 1e-3, 0.5 + 1e-9, 0.5 + 0.02}) {
    absl::StatusOr<LevelSolution> sol = SolveLevelForBudget(c, rate, budget);
    ASSERT_TRUE(sol.ok());
    ExpectRelNear(Sum(sol->rates), budget, 1e-15, "sum");
    ExpectRelNear(sol->level, 1.0, 1e-15, "level");
    EXPECT_GT(sol->rates[0], 0.0);
  }
}

TEST(SolveLevelForBudgetTest, RejectsBadInput) {
  auto rate = [](size_t, double level) { return 1 / level; };
  EXPECT_FALSE(SolveLevelForBudget({1.0}, rate, 0.0).ok());
  EXPECT_FALSE(SolveLevelForBudget({1.0}, rate, kInf).ok());
  EXPECT_FALSE(SolveLevelForBudget({0.0, 0.0}, rate, 1.0).ok());
  EXPECT_FALSE(SolveLevelForBudget({-1.0}, rate, 1.0).ok());
  EXPECT_FALSE(SolveLevelForBudget({kInf}, rate, 1.0).ok());
}

// ---------------------------------------------------------------------------
// (a) Problem (5).

TEST(NoSignalBaselineTest, KktAndBudgetOnRandomInstances) {
  std::mt19937_64 rng(11);
  for (int m : {1, 2, 10, 300}) {
    for (double bandwidth : {0.05, 1.0, 30.0, 1000.0}) {
      const std::vector<PageParams> pages = UniformPages(m, rng);
      absl::StatusOr<ContinuousPolicy> sol = SolveNoSignalBaseline(pages, bandwidth);
      ASSERT_TRUE(sol.ok()) << sol.status();
      SCOPED_TRACE(absl::StrCat("m=", m, " R=", bandwidth));
      ExpectOptimalityConditions(pages, bandwidth, *sol, /*signals=*/false);
      double objective = 0.0;
      for (int i = 0; i < m; ++i) {
        if (sol->rates[i] > 0) {
          EXPECT_NEAR(sol->thresholds[i] * sol->rates[i], 1.0, 1e-12);
        }
        objective += PeriodicObjective(sol->rates[i], pages[i].importance, pages[i].change_rate);
      }
      EXPECT_NEAR(sol->accuracy, objective / TotalImportance(pages), 1e-12);
    }
  }
}

TEST(NoSignalBaselineTest, AccuracyMatchesThePaper) {
  // docs/design.md, "Checks": μ, Δ ~ U[0, 1], R = 100; single instances vary by about
  // ±0.01, so the mean of several is compared.
  struct Case {
    int m;
    double expected;
    int instances;
  };
  std::mt19937_64 rng(2023);
  for (const Case& c : {Case{100, 0.83, 10}, Case{200, 0.71, 10}, Case{500, 0.51, 10},
                        Case{1000, 0.36, 10}, Case{10000, 0.12, 3}}) {
    double mean = 0.0;
    for (int k = 0; k < c.instances; ++k) {
      const std::vector<PageParams> pages = UniformPages(c.m, rng);
      absl::StatusOr<ContinuousPolicy> sol = SolveNoSignalBaseline(pages, 100.0);
      ASSERT_TRUE(sol.ok()) << sol.status();
      ExpectRelNear(Sum(sol->rates), 100.0, 1e-12, "sum of rates");
      mean += sol->accuracy / c.instances;
    }
    EXPECT_NEAR(mean, c.expected, 0.01) << "m=" << c.m;
    RecordProperty(absl::StrCat("mean_accuracy_m", c.m), absl::StrCat(mean));
  }
}

TEST(NoSignalBaselineTest, NoGridSplitIsBetter) {
  std::mt19937_64 rng(5);
  for (int n = 2; n <= 4; ++n) {
    for (int rep = 0; rep < 3; ++rep) {
      const std::vector<PageParams> pages = UniformPages(n, rng);
      const double bandwidth = 0.2 + 2.0 * rep;
      absl::StatusOr<ContinuousPolicy> sol = SolveNoSignalBaseline(pages, bandwidth);
      ASSERT_TRUE(sol.ok());
      const double total = TotalImportance(pages);
      const double grid = BestGridObjective(
          n, n == 4 ? 120 : 400,
          [&](int i, double rate) {
            return PeriodicObjective(rate, pages[i].importance / total, pages[i].change_rate);
          },
          bandwidth);
      EXPECT_LE(grid, sol->accuracy + 1e-12) << "n=" << n << " rep=" << rep;
      EXPECT_GT(grid, sol->accuracy - 1e-3) << "grid should come close";
    }
  }
}

TEST(NoSignalBaselineTest, PagesThatNeedNoCrawl) {
  // μ = 0: never crawled. Δ = 0: never crawled, always fresh.
  std::vector<PageParams> pages = {
      {1.0, 0.5, 0.0, 0.0}, {0.0, 0.7, 0.0, 0.0}, {2.0, 0.0, 0.0, 0.0}};
  absl::StatusOr<ContinuousPolicy> sol = SolveNoSignalBaseline(pages, 3.0);
  ASSERT_TRUE(sol.ok());
  EXPECT_NEAR(sol->rates[0], 3.0, 1e-14);
  EXPECT_EQ(sol->rates[1], 0.0);
  EXPECT_EQ(sol->rates[2], 0.0);
  EXPECT_EQ(sol->freshness[2], 1.0);
  const double fresh0 = PeriodicObjective(3.0, 1.0, 0.5);
  EXPECT_NEAR(sol->accuracy, (fresh0 + 2.0) / 3.0, 1e-14);
}

// ---------------------------------------------------------------------------
// (b) Azar et al., Algorithm 2.

// Independent solver for max F2: bisection on Λ in the KKT form
// ρ_i = max(0, sqrt(μ_i Δ_i / Λ) − Δ_i), Σρ = R.
std::vector<double> AzarByBisection(const std::vector<PageParams>& pages, double bandwidth) {
  auto rates_at = [&](double level) {
    std::vector<double> rho;
    for (const PageParams& p : pages) {
      rho.push_back(
          p.change_rate > 0 && p.importance > 0
              ? std::max(0.0, std::sqrt(p.importance * p.change_rate / level) - p.change_rate)
              : 0.0);
    }
    return rho;
  };
  double lo = 1e-300, hi = 1e300;  // Σρ(lo) > R > Σρ(hi) = 0
  for (int it = 0; it < 3000 && lo < hi; ++it) {
    const double mid = std::sqrt(lo) * std::sqrt(hi);
    if (mid <= lo || mid >= hi) break;
    (Sum(rates_at(mid)) > bandwidth ? lo : hi) = mid;
  }
  return rates_at(hi);
}

TEST(AzarRandomizedTest, MatchesBisectionAndKkt) {
  std::mt19937_64 rng(17);
  for (int m : {1, 3, 20, 500}) {
    for (double bandwidth : {0.1, 5.0, 200.0}) {
      const std::vector<PageParams> pages = UniformPages(m, rng);
      absl::StatusOr<RandomizedPolicy> sol = SolveAzarRandomized(pages, bandwidth);
      ASSERT_TRUE(sol.ok()) << sol.status();
      SCOPED_TRACE(absl::StrCat("m=", m, " R=", bandwidth));
      ExpectRelNear(Sum(sol->rates), bandwidth, 1e-12, "sum of rates");
      const std::vector<double> reference = AzarByBisection(pages, bandwidth);
      const double total = TotalImportance(pages);
      double f2 = 0.0, periodic = 0.0;
      for (int i = 0; i < m; ++i) {
        EXPECT_NEAR(sol->rates[i], reference[i], 1e-9 * bandwidth) << i;
        const double mu = pages[i].importance / total;
        const double delta = pages[i].change_rate;
        const double rho = sol->rates[i];
        // KKT of F2: ∂/∂ρ = μ̃Δ/(ρ + Δ)² = Λ where ρ > 0, μ̃/Δ <= Λ where 0.
        if (rho > 0) {
          ExpectRelNear(mu * delta / ((rho + delta) * (rho + delta)), sol->level, 1e-9, "F2 KKT");
        } else {
          EXPECT_LE(mu / delta, sol->level * (1 + 1e-12));
        }
        f2 += mu * rho / (rho + delta);
        periodic += PeriodicObjective(rho, mu, delta);
      }
      EXPECT_NEAR(sol->randomized_accuracy, f2, 1e-12);
      EXPECT_NEAR(sol->periodic_accuracy, periodic, 1e-12);
      EXPECT_GE(sol->periodic_accuracy, sol->randomized_accuracy);
      // Problem (5) optimises the periodic objective directly.
      absl::StatusOr<ContinuousPolicy> baseline = SolveNoSignalBaseline(pages, bandwidth);
      ASSERT_TRUE(baseline.ok());
      EXPECT_GE(baseline->accuracy, sol->periodic_accuracy - 1e-12);
    }
  }
}

TEST(AzarRandomizedTest, DropsPagesWithLowRatio) {
  // Page 1: μ/Δ tiny; with little bandwidth it must get nothing.
  std::vector<PageParams> pages = {{1.0, 1.0, 0, 0}, {0.001, 1.0, 0, 0}};
  absl::StatusOr<RandomizedPolicy> sol = SolveAzarRandomized(pages, 0.5);
  ASSERT_TRUE(sol.ok());
  EXPECT_EQ(sol->rates[1], 0.0);
  EXPECT_NEAR(sol->rates[0], 0.5, 1e-15);
  // F2 = μ̃ ρ/(ρ + Δ) = (1/1.001)(0.5/1.5).
  EXPECT_NEAR(sol->randomized_accuracy, (1 / 1.001) * (0.5 / 1.5), 1e-15);
}

// ---------------------------------------------------------------------------
// (c) Theorem 1.

TEST(WithSignalsTest, WithoutSignalsEqualsBaseline) {
  std::mt19937_64 rng(23);
  for (int m : {1, 5, 200}) {
    std::vector<PageParams> pages = UniformPages(m, rng);
    absl::StatusOr<ContinuousPolicy> a = SolveNoSignalBaseline(pages, 10.0);
    absl::StatusOr<ContinuousPolicy> c = SolveWithSignals(pages, 10.0);
    ASSERT_TRUE(a.ok() && c.ok());
    EXPECT_EQ(a->level, c->level);
    EXPECT_EQ(a->rates, c->rates);
    EXPECT_EQ(a->thresholds, c->thresholds);
    EXPECT_EQ(a->accuracy, c->accuracy);
    // Only false signals (λ = 0): no information, same policy.
    for (PageParams& p : pages) p.false_rate = 0.3;
    absl::StatusOr<ContinuousPolicy> noise = SolveWithSignals(pages, 10.0);
    ASSERT_TRUE(noise.ok());
    EXPECT_EQ(a->rates, noise->rates);
    EXPECT_EQ(a->accuracy, noise->accuracy);
  }
}

TEST(WithSignalsTest, KktBudgetAndBeatsBaseline) {
  std::mt19937_64 rng(29);
  for (int m : {1, 4, 40}) {
    for (double bandwidth : {0.3, 4.0, 50.0}) {
      const std::vector<PageParams> pages = SignalPages(m, rng);
      absl::StatusOr<ContinuousPolicy> sol = SolveWithSignals(pages, bandwidth);
      ASSERT_TRUE(sol.ok()) << sol.status();
      SCOPED_TRACE(absl::StrCat("m=", m, " R=", bandwidth));
      ExpectOptimalityConditions(pages, bandwidth, *sol, /*signals=*/true);
      absl::StatusOr<ContinuousPolicy> baseline = SolveNoSignalBaseline(pages, bandwidth);
      ASSERT_TRUE(baseline.ok());
      EXPECT_GE(sol->accuracy, baseline->accuracy * (1 - 1e-9));
    }
  }
}

TEST(WithSignalsTest, SignalsRaiseAccuracyMarkedly) {
  // Precise signals with high recall: far better than periodic crawling.
  std::mt19937_64 rng(31);
  std::vector<PageParams> pages = UniformPages(100, rng);
  for (PageParams& p : pages) {
    p.recall = 0.9;
    p.false_rate = 0.05 * p.change_rate;
  }
  absl::StatusOr<ContinuousPolicy> sol = SolveWithSignals(pages, 20.0);
  absl::StatusOr<ContinuousPolicy> baseline = SolveNoSignalBaseline(pages, 20.0);
  ASSERT_TRUE(sol.ok() && baseline.ok());
  ExpectOptimalityConditions(pages, 20.0, *sol, /*signals=*/true);
  EXPECT_GT(sol->accuracy, baseline->accuracy + 0.05);
}

TEST(WithSignalsTest, NoGridSplitIsBetter) {
  std::mt19937_64 rng(37);
  for (int n = 2; n <= 4; ++n) {
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<PageParams> pages = SignalPages(n, rng);
      if (rep == 1) pages[0].false_rate = 0.0;  // a page with a rate jump
      const double bandwidth = 0.3 + 1.5 * rep;
      absl::StatusOr<ContinuousPolicy> sol = SolveWithSignals(pages, bandwidth);
      ASSERT_TRUE(sol.ok()) << sol.status();
      std::vector<PageModel> models;
      for (int i = 0; i < n; ++i) models.push_back(SolverModel(pages, i));
      const double grid = BestGridObjective(
          n, n == 4 ? 40 : 100,
          [&](int i, double rate) { return ThresholdObjectiveAtRate(models[i], rate); }, bandwidth);
      EXPECT_LE(grid, sol->accuracy + 1e-9) << "n=" << n << " rep=" << rep;
      EXPECT_GT(grid, sol->accuracy - 1e-2) << "grid should come close";
      // The solver's own split, evaluated the grid's way, gives its accuracy.
      double own = 0.0;
      for (int i = 0; i < n; ++i) {
        own += ThresholdObjectiveAtRate(models[i], sol->rates[i]);
      }
      EXPECT_NEAR(own, sol->accuracy, 1e-9);
    }
  }
}

TEST(WithSignalsTest, BudgetInsideTheJumpOfANoiselessPage) {
  // One page, ν = 0, λ = 0.8, Δ = 1: any finite threshold crawls at >= γ =
  // 0.8, so R = 0.5 must be spent by following each signal with p = 0.625.
  std::vector<PageParams> pages = {{1.0, 1.0, 0.8, 0.0}};
  absl::StatusOr<ContinuousPolicy> sol = SolveWithSignals(pages, 0.5);
  ASSERT_TRUE(sol.ok()) << sol.status();
  EXPECT_NEAR(sol->rates[0], 0.5, 1e-15);
  EXPECT_EQ(sol->level, 1.0);  // μ̃/Δ
  EXPECT_EQ(sol->thresholds[0], kInf);
  EXPECT_NEAR(sol->signal_crawl_probability[0], 0.625, 1e-15);
  EXPECT_NEAR(sol->accuracy, 0.5, 1e-15);  // λ p
  ExpectOptimalityConditions(pages, 0.5, *sol, /*signals=*/true);
  // More bandwidth: a finite threshold again.
  sol = SolveWithSignals(pages, 2.0);
  ASSERT_TRUE(sol.ok());
  EXPECT_LT(sol->thresholds[0], kInf);
  EXPECT_LT(sol->level, 1.0);
  ExpectOptimalityConditions(pages, 2.0, *sol, /*signals=*/true);
}

TEST(WithSignalsTest, FullRecallPagesAreHandled) {
  // λ = 1 (α = 0) with and without false signals, next to ordinary pages.
  std::vector<PageParams> pages = {
      {1.0, 0.5, 1.0, 0.2}, {0.7, 0.9, 1.0, 0.0}, {0.5, 0.3, 0.5, 0.1}, {0.9, 0.6, 0.0, 0.0}};
  for (double bandwidth : {0.2, 1.0, 5.0}) {
    absl::StatusOr<ContinuousPolicy> sol = SolveWithSignals(pages, bandwidth);
    ASSERT_TRUE(sol.ok()) << sol.status();
    SCOPED_TRACE(absl::StrCat("R=", bandwidth));
    ExpectOptimalityConditions(pages, bandwidth, *sol, /*signals=*/true);
    // Continuity in λ: recall 1 − 1e-7 gives nearly the same policy.
    std::vector<PageParams> near = pages;
    near[0].recall = near[1].recall = 1.0 - 1e-7;
    absl::StatusOr<ContinuousPolicy> near_sol = SolveWithSignals(near, bandwidth);
    ASSERT_TRUE(near_sol.ok());
    EXPECT_NEAR(sol->accuracy, near_sol->accuracy, 1e-5);
    for (size_t i = 0; i < pages.size(); ++i) {
      EXPECT_NEAR(sol->rates[i], near_sol->rates[i], 1e-4 * bandwidth) << i;
    }
  }
}

// ---------------------------------------------------------------------------
// Input validation, shared by the three solvers.

TEST(OptimalPolicyValidationTest, RejectsInvalidInput) {
  using Solver = std::function<absl::Status(const std::vector<PageParams>&, double)>;
  const Solver solvers[] = {
      [](const std::vector<PageParams>& p, double r) {
        return SolveNoSignalBaseline(p, r).status();
      },
      [](const std::vector<PageParams>& p, double r) { return SolveAzarRandomized(p, r).status(); },
      [](const std::vector<PageParams>& p, double r) { return SolveWithSignals(p, r).status(); },
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<PageParams> good = {{1.0, 1.0, 0.5, 0.1}, {2.0, 0.5, 0.0, 0.0}};
  for (const Solver& solve : solvers) {
    EXPECT_TRUE(solve(good, 1.0).ok());
    for (double r : {0.0, -1.0, nan, kInf}) {
      const absl::Status s = solve(good, r);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(s.message(), HasSubstr("bandwidth"));
    }
    std::vector<PageParams> bad = good;
    bad[1].importance = -1.0;
    EXPECT_THAT(solve(bad, 1.0).message(), HasSubstr("page 1: importance"));
    bad = good;
    bad[0].change_rate = nan;
    EXPECT_THAT(solve(bad, 1.0).message(), HasSubstr("page 0: change_rate"));
    bad = good;
    bad[1].recall = 1.5;
    EXPECT_THAT(solve(bad, 1.0).message(), HasSubstr("page 1: recall"));
    bad = good;
    bad[0].false_rate = kInf;
    EXPECT_THAT(solve(bad, 1.0).message(), HasSubstr("page 0: false_rate"));
    EXPECT_FALSE(solve({}, 1.0).ok());
    EXPECT_FALSE(solve({{0.0, 1.0, 0, 0}}, 1.0).ok());  // no importance
    EXPECT_THAT(solve({{1.0, 0.0, 0, 0}}, 1.0).message(),
                HasSubstr("change_rate"));  // nothing ever changes
  }
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
