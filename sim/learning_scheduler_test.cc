#include "sim/learning_scheduler.h"

#include <cmath>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "sim/policies.h"
#include "sim/simulator.h"
#include "sim/test_util.h"
#include "sim/value_scheduler.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {
namespace {

using test_util::NoisyWorld;
using test_util::Recorder;

std::vector<policy::PageParams> Flat(const std::vector<policy::PageParams>& pages,
                                     double change_rate, double recall, double false_rate) {
  std::vector<policy::PageParams> out = pages;
  for (auto& p : out) p = {p.importance, change_rate, recall, false_rate};
  return out;
}

TEST(ValueSchedulerTest, UpdateModelRanksByTheNewModel) {
  // A scheduler created on wrong beliefs and told the true ones before the
  // first pick picks exactly what one created on the true ones does.
  const WorldConfig c = NoisyWorld(200, 30);
  const Instance inst = GenerateInstance(c, 4, 0);
  const Realization world = Realize(c, inst, 4, 0);
  const std::vector<policy::CrawlPolicy> ncis(c.num_pages, policy::CrawlPolicy::GreedyNcis());
  auto truth = ValueScheduler::Create(inst.pages, ncis, {});
  auto told = ValueScheduler::Create(Flat(inst.pages, 0.5, 0.5, 0.35), ncis, {});
  ASSERT_TRUE(truth.ok() && told.ok());
  for (int i = 0; i < c.num_pages; ++i) ASSERT_TRUE((*told)->UpdateModel(i, inst.pages[i]).ok());
  EXPECT_FALSE((*told)->UpdateModel(0, {1.0, -1.0, 0.5, 0.1}).ok());
  Recorder a(**truth), b(**told);
  RunScheduler(world, c.num_pages, a);
  RunScheduler(world, c.num_pages, b);
  EXPECT_EQ(a.picks, b.picks);
}

TEST(LearningSchedulerTest, WithoutLearningAPriorOfTheTruthIsGreedyNcis) {
  const WorldConfig c = NoisyWorld(150, 30);
  const Instance inst = GenerateInstance(c, 7, 0);
  const Realization world = Realize(c, inst, 7, 0);
  LearningSchedulerOptions options;
  options.learn = false;
  options.min_signal_precision = 0.0;  // GREEDY-NCIS ranks every signal
  auto frozen = LearningScheduler::Create(inst.pages, options);
  auto ncis = MakeScheduler("GREEDY-NCIS", inst.pages, 100);
  ASSERT_TRUE(frozen.ok() && ncis.ok());
  Recorder a(**frozen), b(**ncis);
  RunScheduler(world, c.num_pages, a);
  RunScheduler(world, c.num_pages, b);
  EXPECT_EQ(a.picks, b.picks);
  EXPECT_EQ((*frozen)->updates(), 0);
}

TEST(LearningSchedulerTest, LearntModelsOfOftenCrawledPagesNearTheTruth) {
  // 50 pages at R = 100 over t <= 400: ~800 crawls a page on average. The
  // scheduler feeds every outcome with its τ and signal count to the
  // shard's learner; the models the index ranks by must then be far closer
  // to the truth than the population prior they started from (a miscounted
  // n_cis or τ would bias λ and ν).
  const WorldConfig c = NoisyWorld(50, 400);
  const Instance inst = GenerateInstance(c, 3, 0);
  const Realization world = Realize(c, inst, 3, 0);
  const std::vector<policy::PageParams> prior = Flat(inst.pages, 0.5, 0.5, 0.35);
  auto learner = LearningScheduler::Create(prior, {});
  ASSERT_TRUE(learner.ok());
  const CrawlLog log = RunScheduler(world, c.num_pages, **learner);
  double prior_error[3] = {0, 0, 0}, learnt_error[3] = {0, 0, 0};
  int pages = 0;
  for (int i = 0; i < c.num_pages; ++i) {
    if (log.crawl_begin[i + 1] - log.crawl_begin[i] < 200) continue;
    ++pages;
    const policy::PageParams& truth = inst.pages[i];
    const policy::PageParams& learnt = (*learner)->Model(i);
    EXPECT_EQ((*learner)->Learning(i).crawls, log.crawl_begin[i + 1] - log.crawl_begin[i]);
    const double t[3] = {truth.change_rate, truth.recall, truth.false_rate};
    const double p[3] = {prior[i].change_rate, prior[i].recall, prior[i].false_rate};
    const double l[3] = {learnt.change_rate, learnt.recall, learnt.false_rate};
    for (int k = 0; k < 3; ++k) {
      prior_error[k] += std::abs(p[k] - t[k]);
      learnt_error[k] += std::abs(l[k] - t[k]);
    }
  }
  ASSERT_GE(pages, 20);
  EXPECT_EQ((*learner)->rejected(), 0);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_LT(learnt_error[k] / pages, 0.25 * prior_error[k] / pages);
  }
  // Δ, where a bias would show: mean absolute error at most 0.05 per unit
  // time (Δ ~ U[0, 1]).
  EXPECT_LT(learnt_error[0] / pages, 0.05);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
