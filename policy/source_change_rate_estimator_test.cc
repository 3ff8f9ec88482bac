#include "policy/source_change_rate_estimator.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/estimators.h"

namespace recrawl {
namespace policy {
namespace {

// A host's accurate source (a CDN's purges) and a noisy one (a sitemap
// whose lastmod a CMS bumps).
const std::vector<SourceParams> kSources = {{0.8, 0.02}, {0.5, 1.0}};
constexpr double kChangeRate = 0.5;

struct Interval {
  double tau;
  SourceSignals signals;
  bool changed;
};

// One interval from a crawl: the model of multi_source_model.h run until
// `max_tau`, or until source 0 signals when `stop_at_first_source` (a
// crawler that comes as soon as its trusted source speaks).
Interval Draw(std::mt19937_64& rng, double max_tau, bool stop_at_first_source) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Interval out{0.0, {{0, 0}, 0}, false};
  const double total = kChangeRate + kSources[0].false_rate + kSources[1].false_rate;
  std::exponential_distribution<double> next(total);
  double t = 0.0;
  while (true) {
    t += next(rng);
    if (t >= max_tau) {
      out.tau = max_tau;
      return out;
    }
    const double u = uniform(rng) * total;
    int from = -1;  // the source of a single-source instant
    if (u < kChangeRate) {
      out.changed = true;
      const bool first = uniform(rng) < kSources[0].recall;
      const bool second = uniform(rng) < kSources[1].recall;
      if (first && second) {
        ++out.signals.joint;
        if (stop_at_first_source) break;
        continue;
      }
      if (first) from = 0;
      if (second) from = 1;
    } else {
      from = u < kChangeRate + kSources[0].false_rate ? 0 : 1;
    }
    if (from < 0) continue;
    ++out.signals.counts[from];
    if (stop_at_first_source && from == 0) break;
  }
  out.tau = t;
  return out;
}

TEST(SourceChangeRateEstimatorTest, FindsTheRateWhenCrawlsAreRegular) {
  std::mt19937_64 rng(7);
  SourceChangeRateEstimator estimator(2);
  for (int i = 0; i < 4000; ++i) {
    const Interval interval = Draw(rng, 2.0, /*stop_at_first_source=*/false);
    ASSERT_TRUE(estimator.Add(interval.tau, interval.signals, interval.changed).ok());
  }
  EXPECT_NEAR(estimator.Estimate(kSources), kChangeRate, 0.05 * kChangeRate);
}

// The case the estimator is for: crawls that follow the trusted source find
// a change nearly every time. The outcomes alone overstate Δ; the
// likelihood that conditions on the signals does not.
TEST(SourceChangeRateEstimatorTest, FindsTheRateWhenCrawlsFollowTheTrustedSource) {
  std::mt19937_64 rng(11);
  SourceChangeRateEstimator estimator(2);
  ChangeRateEstimator outcomes_only;
  for (int i = 0; i < 4000; ++i) {
    const Interval interval = Draw(rng, 10.0, /*stop_at_first_source=*/true);
    ASSERT_TRUE(estimator.Add(interval.tau, interval.signals, interval.changed).ok());
    ASSERT_TRUE(outcomes_only.Add(interval.tau, interval.changed).ok());
  }
  EXPECT_NEAR(estimator.Estimate(kSources), kChangeRate, 0.05 * kChangeRate);
  EXPECT_GT(outcomes_only.Estimate(), 1.3 * kChangeRate);
}

TEST(SourceChangeRateEstimatorTest, EstimateMaximisesTheLikelihood) {
  std::mt19937_64 rng(3);
  SourceChangeRateEstimator estimator(2);
  for (int i = 0; i < 50; ++i) {
    const Interval interval = Draw(rng, 4.0, /*stop_at_first_source=*/i % 2 == 0);
    ASSERT_TRUE(estimator.Add(interval.tau, interval.signals, interval.changed).ok());
  }
  for (const std::vector<SourceParams>& sources :
       {kSources, std::vector<SourceParams>{{0.5, 0.1}, {0.5, 0.1}},
        std::vector<SourceParams>{{0.99, 0.001}, {0.0, 2.0}}}) {
    const double best = estimator.Estimate(sources);
    ASSERT_GT(best, 0.0);
    const double at_best = estimator.LogLikelihood(sources, best);
    EXPECT_GE(at_best, estimator.LogLikelihood(sources, best * 1.001));
    EXPECT_GE(at_best, estimator.LogLikelihood(sources, best * 0.999));
    // Where Newton's steps start does not change the answer.
    EXPECT_NEAR(estimator.Estimate(sources, 100.0), best, 1e-7 * best);
    EXPECT_NEAR(estimator.Estimate(sources, 1e-6), best, 1e-7 * best);
  }
}

// A page not crawled yet learns its rate from the signals of its open
// interval, as if its outcome were unknown.
TEST(SourceChangeRateEstimatorTest, TheOpenIntervalsSignalsCount) {
  std::mt19937_64 rng(5);
  const Interval open = Draw(rng, 4000.0, /*stop_at_first_source=*/false);
  const SourceChangeRateEstimator estimator(2);
  EXPECT_NEAR(estimator.Estimate(kSources, 0.0, {open.tau, &open.signals}), kChangeRate,
              0.1 * kChangeRate);
  const double best = estimator.Estimate(kSources, 0.0, {open.tau, &open.signals});
  const OpenInterval with{open.tau, &open.signals};
  EXPECT_GE(estimator.LogLikelihood(kSources, best, with),
            estimator.LogLikelihood(kSources, best * 1.001, with));
  EXPECT_GE(estimator.LogLikelihood(kSources, best, with),
            estimator.LogLikelihood(kSources, best * 0.999, with));
}

TEST(SourceChangeRateEstimatorTest, WithoutDataTheEstimateIsThePriorsMode) {
  SourceChangeRateEstimator estimator(2, {/*change_rate=*/0.3, /*weight=*/2.0});
  EXPECT_NEAR(estimator.Estimate(kSources), 0.3, 1e-9);
}

TEST(SourceChangeRateEstimatorTest, RejectsWhatTheModelCannotHold) {
  SourceChangeRateEstimator estimator(2);
  EXPECT_EQ(estimator.Add(-1.0, {{0, 0}, 0}, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(estimator.Add(NAN, {{0, 0}, 0}, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(estimator.Add(1.0, {{0}, 0}, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(estimator.Add(1.0, {{0, -1}, 0}, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(estimator.Add(1.0, {{0, 0}, 1}, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(estimator.num_crawls(), 0);
  EXPECT_TRUE(estimator.Add(1.0, {{0, 0}, 1}, true).ok());
  EXPECT_EQ(estimator.num_crawls(), 1);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
