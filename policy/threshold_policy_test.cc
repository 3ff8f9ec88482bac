// Checks ψ, w and V against a Monte Carlo simulation of the threshold policy
// itself (crawl when τ_eff reaches ι), not against the formulas.
#include "policy/threshold_policy.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/crawl_policy.h"
#include "policy/crawl_value.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Estimate {
  double mean = 0.0;
  double stderr_ = 0.0;
};

struct SimulatedInterval {
  Estimate psi, w, value;
};

// Simulates `intervals` crawl intervals of a page living in `world`, crawled
// by a threshold policy whose τ_eff uses `belief`'s β (a signal is worth
// belief.beta() of elapsed time; β = ∞: crawl on any signal; β = 0: signals
// ignored). Per interval: L = length, F = time fresh (until the first change),
// X = F − e^{−α ι} L with α of the belief, whose mean is V/μ̃ (Lemma 3's form).
SimulatedInterval Simulate(const PageModel& world, const PageModel& belief, double iota,
                           int intervals, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double delta = world.change_rate();
  const double nu = world.false_rate();
  const double event_rate = delta + nu;
  std::exponential_distribution<double> next_event(event_rate > 0 ? event_rate : 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double beta = belief.beta();
  const double discount = std::exp(-belief.alpha() * iota);
  double sum[3] = {0, 0, 0}, sum_sq[3] = {0, 0, 0};
  for (int k = 0; k < intervals; ++k) {
    double t = 0.0;
    int64_t signals = 0;
    double first_change = kInf;
    double length;
    while (true) {
      // Time at which τ_eff = t + β·signals would reach ι with no new event.
      double due = iota;
      if (signals > 0) {
        due = beta == kInf ? t : iota - beta * static_cast<double>(signals);
      }
      const double event = event_rate > 0 ? t + next_event(rng) : kInf;
      if (due <= event) {
        length = std::max(due, t);
        break;
      }
      t = event;
      bool signal;
      if (uniform(rng) * event_rate < delta) {  // a change
        if (first_change == kInf) first_change = t;
        signal = uniform(rng) < world.recall();
      } else {
        signal = true;  // a false signal
      }
      if (signal && beta > 0.0) ++signals;
    }
    const double fresh = std::min(first_change, length);
    const double x[3] = {length, fresh, fresh - discount * length};
    for (int j = 0; j < 3; ++j) {
      sum[j] += x[j];
      sum_sq[j] += x[j] * x[j];
    }
  }
  SimulatedInterval out;
  Estimate* e[3] = {&out.psi, &out.w, &out.value};
  for (int j = 0; j < 3; ++j) {
    const double mean = sum[j] / intervals;
    const double var = std::max(0.0, sum_sq[j] / intervals - mean * mean);
    e[j]->mean = mean;
    e[j]->stderr_ = std::sqrt(var / intervals);
  }
  return out;
}

PageModel Make(double mu, double delta, double lambda, double nu) {
  return *PageModel::Create({mu, delta, lambda, nu});
}

void ExpectWithin(double closed_form, const Estimate& mc, const char* what, const PageModel& p,
                  double iota) {
  EXPECT_LE(std::fabs(closed_form - mc.mean), 4.0 * mc.stderr_ + 1e-9 * std::fabs(mc.mean))
      << what << ": closed form " << closed_form << " vs simulated " << mc.mean << " ± "
      << mc.stderr_ << " (Δ=" << p.change_rate() << " λ=" << p.recall() << " ν=" << p.false_rate()
      << " ι=" << iota << ")";
}

// ψ, w and V of every policy against simulation: each policy's closed form
// describes the threshold policy in the world it believes in.
void CheckAgainstSimulation(const PageModel& page, double iota, uint64_t seed) {
  for (CrawlPolicy policy :
       {CrawlPolicy::Greedy(), CrawlPolicy::GreedyCis(), CrawlPolicy::GreedyNcis()}) {
    const PageModel belief = policy.Belief(page);
    const IntervalStats stats = ThresholdIntervalStats(belief, iota);
    const SimulatedInterval sim = Simulate(belief, belief, iota, 100000, seed);
    SCOPED_TRACE(policy.Name());
    ExpectWithin(stats.psi, sim.psi, "psi", belief, iota);
    ExpectWithin(stats.w, sim.w, "w", belief, iota);
    ExpectWithin(CrawlValue(policy, page, iota, 0) / page.importance(), sim.value, "V", belief,
                 iota);
  }
}

TEST(ThresholdPolicyTest, DesignBriefExample) {
  // Δ=1, λ=0.5, ν=0.3, ι=2: ψ ≈ 0.998, w ≈ 0.712 (docs/design.md, "Checks").
  const IntervalStats s = ThresholdIntervalStats(Make(1, 1, 0.5, 0.3), 2.0);
  EXPECT_NEAR(s.psi, 0.998, 0.001);
  EXPECT_NEAR(s.w, 0.712, 0.001);
}

TEST(ThresholdPolicyTest, RandomParametersMatchSimulation) {
  std::mt19937_64 rng(20261121);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 24; ++k) {
    const double delta = 0.1 + 1.9 * u(rng);
    const double lambda = 0.05 + 0.9 * u(rng);
    const double nu = 0.05 + 1.5 * u(rng);
    const double iota = (0.2 + 4.0 * u(rng)) / delta;
    CheckAgainstSimulation(Make(0.5 + u(rng), delta, lambda, nu), iota, 1000 + k);
  }
}

TEST(ThresholdPolicyTest, EdgeCasesMatchSimulation) {
  CheckAgainstSimulation(Make(1, 1, 0.5, 0.0), 1.5, 1);    // ν = 0: β = ∞
  CheckAgainstSimulation(Make(1, 1, 0.0, 0.7), 1.5, 2);    // λ = 0: uninformative
  CheckAgainstSimulation(Make(1, 1, 0.0, 0.0), 1.5, 3);    // γ = 0: no signals
  CheckAgainstSimulation(Make(1, 0.3, 0.99, 0.05), 4, 4);  // β large
  CheckAgainstSimulation(Make(1, 2, 0.2, 3.0), 6, 5);      // β small, many terms
}

TEST(ThresholdPolicyTest, GreedyIgnoresSignalsInANoisyWorld) {
  // GREEDY's interval in a world with signals: it still crawls every ι.
  const PageModel page = Make(1, 0.8, 0.6, 0.4);
  const double iota = 1.7;
  const SimulatedInterval sim = Simulate(page, page.WithoutSignals(), iota, 100000, 9);
  const IntervalStats stats = ThresholdIntervalStats(page.WithoutSignals(), iota);
  ExpectWithin(stats.psi, sim.psi, "psi", page, iota);
  ExpectWithin(stats.w, sim.w, "w", page, iota);
}

TEST(ThresholdPolicyTest, ValueIsMarginalFreshnessPerCrawlRate) {
  // Theorem 1 defines V as d o/d f along the threshold: check numerically that
  // μ̃ Δ(w/ψ) / Δ(1/ψ) matches the closed form V = μ̃ (w − e^{−αι} ψ).
  const std::vector<PageModel> pages = {Make(0.4, 1, 0.5, 0.3), Make(1, 0.2, 0.9, 0.05),
                                        Make(2, 3, 0.1, 1.0)};
  for (const PageModel& p : pages) {
    for (double iota : {0.3, 1.0, 4.0}) {
      const double h = 1e-5 * iota;
      const IntervalStats lo = ThresholdIntervalStats(p, iota - h);
      const IntervalStats hi = ThresholdIntervalStats(p, iota + h);
      const double numeric =
          p.importance() * (hi.freshness() - lo.freshness()) / (hi.frequency() - lo.frequency());
      const double v = ValueAtThreshold(p, iota);
      EXPECT_NEAR(numeric, v, 1e-5 * v) << "ι=" << iota;
      // And Lemma 3: w' = e^{−αι} ψ'.
      EXPECT_NEAR((hi.w - lo.w), std::exp(-p.alpha() * iota) * (hi.psi - lo.psi),
                  1e-9 * (hi.w - lo.w) + 1e-15);
    }
  }
}

TEST(ThresholdPolicyTest, ValueEqualsLemmaFourCombination) {
  // NcisValue sums the terms directly; ψ and w are summed separately.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 50; ++k) {
    const PageModel p = Make(u(rng), 0.05 + 2 * u(rng), u(rng), 0.01 + 2 * u(rng));
    const double iota = 20 * u(rng) / p.change_rate();
    const IntervalStats s = ThresholdIntervalStats(p, iota);
    const double v = p.importance() * (s.w - std::exp(-p.alpha() * iota) * s.psi);
    EXPECT_NEAR(ValueAtThreshold(p, iota), v, 1e-10 * ValueCeiling(p));
  }
}

TEST(ThresholdPolicyTest, ThresholdInvertsTheValue) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 40; ++k) {
    const PageModel p = Make(0.1 + u(rng), 0.05 + 2 * u(rng), u(rng), 2 * u(rng));
    const double ceiling = ValueCeiling(p);
    double previous = 0.0;
    for (double frac : {0.01, 0.2, 0.5, 0.9, 0.999}) {
      const double level = frac * ceiling;
      const double iota = ThresholdForValue(p, level);
      ASSERT_TRUE(std::isfinite(iota));
      EXPECT_NEAR(ValueAtThreshold(p, iota), level, 1e-12 * ceiling);
      EXPECT_GT(iota, previous);
      previous = iota;
    }
    EXPECT_EQ(ThresholdForValue(p, ceiling), kInf);
    EXPECT_EQ(ThresholdForValue(p, 0.0), 0.0);
  }
}

TEST(ThresholdPolicyTest, FrequencyDecreasesWithThreshold) {
  // Lemma 2: f = 1/ψ is monotone decreasing in ι.
  const PageModel p = Make(1, 1, 0.4, 0.6);
  double previous = kInf;
  for (double iota = 0.05; iota < 50; iota *= 1.3) {
    const double f = ThresholdIntervalStats(p, iota).frequency();
    EXPECT_LT(f, previous);
    previous = f;
  }
}

TEST(ThresholdPolicyTest, LongThresholdStaysBounded) {
  // ⌊ι/β⌋ ≈ 10^7: ψ must still come out, and ψ ≈ ι/(1 + γβ) when γι is large
  // (time passes at rate 1 plus β per signal at rate γ).
  const PageModel p = Make(1, 1, 0.01, 1);
  const double iota = 1e5;
  const IntervalStats s = ThresholdIntervalStats(p, iota);
  const double approx = iota / (1.0 + p.gamma() * p.beta());
  EXPECT_NEAR(s.psi, approx, 1e-3 * approx);
  EXPECT_NEAR(s.w, 1.0 / p.change_rate(), 1e-9);
}

TEST(ThresholdPolicyTest, VanishingRecallActsAsNoSignals) {
  // λ = 3e-20 (fig. 6 draws λ ~ Beta(¼, ¼)): β ≈ 6e-20, so ⌊ι/β⌋ ≈ 4e20
  // exceeds int64. The signals carry almost nothing: ψ ≈ ι, w ≈ w without
  // them. (The count overflowed to a negative one, ψ came out 0 and the
  // frequency +∞, which broke BASELINE-NCIS's budget solve at m = 1000.)
  const PageModel p = Make(0.0019, 0.659, 3e-20, 0.535);
  const double iota = 25.76;
  const IntervalStats s = ThresholdIntervalStats(p, iota);
  EXPECT_NEAR(s.psi, iota, 1e-9 * iota);
  EXPECT_NEAR(s.w, -std::expm1(-p.change_rate() * iota) / p.change_rate(), 1e-9);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
