// Checks the multi-source crawl value (docs/multi_source_model.md) against
// today's single-source value, against a Monte Carlo simulation of the
// threshold policy with S = 2 and 3 sources, and against its definition as
// marginal freshness per unit of crawl rate.
#include "policy/multi_source_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"
#include "policy/residual.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

MultiSourceModel Make(double mu, double delta, std::vector<SourceParams> sources) {
  return *MultiSourceModel::Create({mu, delta, std::move(sources)});
}

SourceSignals None(int num) { return {std::vector<int64_t>(num, 0), 0}; }

TEST(MultiSourceValueTest, OneSignallingSourceIsTodaysValueToTheLastBit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 3000; ++trial) {
    const PageParams single{0.05 + u(rng), trial % 50 == 0 ? 0.0 : 0.05 + u(rng),
                            trial % 9 == 0 ? 1.0 : (trial % 11 == 0 ? 0.0 : u(rng)),
                            trial % 4 == 0 ? 0.0 : 0.05 + u(rng)};
    const PageModel page = *PageModel::Create(single);
    const int num = 1 + trial % 3;
    const int signalling = trial % num;
    std::vector<SourceParams> sources;
    for (int s = 0; s < num; ++s) {
      sources.push_back(s == signalling ? SourceParams{single.recall, single.false_rate}
                                        : SourceParams{0.0, u(rng)});
    }
    const MultiSourceModel multi = Make(single.importance, single.change_rate, sources);
    const double tau = 8 * u(rng);
    for (int64_t n = 0; n < 4; ++n) {
      SourceSignals signals = None(num);
      signals.counts[signalling] = n;
      for (int s = 0; s < num; ++s) {
        if (s != signalling) signals.counts[s] = trial % 3;
      }
      const ValueGrowth want = NcisValueGrowth(page, tau, n);
      const ValueGrowth got = MultiSourceValueGrowth(multi, tau, signals);
      ASSERT_EQ(got.value, want.value) << "trial " << trial;
      ASSERT_EQ(got.slope, want.slope) << "trial " << trial;
      ASSERT_EQ(got.slope_rise, want.slope_rise) << "trial " << trial;
    }
  }
}

// The general sum (M5)–(M7), without the single-source shortcut, is the
// paper's sum for S = 1.
TEST(MultiSourceValueTest, GeneralSumWithOneSourceIsThePapersSum) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 500; ++trial) {
    const PageParams single{0.1 + u(rng), 0.05 + u(rng), 0.02 + 0.96 * u(rng), 0.02 + u(rng)};
    const PageModel page = *PageModel::Create(single);
    const MultiSourceModel multi =
        Make(single.importance, single.change_rate, {{single.recall, single.false_rate}});
    const double iota = 20 * u(rng) / single.change_rate;
    const double want = NcisValue(page, iota, 0);
    double psi, w;
    const double got = internal::MultiSourceSum(multi, iota, &psi, &w).value;
    const double scale = ValueCeiling(page);
    EXPECT_NEAR(got, want, 2 * kValueTruncationTolerance * scale) << "trial " << trial;
    worst = std::max(worst, std::fabs(got - want) / scale);
    const IntervalStats stats = ThresholdIntervalStats(page, iota);
    EXPECT_NEAR(psi, stats.psi, 1e-9 * stats.psi);
    EXPECT_NEAR(w, stats.w, 1e-9 * stats.w);
  }
  std::printf("worst |general − NcisValue| / ceiling: %.3g\n", worst);
}

struct Estimate {
  double mean = 0.0;
  double stderr_ = 0.0;
};

struct Simulated {
  Estimate psi, w, value;
};

// Crawl intervals of the threshold policy at ι on the page's own processes:
// events at rate Δ + Σν_s, each a change (whose signalling sources are drawn
// with λ_s) or a false signal of one source. τ_eff jumps by β_s at a
// single-source event, to ∞ at a joint event or a proof source's signal.
// Per interval L = length, F = fresh time, X = F − e^{−αι} L (mean V/μ̃).
Simulated SimulateThreshold(const MultiSourceModel& page, double iota, int intervals,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto& sources = page.params().sources;
  const int num = page.num_sources();
  double nu_sum = 0.0;
  for (const SourceParams& s : sources) nu_sum += s.false_rate;
  const double event_rate = page.change_rate() + nu_sum;
  std::exponential_distribution<double> next_event(event_rate);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double discount = std::exp(-page.alpha() * iota);
  double sum[3] = {0, 0, 0}, sum_sq[3] = {0, 0, 0};
  for (int k = 0; k < intervals; ++k) {
    double t = 0.0, jumps = 0.0, first_change = kInf, length;
    while (true) {
      const double due = iota - jumps;
      const double event = t + next_event(rng);
      if (due <= event) {
        length = std::max(due, t);
        break;
      }
      t = event;
      double x = u(rng) * event_rate;
      int single = -1, signalled = 0;
      if (x < page.change_rate()) {
        first_change = std::min(first_change, t);
        for (int s = 0; s < num; ++s) {
          if (u(rng) < sources[s].recall) {
            ++signalled;
            single = s;
          }
        }
      } else {
        x -= page.change_rate();
        single = num - 1;
        for (int s = 0; s < num; ++s) {
          if (x < sources[s].false_rate) {
            single = s;
            break;
          }
          x -= sources[s].false_rate;
        }
        signalled = 1;
      }
      if (signalled >= 2) {
        jumps = kInf;
      } else if (signalled == 1) {
        jumps += page.beta(single);
      }
      if (t + jumps >= iota) {
        length = t;
        break;
      }
    }
    const double fresh = std::min(first_change, length);
    const double values[3] = {length, fresh, fresh - discount * length};
    for (int j = 0; j < 3; ++j) {
      sum[j] += values[j];
      sum_sq[j] += values[j] * values[j];
    }
  }
  Simulated out;
  Estimate* estimates[3] = {&out.psi, &out.w, &out.value};
  for (int j = 0; j < 3; ++j) {
    const double mean = sum[j] / intervals;
    estimates[j]->mean = mean;
    estimates[j]->stderr_ = std::sqrt((sum_sq[j] / intervals - mean * mean) / intervals);
  }
  out.value.mean *= page.importance();
  out.value.stderr_ *= page.importance();
  return out;
}

void CheckAgainstSimulation(const MultiSourceModel& page, double iota, uint64_t seed) {
  const Simulated sim = SimulateThreshold(page, iota, 200000, seed);
  const IntervalStats stats = MultiSourceIntervalStats(page, iota);
  const double value = MultiSourceValue(page, iota, None(page.num_sources()));
  EXPECT_NEAR(stats.psi, sim.psi.mean, 4.5 * sim.psi.stderr_) << "ι=" << iota;
  EXPECT_NEAR(stats.w, sim.w.mean, 4.5 * sim.w.stderr_) << "ι=" << iota;
  EXPECT_NEAR(value, sim.value.mean, 4.5 * sim.value.stderr_) << "ι=" << iota;
}

TEST(MultiSourceValueTest, TwoSourcesMatchSimulation) {
  // CDN-like accurate source and sitemap-like noisy one.
  const MultiSourceModel page = Make(0.7, 0.6, {{0.8, 0.05}, {0.5, 0.9}});
  for (double iota : {0.5, 2.0, 6.0, 20.0}) CheckAgainstSimulation(page, iota, 31);
  // Both noisy: many terms per level.
  const MultiSourceModel noisy = Make(1.0, 1.0, {{0.4, 0.8}, {0.3, 0.5}});
  for (double iota : {1.0, 4.0}) CheckAgainstSimulation(noisy, iota, 37);
  // A proof source (ν = 0) next to a noisy one.
  const MultiSourceModel proof = Make(1.0, 0.8, {{0.5, 0.0}, {0.6, 0.7}});
  for (double iota : {1.0, 3.0}) CheckAgainstSimulation(proof, iota, 41);
}

TEST(MultiSourceValueTest, ThreeSourcesMatchSimulation) {
  const MultiSourceModel page = Make(1.0, 0.9, {{0.6, 0.1}, {0.4, 0.6}, {0.3, 0.3}});
  for (double iota : {0.5, 2.0, 5.0, 12.0}) CheckAgainstSimulation(page, iota, 43);
}

// Theorem 1's V is d(o)/d(f) with o = μ̃ w/ψ and f = 1/ψ; (M5) must equal the
// ratio of central differences of (M6), (M7).
TEST(MultiSourceValueTest, ValueIsMarginalFreshnessPerCrawlRate) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const int num = 2 + trial % 2;
    std::vector<SourceParams> sources;
    for (int s = 0; s < num; ++s) sources.push_back({0.05 + 0.9 * u(rng), 0.02 + u(rng)});
    const MultiSourceModel page = Make(0.2 + u(rng), 0.1 + u(rng), sources);
    const double iota = (0.2 + 6 * u(rng)) / page.change_rate();
    const double h = 1e-4 * iota;
    const IntervalStats lo = MultiSourceIntervalStats(page, iota - h);
    const IntervalStats hi = MultiSourceIntervalStats(page, iota + h);
    const double marginal =
        page.importance() * (hi.w / hi.psi - lo.w / lo.psi) / (1 / hi.psi - 1 / lo.psi);
    const double value = MultiSourceValue(page, iota, None(num));
    EXPECT_NEAR(value, marginal, 1e-5 * page.importance() / page.change_rate())
        << "trial " << trial;
    const IntervalStats at = MultiSourceIntervalStats(page, iota);
    EXPECT_NEAR(value, page.importance() * (at.w - std::exp(-page.alpha() * iota) * at.psi),
                1e-12 * page.importance() / page.change_rate());
  }
}

TEST(MultiSourceValueTest, StateIsTheEffectiveElapsedTime) {
  const MultiSourceModel page = Make(1, 0.6, {{0.8, 0.05}, {0.5, 0.9}});
  const SourceSignals signals{{1, 2}, 0};
  const double iota = page.EffectiveElapsed(0.7, signals);
  EXPECT_DOUBLE_EQ(iota, 0.7 + page.beta(0) + 2 * page.beta(1));
  EXPECT_NEAR(MultiSourceValue(page, 0.7, signals), MultiSourceValue(page, iota, None(2)), 1e-14);
  EXPECT_GT(MultiSourceValue(page, 0.7, {{1, 0}, 0}), MultiSourceValue(page, 0.7, {{0, 1}, 0}));
  // A joint event proves a change.
  EXPECT_EQ(MultiSourceValue(page, 0.7, {{0, 0}, 1}), 1 / 0.6);
  EXPECT_EQ(MultiSourceValue(page, kInf, None(2)), 1 / 0.6);
  EXPECT_EQ(MultiSourceValue(Make(1, 0, {{0.5, 1}, {0.5, 1}}), 3.0, {{1, 1}, 0}), 0.0);
}

TEST(MultiSourceValueTest, IncreasesToTheCeiling) {
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 30; ++trial) {
    const int num = 2 + trial % 2;
    std::vector<SourceParams> sources;
    for (int s = 0; s < num; ++s) sources.push_back({0.9 * u(rng), 1.5 * u(rng)});
    const MultiSourceModel page = Make(0.1 + u(rng), 0.05 + u(rng), sources);
    const double ceiling = page.importance() / page.change_rate();
    double previous = 0.0;
    for (double iota = 1e-3; iota < 1e3; iota *= 1.5) {
      const double v = MultiSourceValue(page, iota, None(num));
      EXPECT_GE(v, previous - 2 * kValueTruncationTolerance * ceiling)
          << "trial " << trial << " ι=" << iota;
      EXPECT_LE(v, ceiling * (1 + 1e-12));
      previous = v;
    }
    EXPECT_NEAR(MultiSourceValue(page, 1e4 / page.change_rate(), None(num)), ceiling,
                1e-9 * ceiling);
  }
}

// No informative source (two proof sources): the GREEDY-CIS form with the
// absorbing rate Γ_∞ as the signal rate.
TEST(MultiSourceValueTest, ProofSourcesOnlyIsGreedyCis) {
  const MultiSourceModel page = Make(0.8, 1.5, {{0.3, 0.0}, {0.4, 0.0}});
  const double a = page.alpha(), g = page.absorbing_rate(), iota = 0.9;
  EXPECT_NEAR(a + g, 1.5, 1e-15);
  const double want =
      0.8 * (Residual(0, 1.5 * iota) / 1.5 - Residual(0, g * iota) / (g * std::exp(a * iota)));
  EXPECT_NEAR(MultiSourceValue(page, iota, None(2)), want, 1e-15);
}

// α = 0 (one source has λ = 1): (M8), and the λ → 1 limit of the general
// sum agrees.
TEST(MultiSourceValueTest, FullRecallSourceIsTheSignalOnlyLimit) {
  const MultiSourceModel page = Make(1, 1, {{1.0, 0.5}, {0.4, 0.3}});
  const MultiSourceModel near = Make(1, 1, {{1.0 - 1e-8, 0.5}, {0.4, 0.3}});
  for (int64_t n = 0; n < 5; ++n) {
    const SourceSignals signals{{n, 0}, 0};
    const double v = MultiSourceValue(page, 3.0, signals);
    EXPECT_EQ(v, MultiSourceValue(page, 300.0, signals));
    EXPECT_NEAR(MultiSourceValue(near, 3.0, signals), v, 1e-6) << "n=" << n;
  }
  EXPECT_EQ(MultiSourceValue(page, 3.0, None(2)), 0.0);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
