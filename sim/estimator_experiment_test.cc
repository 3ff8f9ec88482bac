#include "sim/estimator_experiment.h"

#include <cmath>

#include "gtest/gtest.h"
#include "policy/page_model.h"

namespace recrawl {
namespace sim {
namespace {

TEST(AppendixETest, PagesFollowThePaperRanges) {
  absl::StatusOr<EstimatorExperiment> e = AppendixEExperiment({});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->horizon, 100000);
  EXPECT_EQ(e->crawl_ratios, (std::vector<double>{0.25, 0.5, 1, 2, 4}));
  for (uint64_t rep = 0; rep < 200; ++rep) {
    const policy::PageParams p = AppendixEPage(*e, 1, rep);
    const policy::PageModel m = *policy::PageModel::Create(p);
    EXPECT_GE(m.precision(), 0.2 - 1e-12);
    EXPECT_LE(m.precision(), 0.95 + 1e-12);
    EXPECT_GE(p.recall, 0.2);
    EXPECT_LE(p.recall, 0.95);
    EXPECT_GE(1 / p.change_rate, 2.0 - 1e-12);
    EXPECT_LE(1 / p.change_rate, 20.0 + 1e-12);
  }
  ExperimentOverrides m;
  m.m = {10};
  EXPECT_FALSE(AppendixEExperiment(m).ok());
  ExperimentOverrides pol;
  pol.policies = {"GREEDY"};
  EXPECT_FALSE(AppendixEExperiment(pol).ok());
}

// One page with known (Δ, λ, ν), crawled every τ = 5 (10^5 crawls). Under
// the model the naive counts converge to
//   precision: P(changed | n ≥ 1) = 1 − e^{−Δτ}(1 − e^{−ντ}) / (1 − e^{−γτ}),
//   recall:    P(n ≥ 1 | changed) = (1 − e^{−γτ} − e^{−Δτ}(1 − e^{−ντ})) / (1 − e^{−Δτ}),
// both above the truth (an interval with a false signal and an unsignalled
// change counts as a true signal; several changes need one signal); they
// must land within 5 binomial standard errors of these limits. The MLE must
// be far closer to the truth than the naive estimate.
TEST(AppendixETest, OnePageLargeSample) {
  policy::PageParams page;
  page.importance = 1;
  page.change_rate = 0.2;
  page.recall = 0.6;
  page.false_rate = 0.12;  // γ = 0.24, precision = 0.5
  const double tau = 5, horizon = 500000, crawls = horizon / tau;
  absl::StatusOr<SignalQualityEstimates> q = EstimateSignalQuality(page, 1 / tau, horizon, 4, 0);
  ASSERT_TRUE(q.ok());
  const double unchanged = std::exp(-page.change_rate * tau);
  const double signalled = -std::expm1(-(page.recall * page.change_rate + page.false_rate) * tau);
  const double false_only = unchanged * -std::expm1(-page.false_rate * tau);
  const double naive_precision = 1 - false_only / signalled;
  const double naive_recall = (signalled - false_only) / (1 - unchanged);
  auto binomial_se = [](double p, double n) { return std::sqrt(p * (1 - p) / n); };
  EXPECT_NEAR(q->naive_precision, naive_precision,
              5 * binomial_se(naive_precision, crawls * signalled));
  EXPECT_NEAR(q->naive_recall, naive_recall,
              5 * binomial_se(naive_recall, crawls * (1 - unchanged)));
  EXPECT_GT(naive_precision, 0.5 + 0.2);
  EXPECT_GT(naive_recall, 0.6 + 0.2);
  EXPECT_LT(std::fabs(q->mle_precision - 0.5), 0.1 * (q->naive_precision - 0.5));
  EXPECT_LT(std::fabs(q->mle_recall - 0.6), 0.1 * (q->naive_recall - 0.6));
}

// Fig. 13 vs Fig. 14 over 40 App. E pages at every crawl ratio: the MLE's
// bias is within 4 standard errors of 0, the naive estimator's is positive
// (far beyond its standard error) and shrinks as crawls get more frequent
// (fewer intervals hold more than one event).
TEST(AppendixETest, MleUnbiasedNaiveOverestimates) {
  absl::StatusOr<EstimatorExperiment> e = AppendixEExperiment({});
  ASSERT_TRUE(e.ok());
  absl::StatusOr<EstimatorResult> r = RunEstimatorExperiment(*e, {40, 11, 2});
  ASSERT_TRUE(r.ok());
  for (size_t s = 0; s < e->crawl_ratios.size(); ++s) {
    for (int q = 0; q < 2; ++q) {
      const EstimatorCell& naive = r->cells[s][0][q];
      const EstimatorCell& mle = r->cells[s][1][q];
      SCOPED_TRACE(testing::Message()
                   << "ratio " << e->crawl_ratios[s] << ", " << kQualityNames[q]);
      EXPECT_GE(mle.bias.n, 38);
      EXPECT_LT(std::fabs(mle.bias.mean), 4 * mle.bias.stderr_);
      EXPECT_GT(naive.bias.mean, 5 * naive.bias.stderr_);
      if (s > 0) {
        EXPECT_LT(naive.bias.mean, r->cells[s - 1][0][q].bias.mean);
      }
    }
  }
}

TEST(AppendixETest, ThreadsDoNotChangeResults) {
  ExperimentOverrides o;
  o.horizon = 3000;
  absl::StatusOr<EstimatorExperiment> e = AppendixEExperiment(o);
  ASSERT_TRUE(e.ok());
  auto a = RunEstimatorExperiment(*e, {5, 2, 1}), b = RunEstimatorExperiment(*e, {5, 2, 2});
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t s = 0; s < e->crawl_ratios.size(); ++s) {
    for (int k = 0; k < 2; ++k) {
      for (int q = 0; q < 2; ++q) {
        EXPECT_EQ(a->cells[s][k][q].bias.mean, b->cells[s][k][q].bias.mean);
        EXPECT_EQ(a->cells[s][k][q].bias.stderr_, b->cells[s][k][q].bias.stderr_);
      }
    }
  }
  const Report report = EstimatorReport(*e, *a, {5, 2, 1});
  EXPECT_EQ(report.csv.rows.size(), e->crawl_ratios.size() * 4);
  EXPECT_EQ(report.table.rows.size(), e->crawl_ratios.size());
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
