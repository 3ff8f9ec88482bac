#include "sim/policies.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/optimal_policy.h"
#include "shard/host_learning.h"
#include "sim/adaptive_schedulers.h"
#include "sim/metrics.h"
#include "sim/rate_schedulers.h"
#include "sim/simulator.h"
#include "sim/test_util.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {
namespace {

using Argmax = ValueSchedulerOptions::Argmax;

using test_util::NoisyWorld;
using test_util::Recorder;

TEST(ValueSchedulerTest, LazyArgmaxPicksExactlyWhatTheScanPicks) {
  for (int m : {50, 300}) {
    WorldConfig c = NoisyWorld(m, 40);
    c.delay = {SignalDelay::Kind::kPoissonSlots, 6};
    Instance inst = GenerateInstance(c, 11, 0);
    Realization world = Realize(c, inst, 11, 0);
    for (const char* name : {"GREEDY", "GREEDY-CIS", "GREEDY-NCIS", "G-NCIS-APPROX-1",
                             "G-NCIS-APPROX-2", "GREEDY-NCIS-D", "GREEDY-CIS+"}) {
      auto lazy = MakeScheduler(name, inst.pages, 100, Argmax::kLazyBound);
      auto scan = MakeScheduler(name, inst.pages, 100, Argmax::kBruteForce);
      ASSERT_TRUE(lazy.ok() && scan.ok()) << name;
      Recorder a(**lazy), b(**scan);
      RunScheduler(world, m, a);
      RunScheduler(world, m, b);
      ASSERT_EQ(a.picks.size(), world.slot_times.size());
      EXPECT_EQ(a.picks, b.picks) << name << " m=" << m;
    }
  }
}

struct Estimate {
  double mean = 0, stderr_ = 0;
};

Estimate Accuracy(const WorldConfig& c, const std::string& name, int reps, uint64_t seed,
                  double* analytic = nullptr) {
  double sum = 0, sum2 = 0, analytic_sum = 0;
  for (int r = 0; r < reps; ++r) {
    Instance inst = GenerateInstance(c, seed, r);
    Realization world = Realize(c, inst, seed, r);
    auto s = MakeScheduler(name, inst.pages, c.bandwidth.rate[0]);
    EXPECT_TRUE(s.ok()) << s.status();
    CrawlLog log = RunScheduler(world, c.num_pages, **s);
    const double a = Evaluate(inst, world, log, seed, r).accuracy();
    sum += a;
    sum2 += a * a;
    if (analytic != nullptr) {
      analytic_sum += *AnalyticAccuracy("BASELINE", inst.pages, c.bandwidth.rate[0]);
    }
  }
  if (analytic != nullptr) *analytic = analytic_sum / reps;
  const double mean = sum / reps;
  return {mean, std::sqrt(std::max(0.0, sum2 / reps - mean * mean) / (reps - 1))};
}

TEST(SimulatorTest, PeriodicPolicyMatchesAnalyticFreshness) {
  // Round-robin crawls every page every ξ^{-1} = m/R: accuracy Σ G(ξ)/Σμ
  // (Eq. (5)). Compared per instance, so only the sampling error remains.
  WorldConfig c;
  c.num_pages = 40;
  c.horizon = 1000;
  c.bandwidth = BandwidthSchedule::Constant(20);
  const int reps = 40;
  double sum = 0, sum2 = 0;
  for (int r = 0; r < reps; ++r) {
    Instance inst = GenerateInstance(c, 3, r);
    Realization world = Realize(c, inst, 3, r);
    RoundRobinScheduler rr(c.num_pages);
    CrawlLog log = RunScheduler(world, c.num_pages, rr);
    const double a = Evaluate(inst, world, log, 3, r).accuracy();
    double g = 0, mu = 0;
    for (const auto& p : inst.pages) {
      g += policy::PeriodicObjective(20.0 / 40, p.importance, p.change_rate);
      mu += p.importance;
    }
    const double diff = a - g / mu;
    sum += diff;
    sum2 += diff * diff;
  }
  const double mean = sum / reps;
  const double se = std::sqrt((sum2 / reps - mean * mean) / (reps - 1));
  EXPECT_LT(std::abs(mean), 3 * se) << "mean difference " << mean << ", se " << se;
  EXPECT_LT(se, 0.003);
}

TEST(SimulatorTest, GreedyIsWithinOnePointOfBaseline) {
  for (int m : {100, 200}) {
    WorldConfig c;
    c.num_pages = m;
    double baseline;
    Estimate greedy = Accuracy(c, "GREEDY", 4, 21, &baseline);
    EXPECT_NEAR(greedy.mean, baseline, 0.01) << "m=" << m;
    Estimate lds = Accuracy(c, "LDS", 4, 21);
    EXPECT_NEAR(lds.mean, baseline, 0.01) << "m=" << m;
  }
}

TEST(SimulatorTest, SignalsHelpAndSeedsReproduce) {
  WorldConfig c = NoisyWorld(200, 200);
  Estimate greedy = Accuracy(c, "GREEDY", 3, 5);
  Estimate ncis = Accuracy(c, "GREEDY-NCIS", 3, 5);
  EXPECT_GT(ncis.mean, greedy.mean + 0.01);
  Estimate again = Accuracy(c, "GREEDY-NCIS", 3, 5);
  EXPECT_EQ(again.mean, ncis.mean);
  Estimate other = Accuracy(c, "GREEDY-NCIS", 3, 6);
  EXPECT_NE(other.mean, ncis.mean);
}

TEST(PoliciesTest, EveryNamedPolicyRunsAtFullBandwidth) {
  WorldConfig c = NoisyWorld(60, 20);
  Instance inst = GenerateInstance(c, 1, 0);
  HostStructure hosts;
  hosts.mean_pages_per_host = 6;
  AddHostStructure(hosts, 1, 0, &inst);  // for GREEDY-NCIS-LEARN-HOST
  Realization world = Realize(c, inst, 1, 0);
  for (const std::string& name : PolicyNames()) {
    if (IsAnalytic(name)) {
      absl::StatusOr<double> a = AnalyticAccuracy(name, inst.pages, 100);
      ASSERT_TRUE(a.ok()) << name;
      EXPECT_GT(*a, 0.5) << name;
      continue;
    }
    auto s =
        MakeScheduler(name, inst.pages, 100, ValueSchedulerOptions::Argmax::kLazyBound, inst.host);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status();
    CrawlLog log = RunScheduler(world, c.num_pages, **s);
    EXPECT_EQ(log.crawl_times.size(), world.slot_times.size()) << name;
  }
  EXPECT_FALSE(MakeScheduler("FANCY", inst.pages, 100).ok());
}

TEST(PoliciesTest, HostPriorWeightsAreReadFromTheName) {
  const std::optional<HostPriorWeights> w = ParseHostPriorWeights("GREEDY-NCIS-LEARN-HOST-A32-G4");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->change, 32.0);
  EXPECT_EQ(w->signal, 4.0);
  ASSERT_TRUE(ParseHostPriorWeights("GREEDY-NCIS-LEARN-HOST-A2.5-G0").has_value());
  for (const char* bad :
       {"GREEDY-NCIS-LEARN-HOST", "GREEDY-NCIS-LEARN-HOST-A32", "GREEDY-NCIS-LEARN-HOST-A32-G",
        "GREEDY-NCIS-LEARN-HOST-Ax-G4", "GREEDY-NCIS-LEARN-HOST-A-1-G4",
        "GREEDY-NCIS-LEARN-HOST-A32-G4-G5", "GREEDY-NCIS-LEARN-HOST-Ainf-G4",
        "GREEDY-NCIS-LEARN-HOST-Anan-G4", "GREEDY-NCIS-LEARN-A32-G4"}) {
    EXPECT_FALSE(ParseHostPriorWeights(bad).has_value()) << bad;
  }
}

TEST(PoliciesTest, HostPriorWeightVariantOfTheDefaultsCrawlsAsTheDefault) {
  WorldConfig c = NoisyWorld(120, 30);
  Instance inst = GenerateInstance(c, 4, 0);
  HostStructure hosts;
  hosts.mean_pages_per_host = 10;
  AddHostStructure(hosts, 4, 0, &inst);
  Realization world = Realize(c, inst, 4, 0);
  const shard::HostLearningOptions defaults;
  const std::string same = absl::StrCat("GREEDY-NCIS-LEARN-HOST-A", defaults.max_prior_weight, "-G",
                                        defaults.max_signal_prior_weight);
  std::vector<CrawlLog> logs;
  for (const std::string& name : {std::string("GREEDY-NCIS-LEARN-HOST"), same,
                                  std::string("GREEDY-NCIS-LEARN-HOST-A64-G4")}) {
    auto s = MakeScheduler(name, inst.pages, 100, Argmax::kLazyBound, inst.host);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status();
    logs.push_back(RunScheduler(world, c.num_pages, **s));
  }
  EXPECT_EQ(logs[1].crawl_times, logs[0].crawl_times);
  EXPECT_EQ(logs[1].crawl_begin, logs[0].crawl_begin);
  EXPECT_NE(logs[2].crawl_begin, logs[0].crawl_begin);
  // Below the learner's own weights, or without hosts: refused.
  absl::StatusOr<std::unique_ptr<Scheduler>> low =
      MakeScheduler("GREEDY-NCIS-LEARN-HOST-A8-G1", inst.pages, 100, Argmax::kLazyBound, inst.host);
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.status().message().find("max_signal_prior_weight"), std::string::npos);
  EXPECT_FALSE(MakeScheduler("GREEDY-NCIS-LEARN-HOST-A8-G4", inst.pages, 100).ok());
}

TEST(AdaptiveIntervalTest, ShippedRules) {
  auto nutch = AdaptiveIntervalRule::Defaults(AdaptiveIntervalRule::Kind::kNutch, 100, 100);
  EXPECT_DOUBLE_EQ(nutch.Update(1.0, true), 0.8);
  EXPECT_DOUBLE_EQ(nutch.Update(1.0, false), 1.4);
  EXPECT_DOUBLE_EQ(nutch.Update(11.0, false), 12.0);  // clamped at 12·I_0
  auto storm = AdaptiveIntervalRule::Defaults(AdaptiveIntervalRule::Kind::kStormCrawler, 100, 100);
  EXPECT_DOUBLE_EQ(storm.Update(1.0, true), 0.5 + 0.5 * 0.01);
  EXPECT_DOUBLE_EQ(storm.Update(1.0, false), 1.5);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
