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
SourceTrustEstimator SimulateHost(const std::vector<SourceParams>& sources, int pages, int crawls,
                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int num = static_cast<int>(sources.size());
  SourceTrustEstimator estimator(num);
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
      EXPECT_TRUE(estimator.Add(delta, tau, signals, changes > 0).ok());
    }
  }
  return estimator;
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

}  // namespace
}  // namespace policy
}  // namespace recrawl
