#include "shard/learning.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/estimators.h"

namespace recrawl {
namespace shard {
namespace {

policy::PageParams Params(double change_rate, double recall, double false_rate) {
  policy::PageParams p;
  p.importance = 1.0;
  p.change_rate = change_rate;
  p.recall = recall;
  p.false_rate = false_rate;
  return p;
}

double RelativeError(double estimate, double truth) { return std::abs(estimate - truth) / truth; }

// One crawl interval of a page of the main paper's model: changes ~
// Poisson(Δτ), each signalled with probability λ, false signals ~
// Poisson(ντ).
struct Outcome {
  double tau;
  int64_t signals;
  bool changed;
};

Outcome SimulateInterval(const policy::PageParams& truth, double tau, std::mt19937_64& rng) {
  std::poisson_distribution<int64_t> changes(truth.change_rate * tau);
  std::poisson_distribution<int64_t> false_signals(truth.false_rate * tau);
  const int64_t c = changes(rng);
  std::binomial_distribution<int64_t> signalled(c, truth.recall);
  return {tau, signalled(rng) + false_signals(rng), c > 0};
}

// Crawl intervals spread over a factor of 30 around the change interval, as
// a crawl schedule that reacts to signals produces.
double RandomInterval(const policy::PageParams& truth, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(std::log(0.1), std::log(3.0));
  return std::exp(u(rng)) / truth.change_rate;
}

// Adds `n` crawl outcomes of a page with parameters `truth` to `state`.
void LearnSimulated(const policy::PageParams& truth, int n, std::mt19937_64& rng,
                    LearningState* state) {
  for (int i = 0; i < n; ++i) {
    const Outcome o = SimulateInterval(truth, RandomInterval(truth, rng), rng);
    ASSERT_TRUE(LearnFromCrawl(o.tau, o.signals, o.changed, 0.0, state));
  }
}

TEST(LearningTest, PriorAloneFitsThePrior) {
  for (const policy::PageParams& prior :
       {Params(1.0, 0.5, 0.3), Params(2e-5, 0.2, 1e-6), Params(0.01, 0.9, 0.05)}) {
    const LearnedModel m = Fit(InitLearning(prior), 3.0, LearningOptions());
    ASSERT_TRUE(m.ok);
    EXPECT_EQ(m.estimate.importance, 3.0);
    EXPECT_EQ(m.params.importance, 3.0);
    EXPECT_NEAR(m.estimate.change_rate, prior.change_rate, 1e-5 * prior.change_rate);
    EXPECT_NEAR(m.estimate.recall, prior.recall, 1e-5);
    EXPECT_NEAR(m.estimate.false_rate, prior.false_rate, 1e-5 * prior.false_rate);
    // With no outcome the page is ranked as one that changes less.
    EXPECT_LT(m.params.change_rate, m.estimate.change_rate);
  }
}

TEST(LearningTest, WithoutOptimismThePageIsRankedByTheFit) {
  LearningOptions fit_only;
  fit_only.optimism = 0.0;
  LearningState s = InitLearning(Params(1.0, 0.5, 0.3));
  ASSERT_TRUE(LearnFromCrawl(2.0, 1, true, 0.0, &s));
  const LearnedModel m = Fit(s, 1.0, fit_only);
  ASSERT_TRUE(m.ok);
  EXPECT_EQ(m.params.change_rate, m.estimate.change_rate);
  EXPECT_EQ(m.params.recall, m.estimate.recall);
  EXPECT_EQ(m.params.false_rate, m.estimate.false_rate);
}

// The exploration failure of docs/results.md ("Learning"): a page whose
// first crawls all saw a change. Its estimate stays bounded (the prior
// holds it), and it is ranked by a lower change rate, the lowest the
// outcomes do not reject, so that its crawl value's ceiling μ/Δ does not
// fall below the level on a handful of outcomes; the optimism shrinks as
// outcomes arrive.
TEST(LearningTest, AllChangedCrawlsGiveABoundedEstimateRankedOptimistically) {
  LearningState s = InitLearning(Params(0.5, 0.0, 0.0));
  double previous_ratio = 0.0;
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(LearnFromCrawl(10.0, 0, true, 0.0, &s));
    const LearnedModel m = Fit(s, 1.0, LearningOptions());
    ASSERT_TRUE(m.ok);
    SCOPED_TRACE(testing::Message() << i << " crawls: estimate " << m.estimate.change_rate
                                    << " ranked " << m.params.change_rate);
    // P(change over τ = 10) = 1 − e^{−10Δ}: all-changed outcomes only say
    // Δ ≳ 0.1; the MLE alone would be +∞.
    EXPECT_TRUE(std::isfinite(m.estimate.change_rate));
    EXPECT_LT(m.estimate.change_rate, 1.0);
    EXPECT_GT(m.params.change_rate, 0.0);
    EXPECT_LT(m.params.change_rate, m.estimate.change_rate);
    const double ratio = m.params.change_rate / m.estimate.change_rate;
    EXPECT_GT(ratio, previous_ratio);
    previous_ratio = ratio;
  }
  // Unchanged crawls at a shorter interval then pull both down.
  const LearnedModel before = Fit(s, 1.0, LearningOptions());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(LearnFromCrawl(1.0, 0, false, 0.0, &s));
  const LearnedModel after = Fit(s, 1.0, LearningOptions());
  EXPECT_LT(after.estimate.change_rate, before.estimate.change_rate);
  EXPECT_LT(after.params.change_rate, before.params.change_rate);
}

TEST(LearningTest, PriorWithoutSignalsStaysSignalFree) {
  const LearnedModel m = Fit(InitLearning(Params(0.5, 0.0, 0.0)), 1.0, LearningOptions());
  ASSERT_TRUE(m.ok);
  EXPECT_NEAR(m.estimate.change_rate, 0.5, 1e-6);
  for (const policy::PageParams& p : {m.estimate, m.params}) {
    EXPECT_EQ(p.recall, 0.0);
    EXPECT_EQ(p.false_rate, 0.0);
  }
}

TEST(LearningTest, RejectsImpossibleAndNonFiniteOutcomes) {
  LearningState s = InitLearning(Params(1.0, 0.5, 0.3));
  const LearningState before = s;
  EXPECT_FALSE(LearnFromCrawl(-1.0, 0, false, 0.0, &s));
  EXPECT_FALSE(LearnFromCrawl(NAN, 0, true, 0.0, &s));
  EXPECT_FALSE(LearnFromCrawl(INFINITY, 0, false, 0.0, &s));
  EXPECT_FALSE(LearnFromCrawl(1.0, -2, false, 0.0, &s));
  EXPECT_FALSE(LearnFromCrawl(0.0, 0, true, 0.0, &s));    // P = 0
  EXPECT_FALSE(LearnFromCrawl(1e39, 0, false, 0.0, &s));  // float overflow
  EXPECT_EQ(s.crawls, before.crawls);
  EXPECT_EQ(s.unchanged_tau, before.unchanged_tau);
  EXPECT_EQ(s.changed[0].count, before.changed[0].count);
  // A change over τ = 0 is possible when a signal announced it.
  EXPECT_TRUE(LearnFromCrawl(0.0, 1, true, 0.0, &s));
  EXPECT_EQ(s.crawls, 1u);
}

TEST(LearningTest, UnchangedCrawlsLowerTheChangeRate) {
  LearningState s = InitLearning(Params(1.0, 0.0, 0.0));
  const double before = Fit(s, 1.0, LearningOptions()).estimate.change_rate;
  ASSERT_TRUE(LearnFromCrawl(2.0, 0, false, 0.0, &s));
  const double after = Fit(s, 1.0, LearningOptions()).estimate.change_rate;
  EXPECT_LT(after, before);
  ASSERT_TRUE(LearnFromCrawl(0.1, 0, true, 0.0, &s));
  EXPECT_GT(Fit(s, 1.0, LearningOptions()).estimate.change_rate, after);
}

TEST(LearningTest, TDelayShortensTheTimeSignalsCanArriveIn) {
  LearningState a = InitLearning(Params(1.0, 0.5, 0.5));
  LearningState b = a;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(LearnFromCrawl(2.0, 1, false, 0.0, &a));
    ASSERT_TRUE(LearnFromCrawl(2.0, 1, false, 1.0, &b));
  }
  LearningOptions o;
  o.signal_prior_weight = 0.0;  // the crawls' signal rate alone
  // The same signals over half the time: twice the rate.
  EXPECT_DOUBLE_EQ(Fit(b, 1, o).signal_rate / Fit(a, 1, o).signal_rate, 2.0);
}

TEST(LearningTest, SignalRateCountsTheOpenInterval) {
  const LearningState s = InitLearning(Params(1.0, 0.5, 0.5));  // γ₀ = 1
  const LearningOptions o;
  EXPECT_DOUBLE_EQ(SignalRate(s, 0, 0, o), 1.0);
  // The prior's pseudo-intervals are worth signal_prior_weight / max(Δ₀, γ₀) = 3
  // time units: (30 + 3) / (100 + 3).
  EXPECT_DOUBLE_EQ(SignalRate(s, 30, 100, o), 33.0 / 103.0);
  // Negative counts and times count as none.
  EXPECT_DOUBLE_EQ(SignalRate(s, -5, -1, o), 1.0);
}

// prior_weight is the prior's worth in the likelihood of α and αβ,
// signal_prior_weight its worth in γ̂: each leaves the other's part of the
// fit exactly as it is, so equal weights are the one weight of both.
TEST(LearningTest, PriorWeightsAreSeparateForTheLikelihoodAndTheSignalRate) {
  std::mt19937_64 rng(11);
  const policy::PageParams truth = Params(0.4, 0.7, 0.1);
  LearningState s = InitLearning(Params(1.0, 0.5, 0.5));
  LearnSimulated(truth, 20, rng, &s);
  const LearningOptions one;  // 3 and 3
  LearningOptions strong_signal = one;
  strong_signal.signal_prior_weight = 30.0;
  LearningOptions strong_likelihood = one;
  strong_likelihood.prior_weight = 30.0;
  const LearnedModel a = Fit(s, 1.0, one);
  const LearnedModel b = Fit(s, 1.0, strong_signal);
  const LearnedModel c = Fit(s, 1.0, strong_likelihood);
  ASSERT_TRUE(a.ok && b.ok && c.ok);
  EXPECT_EQ(b.alpha, a.alpha);
  EXPECT_EQ(b.log_signal_factor, a.log_signal_factor);
  EXPECT_NE(b.signal_rate, a.signal_rate);
  EXPECT_EQ(c.signal_rate, a.signal_rate);
  EXPECT_NE(c.alpha, a.alpha);
  EXPECT_EQ(SignalRate(s, 2, 1.0, strong_likelihood), SignalRate(s, 2, 1.0, one));
  // γ̂ with the prior's γ₀ = 1 over 30 pseudo-intervals lies nearer γ₀
  // than with 3.
  EXPECT_LT(std::abs(b.signal_rate - 1.0), std::abs(a.signal_rate - 1.0));
}

TEST(LearningTest, WithSignalRateKeepsWhatTheCrawlsFit) {
  const policy::PageParams m = Params(1.0, 0.5, 0.5);  // α = 0.5, γ = 1
  const policy::PageParams r = WithSignalRate(m, 2.0);
  EXPECT_DOUBLE_EQ(r.recall * r.change_rate + r.false_rate, 2.0);
  EXPECT_DOUBLE_EQ((1.0 - r.recall) * r.change_rate, 0.5);   // α
  EXPECT_DOUBLE_EQ(r.false_rate / 2.0, m.false_rate / 1.0);  // e^{−αβ}
  EXPECT_EQ(r.importance, m.importance);
  // Rescaling twice is rescaling once.
  const policy::PageParams back = WithSignalRate(r, 1.0);
  EXPECT_NEAR(back.change_rate, 1.0, 1e-12);
  EXPECT_NEAR(back.recall, 0.5, 1e-12);
  EXPECT_NEAR(back.false_rate, 0.5, 1e-12);
  // Without signals in the model there is nothing to rescale.
  const policy::PageParams none = Params(1.0, 0.0, 0.0);
  EXPECT_EQ(WithSignalRate(none, 3.0).false_rate, 0.0);
  EXPECT_EQ(WithSignalRate(none, 3.0).change_rate, 1.0);
}

TEST(LearningTest, PriorRankingIsTheFitOfNoOutcome) {
  const LearningOptions o;
  PriorRanking ranking(o);
  for (int round = 0; round < 2; ++round) {  // the second from the cache
    for (const policy::PageParams& prior :
         {Params(0.5, 0.5, 0.35), Params(1.0 / 86400, 0.5, 0.1 / 86400)}) {
      policy::PageParams with_importance = prior;
      with_importance.importance = 7.0;
      const policy::PageParams ranked = ranking.Ranked(with_importance);
      const LearnedModel fit = Fit(InitLearning(prior), 7.0, o);
      EXPECT_EQ(ranked.importance, 7.0);
      EXPECT_DOUBLE_EQ(ranked.change_rate, fit.params.change_rate);
      EXPECT_DOUBLE_EQ(ranked.recall, fit.params.recall);
      EXPECT_DOUBLE_EQ(ranked.false_rate, fit.params.false_rate);
      // Optimistic: a lower change rate than the prior's.
      EXPECT_LT(ranked.change_rate, prior.change_rate);
    }
  }
}

// A prior whose pseudo-crawls rarely see a change (ν far above Δ sets the
// time scale) says little about α; the bound stops at min_optimism_scale
// instead of sending Δ towards 0.
TEST(LearningTest, OptimismIsBoundedWhereTheDataSayLittle) {
  const LearningOptions o;
  const LearnedModel fit = Fit(InitLearning(Params(1e-5, 1e-6, 0.1)), 1.0, o);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.params.change_rate, o.min_optimism_scale * fit.estimate.change_rate,
              1e-3 * fit.estimate.change_rate);
}

TEST(LearningTest, SetPriorKeepsTheData) {
  std::mt19937_64 rng(7);
  const policy::PageParams truth = Params(1.0, 0.6, 0.2);
  LearningState s = InitLearning(Params(0.1, 0.1, 0.1));
  LearnSimulated(truth, 500, rng, &s);
  LearningState t = s;
  SetPrior(Params(10.0, 0.9, 3.0), &t);
  EXPECT_EQ(t.crawls, 500u);
  EXPECT_EQ(Prior(t).change_rate, 10.0f);
  LearningOptions o;
  o.prior_weight = 1.0;
  o.signal_prior_weight = 1.0;
  // Two crawls' worth of prior (one for each prior) against 500 crawls of
  // data; at 10× the rates the prior's signal pseudo-intervals weigh more.
  EXPECT_NEAR(Fit(t, 1, o).params.change_rate, Fit(s, 1, o).params.change_rate, 0.05);
}

// The summaries in (log τ, n) against the exact App. E MLE on the same
// crawls (policy::SignalModelEstimator, which keeps every changed crawl
// here): the compression must cost far less than the sampling error.
TEST(LearningTest, MatchesTheExactMaximumLikelihoodFit) {
  std::mt19937_64 rng(2024);
  LearningOptions no_prior;
  no_prior.prior_weight = 0.0;
  no_prior.signal_prior_weight = 0.0;
  for (const policy::PageParams& truth :
       {Params(1.0, 0.0, 0.0), Params(1.0, 0.5, 0.3), Params(0.5, 0.8, 0.1), Params(2.0, 0.3, 1.0),
        Params(1.0, 0.0, 0.5), Params(1.0, 0.95, 0.05)}) {
    LearningState s = InitLearning(truth);
    policy::SignalModelEstimator exact(/*max_changed_points=*/4000);
    for (int i = 0; i < 2000; ++i) {
      const Outcome o = SimulateInterval(truth, RandomInterval(truth, rng), rng);
      ASSERT_TRUE(LearnFromCrawl(o.tau, o.signals, o.changed, 0.0, &s));
      ASSERT_TRUE(exact.Add(o.tau, o.signals, o.changed).ok());
    }
    const policy::SignalModelEstimate e = exact.Estimate();
    ASSERT_TRUE(e.valid);
    const LearnedModel m = Fit(s, 1.0, no_prior);
    ASSERT_TRUE(m.ok);
    // Standard errors of the exact fit, for scale.
    SCOPED_TRACE(testing::Message()
                 << "Δ=" << truth.change_rate << " λ=" << truth.recall << " ν=" << truth.false_rate
                 << " exact α=" << e.alpha << "±" << e.alpha_stderr << " αβ=" << e.log_signal_factor
                 << "±" << e.log_signal_factor_stderr << " summary α=" << m.alpha
                 << " αβ=" << m.log_signal_factor);
    // Half a standard error; on the boundary αβ = 0 (λ = 0), where
    // there is none, an absolute 0.05.
    auto tolerance = [](double stderr_) { return std::isnan(stderr_) ? 0.05 : 0.5 * stderr_; };
    EXPECT_LT(std::abs(m.alpha - e.alpha), tolerance(e.alpha_stderr));
    EXPECT_LT(std::abs(m.log_signal_factor - e.log_signal_factor),
              tolerance(e.log_signal_factor_stderr));
    EXPECT_NEAR(m.signal_rate, e.signal_rate, 1e-4 * e.signal_rate);
  }
}

// Convergence: a population of pages with known
// parameters, learnt from a wrong prior; after enough crawls the estimates
// are within 10% of the truth.
TEST(LearningTest, ConvergesOnSyntheticPopulation) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> change_rate(0.2, 2.0);
  std::uniform_real_distribution<double> recall(0.3, 0.9);
  std::uniform_real_distribution<double> false_ratio(0.1, 0.6);
  const LearningOptions options;
  const int kPages = 100;
  const int kCrawls = 4000;
  int within[3] = {0, 0, 0};
  double worst[3] = {0, 0, 0};
  for (int page = 0; page < kPages; ++page) {
    const double delta = change_rate(rng);
    const policy::PageParams truth = Params(delta, recall(rng), false_ratio(rng) * delta);
    // Everyone starts from the same shard-wide default.
    LearningState s = InitLearning(Params(0.1, 0.5, 0.05));
    LearnSimulated(truth, kCrawls, rng, &s);
    const LearnedModel m = Fit(s, 1.0, options);
    ASSERT_TRUE(m.ok);
    const double err[3] = {RelativeError(m.params.change_rate, truth.change_rate),
                           RelativeError(m.params.recall, truth.recall),
                           RelativeError(m.params.false_rate, truth.false_rate)};
    for (int k = 0; k < 3; ++k) {
      within[k] += err[k] <= 0.10;
      worst[k] = std::max(worst[k], err[k]);
    }
  }
  std::printf("pages within 10%%: Δ %d λ %d ν %d of %d; worst %.3f %.3f %.3f\n", within[0],
              within[1], within[2], kPages, worst[0], worst[1], worst[2]);
  // Sampling error alone leaves a few pages outside 10% at this many
  // crawls (ν is the hardest: it is γ minus the signalled changes).
  SCOPED_TRACE(testing::Message() << "worst relative errors Δ " << worst[0] << " λ " << worst[1]
                                  << " ν " << worst[2]);
  EXPECT_GE(within[0], 0.98 * kPages);
  EXPECT_GE(within[1], 0.95 * kPages);
  EXPECT_GE(within[2], 0.90 * kPages);
}

TEST(LearningTest, ChangedMeaningfully) {
  const policy::PageParams p = Params(1.0, 0.5, 0.3);
  EXPECT_FALSE(ChangedMeaningfully(p, p, 0.02));
  EXPECT_FALSE(ChangedMeaningfully(p, Params(1.01, 0.5, 0.3), 0.02));
  EXPECT_TRUE(ChangedMeaningfully(p, Params(1.05, 0.5, 0.3), 0.02));
  EXPECT_TRUE(ChangedMeaningfully(p, Params(1.0, 0.55, 0.3), 0.02));
  EXPECT_TRUE(ChangedMeaningfully(p, Params(1.0, 0.5, 0.4), 0.02));
  // A false rate far below Δ moving by a large factor is not news.
  EXPECT_FALSE(ChangedMeaningfully(Params(1.0, 0.5, 1e-6), Params(1.0, 0.5, 2e-6), 0.02));
}

}  // namespace

}  // namespace shard
}  // namespace recrawl
