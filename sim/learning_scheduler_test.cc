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

TEST(LearningSchedulerTest, HostPoolingGivesPagesTheirHostsFit) {
  // 2000 pages in ~20 hosts whose pages share (Δ, λ, ν) exactly, ~5 crawls
  // a page: the largest hosts' pooled fits, which every one of their pages
  // now has as its prior, are near the hosts' parameters, far from the
  // population prior the pages started from.
  const WorldConfig c = NoisyWorld(2000, 100);
  Instance inst = GenerateInstance(c, 11, 0);
  HostStructure hosts;
  hosts.mean_pages_per_host = 100;
  hosts.noise = 0.0;
  AddHostStructure(hosts, 11, 0, &inst);
  const Realization world = Realize(c, inst, 11, 0);
  LearningSchedulerOptions options;
  options.host_pooling = true;
  const std::vector<policy::PageParams> prior = Flat(inst.pages, 0.5, 0.5, 0.35);
  auto learner = LearningScheduler::Create(prior, options, inst.host);
  ASSERT_TRUE(learner.ok()) << learner.status();
  const CrawlLog log = RunScheduler(world, c.num_pages, **learner);
  const int64_t crawls = log.crawl_begin.back();
  EXPECT_GT((*learner)->host_refits(), 20);
  EXPECT_LT((*learner)->host_refits(), crawls / 10);
  for (int h = 0; h < 3; ++h) {
    int page = 0;
    while (inst.host[page] != h) ++page;
    const policy::PageParams& truth = inst.pages[page];
    const policy::PageParams fit = shard::HostPrior((*learner)->Host(h));
    EXPECT_NEAR(fit.change_rate, truth.change_rate, 0.2 * truth.change_rate + 0.02) << "host " << h;
    // A host with λ ≈ 0 and ν ~ 0.1-0.6 says little about λ in a few
    // hundred outcomes: the prior's pseudo-crawls still pull.
    EXPECT_NEAR(fit.recall, truth.recall, 0.2) << "host " << h;
    for (int i = 0; i < c.num_pages; ++i) {
      if (inst.host[i] != h) continue;
      EXPECT_FLOAT_EQ(shard::Prior((*learner)->Learning(i)).change_rate, fit.change_rate);
    }
  }
}

TEST(LearningSchedulerTest, HostPoolingNeedsOneHostPerPage) {
  const std::vector<policy::PageParams> prior(3, {1.0, 0.5, 0.5, 0.35});
  LearningSchedulerOptions options;
  options.host_pooling = true;
  EXPECT_FALSE(LearningScheduler::Create(prior, options, {0, 1}).ok());
  EXPECT_FALSE(LearningScheduler::Create(prior, options, {0, -1, 2}).ok());
  EXPECT_TRUE(LearningScheduler::Create(prior, options, {0, 1, 0}).ok());
  options.host.max_prior_weight = 0.5;
  EXPECT_FALSE(LearningScheduler::Create(prior, options, {0, 1, 0}).ok());
  EXPECT_FALSE(MakeScheduler("GREEDY-NCIS-LEARN-HOST", prior, 100).ok());
  EXPECT_TRUE(MakeScheduler("GREEDY-NCIS-LEARN-HOST", prior, 100,
                            ValueSchedulerOptions::Argmax::kLazyBound, {0, 0, 1})
                  .ok());
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
