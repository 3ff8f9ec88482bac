#include "shard/host_learning.h"

#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

policy::PageParams Params(double change_rate, double recall, double false_rate) {
  return {1.0, change_rate, recall, false_rate};
}

// One crawl interval of a page of the main paper's model (as in
// learning_test.cc): changes ~ Poisson(Δτ), each signalled with probability
// λ, false signals ~ Poisson(ντ).
struct Outcome {
  double tau;
  int64_t signals;
  bool changed;
};

Outcome SimulateInterval(const policy::PageParams& truth, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(std::log(0.1), std::log(3.0));
  const double tau = std::exp(u(rng)) / truth.change_rate;
  std::poisson_distribution<int64_t> changes(truth.change_rate * tau);
  std::poisson_distribution<int64_t> false_signals(truth.false_rate * tau);
  const int64_t c = changes(rng);
  std::binomial_distribution<int64_t> signalled(c, truth.recall);
  return {tau, signalled(rng) + false_signals(rng), c > 0};
}

const policy::PageParams kPopulation = Params(0.5, 0.5, 0.35);

TEST(HostLearningTest, PooledFitRecoversTheSharedParameters) {
  const policy::PageParams truth = Params(0.1, 0.8, 0.02);
  HostLearningState host = InitHostLearning(kPopulation);
  std::mt19937_64 rng(7);
  int refits = 0;
  // 40 pages with 50 outcomes each, interleaved.
  for (int k = 0; k < 2000; ++k) {
    const Outcome o = SimulateInterval(truth, rng);
    const HostUpdate u = LearnHostFromCrawl(o.tau, o.signals, o.changed, 0.0, LearningOptions(),
                                            HostLearningOptions(), &host);
    ASSERT_NE(u, HostUpdate::kRejected);
    refits += u == HostUpdate::kRefitted;
  }
  EXPECT_EQ(host.pooled.crawls, 2000u);
  const policy::PageParams fit = HostPrior(host);
  EXPECT_NEAR(fit.change_rate, truth.change_rate, 0.15 * truth.change_rate);
  EXPECT_NEAR(fit.recall, truth.recall, 0.1);
  EXPECT_NEAR(fit.false_rate, truth.false_rate, 0.3 * truth.false_rate);
  // 10, then +8 up to 32 outcomes, then +n/4: O(log n) fits, far fewer
  // than the outcomes.
  EXPECT_GE(refits, 10);
  EXPECT_LE(refits, 25);
}

TEST(HostLearningTest, PriorStaysThePopulationsUntilMinOutcomes) {
  HostLearningState host = InitHostLearning(kPopulation);
  HostLearningOptions o;
  o.min_outcomes = 5;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(LearnHostFromCrawl(1.0, 0, false, 0.0, LearningOptions(), o, &host),
              HostUpdate::kLearned);
  }
  EXPECT_FLOAT_EQ(HostPrior(host).change_rate, 0.5f);
  EXPECT_EQ(host.fitted_outcomes, 0u);
  EXPECT_DOUBLE_EQ(HostPriorWeight(host, LearningOptions(), o), LearningOptions().prior_weight);
  EXPECT_EQ(LearnHostFromCrawl(1.0, 0, false, 0.0, LearningOptions(), o, &host),
            HostUpdate::kRefitted);
  EXPECT_EQ(host.fitted_outcomes, 5u);
  // Five unchanged crawls of length 1 pull Δ below the prior's 0.5.
  EXPECT_LT(HostPrior(host).change_rate, 0.5f);
}

TEST(HostLearningTest, NewPageStartsFromTheHostFit) {
  HostLearningState host = InitHostLearning(kPopulation);
  std::mt19937_64 rng(3);
  const policy::PageParams truth = Params(0.05, 0.9, 0.01);
  for (int k = 0; k < 500; ++k) {
    const Outcome o = SimulateInterval(truth, rng);
    LearnHostFromCrawl(o.tau, o.signals, o.changed, 0.0, LearningOptions(), HostLearningOptions(),
                       &host);
  }
  LearningOptions no_optimism;
  no_optimism.optimism = 0.0;
  LearningState page = InitLearning(kPopulation);
  const LearnedModel m = FitPage(host, 2.0, no_optimism, HostLearningOptions(), &page);
  ASSERT_TRUE(m.ok);
  const policy::PageParams prior = Prior(page);
  EXPECT_FLOAT_EQ(prior.change_rate, host.change_rate);
  EXPECT_FLOAT_EQ(prior.recall, host.recall);
  EXPECT_FLOAT_EQ(prior.false_rate, host.false_rate);
  EXPECT_EQ(m.estimate.importance, 2.0);
  EXPECT_NEAR(m.estimate.change_rate, host.change_rate, 1e-4 * host.change_rate);
  EXPECT_NEAR(m.estimate.recall, host.recall, 1e-4);
  EXPECT_NEAR(m.estimate.false_rate, host.false_rate, 1e-4 * host.false_rate);
}

TEST(HostLearningTest, WeightGrowsWithEvidenceAndIsBounded) {
  HostLearningState host = InitHostLearning(kPopulation);
  const LearningOptions base;
  const HostLearningOptions o;
  host.fitted_outcomes = 40;
  EXPECT_DOUBLE_EQ(HostPriorWeight(host, base, o), base.prior_weight + 2.0);
  host.fitted_outcomes = 1000000;
  EXPECT_DOUBLE_EQ(HostPriorWeight(host, base, o), o.max_prior_weight);
  // The extra pseudo-crawls count as outcomes for the optimistic bound.
  LearningState page = InitLearning(kPopulation);
  const LearningOptions fit = PageLearningOptions(page, host, base, o);
  EXPECT_DOUBLE_EQ(fit.prior_weight, o.max_prior_weight);
  const double extra = o.max_prior_weight - base.prior_weight;
  EXPECT_DOUBLE_EQ(fit.optimism / (1.0 + page.crawls), base.optimism / (1.0 + extra));
}

TEST(HostLearningTest, SignalRateWeightHasItsOwnBound) {
  HostLearningState host = InitHostLearning(kPopulation);
  const LearningOptions base;
  HostLearningOptions o;
  o.max_prior_weight = 64.0;
  o.max_signal_prior_weight = 4.0;
  EXPECT_DOUBLE_EQ(HostSignalPriorWeight(host, base, o), base.signal_prior_weight);
  host.fitted_outcomes = 10;
  EXPECT_DOUBLE_EQ(HostPriorWeight(host, base, o), base.prior_weight + 0.5);
  EXPECT_DOUBLE_EQ(HostSignalPriorWeight(host, base, o), base.signal_prior_weight + 0.5);
  host.fitted_outcomes = 1000000;
  EXPECT_DOUBLE_EQ(HostPriorWeight(host, base, o), 64.0);
  EXPECT_DOUBLE_EQ(HostSignalPriorWeight(host, base, o), 4.0);
  // Both reach the page's fit; the optimistic bound counts the likelihood's
  // extra pseudo-crawls.
  LearningState page = InitLearning(kPopulation);
  ASSERT_TRUE(LearnFromCrawl(1.0, 2, true, 0.0, &page));
  const LearningOptions fit = PageLearningOptions(page, host, base, o);
  EXPECT_DOUBLE_EQ(fit.prior_weight, 64.0);
  EXPECT_DOUBLE_EQ(fit.signal_prior_weight, 4.0);
  EXPECT_DOUBLE_EQ(fit.optimism / (1.0 + page.crawls),
                   base.optimism / (1.0 + page.crawls + 64.0 - base.prior_weight));
}

// A page with few outcomes of its own, unlike its host's: a prior worth
// more in the likelihood than in γ̂ pulls its α nearer the host's, and its γ
// less near, than one weight for both does.
TEST(HostLearningTest, PageLeansOnTheHostsAlphaMoreThanOnItsSignalRate) {
  const policy::PageParams host_truth = Params(0.1, 0.8, 0.02);  // α = 0.02, γ = 0.1
  HostLearningState host = InitHostLearning(kPopulation);
  std::mt19937_64 rng(13);
  for (int k = 0; k < 2000; ++k) {
    const Outcome o = SimulateInterval(host_truth, rng);
    LearnHostFromCrawl(o.tau, o.signals, o.changed, 0.0, LearningOptions(), HostLearningOptions(),
                       &host);
  }
  const double host_alpha = (1.0 - host.recall) * host.change_rate;
  const double host_gamma = host.recall * host.change_rate + host.false_rate;
  // Six crawls 2 apart, each changed, 3 signals in each: α and γ far above
  // the host's.
  LearningState page = InitLearning(kPopulation);
  for (int k = 0; k < 6; ++k) ASSERT_TRUE(LearnFromCrawl(2.0, 3, true, 0.0, &page));
  LearningOptions no_optimism;
  no_optimism.optimism = 0.0;
  HostLearningOptions one;
  one.max_prior_weight = 8.0;
  one.max_signal_prior_weight = 8.0;
  HostLearningOptions split = one;
  split.max_prior_weight = 64.0;
  split.max_signal_prior_weight = 4.0;
  LearningState a = page, b = page;
  const LearnedModel equal = FitPage(host, 1.0, no_optimism, one, &a);
  const LearnedModel leaning = FitPage(host, 1.0, no_optimism, split, &b);
  ASSERT_TRUE(equal.ok && leaning.ok);
  ASSERT_GT(equal.alpha, host_alpha);
  ASSERT_GT(equal.signal_rate, host_gamma);
  EXPECT_LT(leaning.alpha, equal.alpha);  // nearer the host's α
  EXPECT_GT(leaning.alpha, host_alpha);
  EXPECT_GT(leaning.signal_rate, equal.signal_rate);  // nearer the page's own γ
  // Relative to the host, α has moved further towards it than γ.
  EXPECT_LT(std::log(leaning.alpha / host_alpha), std::log(leaning.signal_rate / host_gamma));
}

TEST(HostLearningTest, OwnOutcomesOutweighTheHostPrior) {
  // The host says Δ ≈ 0.05; this page changes at every crawl of length 1.
  HostLearningState host = InitHostLearning(kPopulation);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 2000; ++k) {
    const Outcome o = SimulateInterval(Params(0.05, 0.0, 0.0), rng);
    LearnHostFromCrawl(o.tau, o.signals, o.changed, 0.0, LearningOptions(), HostLearningOptions(),
                       &host);
  }
  LearningOptions no_optimism;
  no_optimism.optimism = 0.0;
  LearningState page = InitLearning(kPopulation);
  for (int k = 0; k < 40; ++k) ASSERT_TRUE(LearnFromCrawl(1.0, 0, k % 4 != 0, 0.0, &page));
  const LearnedModel m = FitPage(host, 1.0, no_optimism, HostLearningOptions(), &page);
  ASSERT_TRUE(m.ok);
  // 30 of 40 unit intervals changed: Δ near log 4 ≈ 1.39, far above 0.05.
  EXPECT_GT(m.estimate.change_rate, 0.8);
}

TEST(HostLearningTest, BadInputIsRejectedAndLeavesTheState) {
  HostLearningState host = InitHostLearning(kPopulation);
  ASSERT_EQ(LearnHostFromCrawl(1.0, 1, true, 0.0, LearningOptions(), HostLearningOptions(), &host),
            HostUpdate::kLearned);
  const HostLearningState before = host;
  for (const double tau : {-1.0, std::nan(""), HUGE_VAL}) {
    EXPECT_EQ(
        LearnHostFromCrawl(tau, 0, false, 0.0, LearningOptions(), HostLearningOptions(), &host),
        HostUpdate::kRejected);
  }
  EXPECT_EQ(
      LearnHostFromCrawl(1.0, -2, false, 0.0, LearningOptions(), HostLearningOptions(), &host),
      HostUpdate::kRejected);
  // A change over τ = 0 without signals has probability 0.
  EXPECT_EQ(LearnHostFromCrawl(0.0, 0, true, 0.0, LearningOptions(), HostLearningOptions(), &host),
            HostUpdate::kRejected);
  EXPECT_EQ(std::memcmp(&before, &host, sizeof(host)), 0);
}

TEST(HostLearningTest, OptionsAreChecked) {
  const LearningOptions base;
  EXPECT_TRUE(CheckHostLearningOptions(HostLearningOptions(), base).ok());
  HostLearningOptions o;
  o.min_refit_interval = 0;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("min_refit_interval"),
            std::string::npos);
  o = HostLearningOptions();
  o.max_refit_interval = 2;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("max_refit_interval"),
            std::string::npos);
  o = HostLearningOptions();
  o.max_prior_weight = 1.0;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("max_prior_weight"),
            std::string::npos);
  o = HostLearningOptions();
  o.max_signal_prior_weight = 2.0;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("max_signal_prior_weight"),
            std::string::npos);
  o.max_signal_prior_weight = HUGE_VAL;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("max_signal_prior_weight"),
            std::string::npos);
  o = HostLearningOptions();
  o.outcomes_per_weight = 0.0;
  EXPECT_NE(CheckHostLearningOptions(o, base).message().find("outcomes_per_weight"),
            std::string::npos);
}

TEST(HostLearningTest, StateIsAPlainStructOf108Bytes) {
  static_assert(std::is_trivially_copyable<HostLearningState>::value);
  EXPECT_EQ(sizeof(HostLearningState), 108u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
