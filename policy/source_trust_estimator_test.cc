#include "policy/source_trust_estimator.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/multi_source_model.h"

namespace recrawl {
namespace policy {
namespace {

// Crawls of `pages` pages of one host (Δ_i ~ U[0.1, 1]) every τ ~ U[0.2, 3]
// time units, `crawls` each, drawn from the model of multi_source_model.h.
struct Interval {
  double change_rate;
  double tau;
  SourceSignals signals;
  bool changed;
};

std::vector<Interval> SimulateIntervals(const std::vector<SourceParams>& sources, int pages,
                                        int crawls, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int num = static_cast<int>(sources.size());
  std::vector<Interval> out;
  for (int i = 0; i < pages; ++i) {
    const double delta = 0.1 + 0.9 * u(rng);
    for (int c = 0; c < crawls; ++c) {
      const double tau = 0.2 + 2.8 * u(rng);
      SourceSignals signals{std::vector<int64_t>(num, 0), 0};
      const int changes = std::poisson_distribution<int>(delta * tau)(rng);
      for (int k = 0; k < changes; ++k) {
        int signalled = 0, last = 0;
        for (int s = 0; s < num; ++s) {
          if (u(rng) < sources[s].recall) {
            ++signalled;
            last = s;
          }
        }
        if (signalled == 1) ++signals.counts[last];
        if (signalled >= 2) ++signals.joint;
      }
      for (int s = 0; s < num; ++s) {
        signals.counts[s] += std::poisson_distribution<int>(sources[s].false_rate * tau)(rng);
      }
      out.push_back({delta, tau, signals, changes > 0});
    }
  }
  return out;
}

SourceTrustEstimator SimulateHost(const std::vector<SourceParams>& sources, int pages, int crawls,
                                  uint64_t seed, size_t max_changed_intervals = 0) {
  SourceTrustEstimator estimator(static_cast<int>(sources.size()), {}, max_changed_intervals);
  for (const Interval& i : SimulateIntervals(sources, pages, crawls, seed)) {
    EXPECT_TRUE(estimator.Add(i.change_rate, i.tau, i.signals, i.changed).ok());
  }
  return estimator;
}

// (M10) plus the prior, summed interval by interval as written (the
// reference for the estimator's sums).
double ReferenceLogLikelihood(const std::vector<Interval>& intervals,
                              const std::vector<SourceParams>& sources,
                              const SourceTrustPrior& prior) {
  const size_t num = sources.size();
  double none = 1.0, one = 0.0, several = 0.0;
  for (const SourceParams& p : sources) {
    several += one * p.recall;
    one = one * (1.0 - p.recall) + none * p.recall;
    none *= 1.0 - p.recall;
  }
  double ll = 0.0;
  for (const SourceParams& p : sources) {
    ll += prior.weight *
          (prior.recall * std::log(p.recall) + (1.0 - prior.recall) * std::log1p(-p.recall));
    ll += prior.weight * (std::log(p.false_rate) - p.false_rate / prior.false_rate);
  }
  for (const Interval& i : intervals) {
    const double d = i.change_rate;
    double log_unchanged = -d * none * i.tau;
    for (size_t s = 0; s < num; ++s) {
      double others = 1.0;
      for (size_t r = 0; r < num; ++r) {
        if (r != s) others *= 1.0 - sources[r].recall;
      }
      const double k = sources[s].recall * others;
      const double gamma = d * k + sources[s].false_rate;
      const double n = static_cast<double>(i.signals.counts[s]);
      ll += n * std::log(gamma) - gamma * i.tau;
      log_unchanged -= n * std::log(gamma / sources[s].false_rate);
    }
    ll -= d * several * i.tau;
    if (i.signals.joint > 0) {
      ll += static_cast<double>(i.signals.joint) * std::log(d * several);
    } else {
      ll += i.changed ? std::log(-std::expm1(log_unchanged)) : log_unchanged;
    }
  }
  return ll;
}

void ExpectRecovers(const std::vector<SourceParams>& truth, int pages, int crawls,
                    double recall_tolerance, double rate_tolerance, uint64_t seed) {
  const SourceTrustEstimator estimator = SimulateHost(truth, pages, crawls, seed);
  const SourceTrustEstimate e = estimator.Estimate();
  EXPECT_TRUE(e.converged) << "iterations " << e.iterations;
  ASSERT_EQ(e.sources.size(), truth.size());
  for (size_t s = 0; s < truth.size(); ++s) {
    std::printf("source %zu: λ %.4f (true %.4f), ν %.4f (true %.4f)\n", s, e.sources[s].recall,
                truth[s].recall, e.sources[s].false_rate, truth[s].false_rate);
    EXPECT_NEAR(e.sources[s].recall, truth[s].recall, recall_tolerance) << "source " << s;
    EXPECT_NEAR(std::log(e.sources[s].false_rate / truth[s].false_rate), 0.0, rate_tolerance)
        << "source " << s;
  }
  // The estimate is a maximum: nearby parameters are no more likely.
  for (size_t s = 0; s < truth.size(); ++s) {
    for (double f : {0.97, 1.03}) {
      std::vector<SourceParams> moved = e.sources;
      moved[s].false_rate *= f;
      EXPECT_LE(estimator.LogLikelihood(moved), e.log_likelihood + 1e-6);
      moved = e.sources;
      moved[s].recall = std::min(0.999, moved[s].recall * f);
      EXPECT_LE(estimator.LogLikelihood(moved), e.log_likelihood + 1e-6);
    }
  }
}

// An accurate source (CDN) and a noisy one (sitemap lastmod), 100 pages of
// one host with 40 crawls each.
TEST(SourceTrustEstimatorTest, RecoversTwoSourcesPooledOverAHost) {
  ExpectRecovers({{0.85, 0.03}, {0.5, 1.0}}, 100, 40, 0.05, 0.15, 1);
}

TEST(SourceTrustEstimatorTest, RecoversThreeSources) {
  ExpectRecovers({{0.7, 0.05}, {0.4, 0.8}, {0.3, 0.2}}, 150, 40, 0.05, 0.15, 2);
}

TEST(SourceTrustEstimatorTest, WithoutDataTheEstimateIsThePrior) {
  SourceTrustPrior prior;
  prior.recall = 0.3;
  prior.false_rate = 0.4;
  const SourceTrustEstimator estimator(2, prior);
  const SourceTrustEstimate e = estimator.Estimate();
  ASSERT_EQ(e.sources.size(), 2u);
  for (const SourceParams& s : e.sources) {
    EXPECT_NEAR(s.recall, 0.3, 1e-6);
    EXPECT_NEAR(s.false_rate, 0.4, 1e-6);
  }
  EXPECT_EQ(e.num_crawls, 0);
}

TEST(SourceTrustEstimatorTest, AFewCrawlsGiveAFiniteEstimate) {
  SourceTrustEstimator estimator(2);
  ASSERT_TRUE(estimator.Add(0.5, 1.0, {{1, 0}, 0}, true).ok());
  ASSERT_TRUE(estimator.Add(0.5, 1.0, {{0, 3}, 0}, false).ok());
  const SourceTrustEstimate e = estimator.Estimate();
  for (const SourceParams& s : e.sources) {
    EXPECT_GT(s.recall, 0.0);
    EXPECT_LT(s.recall, 1.0);
    EXPECT_GT(s.false_rate, 0.0);
    EXPECT_TRUE(std::isfinite(s.false_rate));
  }
  // Source 0's signal came with a change and source 1's did not.
  EXPECT_GT(e.sources[0].recall, e.sources[1].recall);
  EXPECT_GT(e.sources[1].false_rate, e.sources[0].false_rate);
}

TEST(SourceTrustEstimatorTest, RejectsBadInputNamingTheField) {
  SourceTrustEstimator estimator(2);
  const auto message = [&](double delta, double tau, SourceSignals signals, bool changed) {
    return std::string(estimator.Add(delta, tau, signals, changed).message());
  };
  EXPECT_NE(message(-1, 1, {{0, 0}, 0}, false).find("change_rate"), std::string::npos);
  EXPECT_NE(message(1, NAN, {{0, 0}, 0}, false).find("tau_elap"), std::string::npos);
  EXPECT_NE(message(1, 1, {{0}, 0}, false).find("signals.counts"), std::string::npos);
  EXPECT_NE(message(1, 1, {{0, -1}, 0}, false).find("signals.counts[1]"), std::string::npos);
  EXPECT_NE(message(1, 1, {{0, 0}, -1}, false).find("signals.joint"), std::string::npos);
  EXPECT_NE(message(1, 1, {{0, 0}, 1}, false).find("changed"), std::string::npos);
  EXPECT_NE(message(0, 1, {{0, 0}, 0}, true).find("change_rate * tau_elap"), std::string::npos);
  EXPECT_EQ(estimator.num_crawls(), 0);
}

TEST(SourceTrustEstimatorTest, SumsAreTheIntervalByIntervalLikelihood) {
  const std::vector<SourceParams> truth = {{0.8, 0.05}, {0.4, 0.7}, {0.2, 0.3}};
  const std::vector<Interval> intervals = SimulateIntervals(truth, 20, 15, 3);
  SourceTrustEstimator estimator(3);
  for (const Interval& i : intervals) {
    ASSERT_TRUE(estimator.Add(i.change_rate, i.tau, i.signals, i.changed).ok());
  }
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0.05, 0.95);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<SourceParams> at(3);
    for (SourceParams& p : at) p = {u(rng), 2 * u(rng)};
    const double reference = ReferenceLogLikelihood(intervals, at, SourceTrustPrior());
    // The kept intervals hold Δ_i and τ as floats.
    EXPECT_NEAR(estimator.LogLikelihood(at), reference, 1e-6 * std::fabs(reference));
  }
}

// A host's estimate with the changed intervals bounded by 64 against the
// same host's from all of them: within `recall_tolerance` for each λ̂ and
// 15% for each ν̂ (the merges' error, the header's figures).
void ExpectBoundedCloseToAll(const std::vector<SourceParams>& truth, int pages, int crawls,
                             uint64_t seed, double recall_tolerance) {
  const SourceTrustEstimator all = SimulateHost(truth, pages, crawls, seed);
  const SourceTrustEstimator bounded = SimulateHost(truth, pages, crawls, seed, 64);
  EXPECT_LT(bounded.kept_changed(), 192u);
  EXPECT_GT(bounded.num_changed(), 2000);
  EXPECT_EQ(all.kept_changed(), static_cast<size_t>(all.num_changed()));
  const SourceTrustEstimate a = all.Estimate(), b = bounded.Estimate();
  ASSERT_TRUE(b.converged);
  for (size_t s = 0; s < truth.size(); ++s) {
    std::printf("source %zu: all λ %.4f ν %.4f, bounded λ %.4f ν %.4f\n", s, a.sources[s].recall,
                a.sources[s].false_rate, b.sources[s].recall, b.sources[s].false_rate);
    EXPECT_NEAR(b.sources[s].recall, a.sources[s].recall, recall_tolerance) << "source " << s;
    EXPECT_NEAR(std::log(b.sources[s].false_rate / a.sources[s].false_rate), 0.0, 0.15)
        << "source " << s;
  }
}

TEST(SourceTrustEstimatorTest, BoundedKeepsAtMostItsBoundAndStaysClose) {
  ExpectBoundedCloseToAll({{0.85, 0.03}, {0.5, 1.0}}, 200, 40, 5, 0.05);
}

// Where most changes are signalled by both sources (joint events, each a
// certain change), the merges keep the joint intervals apart from the
// others and merge them by their change rate alone.
TEST(SourceTrustEstimatorTest, BoundedStaysCloseWhenMostChangesAreJoint) {
  ExpectBoundedCloseToAll({{0.9, 0.02}, {0.5, 1.0}}, 300, 40, 1, 0.02);
}

TEST(SourceTrustEstimatorTest, RestoredStateGoesOnExactlyAsTheOriginal) {
  const std::vector<SourceParams> truth = {{0.7, 0.1}, {0.3, 0.5}};
  const std::vector<Interval> intervals = SimulateIntervals(truth, 30, 20, 6);
  SourceTrustEstimator original(2, {}, 32);
  const size_t half = intervals.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    const Interval& in = intervals[i];
    ASSERT_TRUE(original.Add(in.change_rate, in.tau, in.signals, in.changed).ok());
  }
  absl::StatusOr<SourceTrustEstimator> restored =
      SourceTrustEstimator::FromState(original.State(), {}, 32);
  ASSERT_TRUE(restored.ok()) << restored.status();
  for (size_t i = half; i < intervals.size(); ++i) {
    const Interval& in = intervals[i];
    ASSERT_TRUE(original.Add(in.change_rate, in.tau, in.signals, in.changed).ok());
    ASSERT_TRUE(restored->Add(in.change_rate, in.tau, in.signals, in.changed).ok());
  }
  EXPECT_EQ(restored->kept_changed(), original.kept_changed());
  EXPECT_LT(restored->kept_changed(), 96u);
  const SourceTrustEstimate a = original.Estimate(), b = restored->Estimate();
  EXPECT_EQ(a.log_likelihood, b.log_likelihood);
  for (size_t s = 0; s < truth.size(); ++s) {
    EXPECT_EQ(a.sources[s].recall, b.sources[s].recall);
    EXPECT_EQ(a.sources[s].false_rate, b.sources[s].false_rate);
  }
}

TEST(SourceTrustEstimatorTest, FromStateRejectsAnInconsistentStateNamingTheField) {
  SourceTrustEstimator estimator(2, {}, 4);
  ASSERT_TRUE(estimator.Add(0.5, 1.0, {{1, 0}, 0}, true).ok());
  const SourceTrustState good = estimator.State();
  ASSERT_TRUE(SourceTrustEstimator::FromState(good, {}, 4).ok());
  const auto message = [](const SourceTrustState& state, size_t bound) {
    return std::string(SourceTrustEstimator::FromState(state, {}, bound).status().message());
  };
  SourceTrustState bad = good;
  bad.num_sources = 0;
  EXPECT_NE(message(bad, 4).find("num_sources"), std::string::npos);
  bad = good;
  bad.signals.pop_back();
  EXPECT_NE(message(bad, 4).find("signals"), std::string::npos);
  bad = good;
  bad.changed_time = -1;
  EXPECT_NE(message(bad, 4).find("changed_time"), std::string::npos);
  bad = good;
  bad.num_changed = 5;
  EXPECT_NE(message(bad, 4).find("num_changed"), std::string::npos);
  bad = good;
  bad.changed[0].counts.push_back(1);
  EXPECT_NE(message(bad, 4).find("changed.counts"), std::string::npos);
  bad = good;
  bad.changed[0].weight = 2;
  EXPECT_NE(message(bad, 4).find("changed.weight"), std::string::npos);
  EXPECT_TRUE(SourceTrustEstimator::FromState(good, {}, 0).ok());  // unbounded
  bad = good;
  bad.num_crawls = bad.num_changed = 6;
  bad.changed.assign(6, good.changed[0]);
  EXPECT_NE(message(bad, 2).find("changed: 6 intervals"), std::string::npos);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
