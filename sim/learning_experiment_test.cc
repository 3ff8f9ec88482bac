#include "sim/learning_experiment.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace sim {
namespace {

TEST(LearningExperimentTest, DefaultsAndWindows) {
  absl::StatusOr<LearningExperiment> e = LearnExperiment({"fig6", "semi"}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->settings.size(), 7u);  // fig6's six page counts, then semi
  EXPECT_EQ(e->settings[0].config.num_pages, 100);
  EXPECT_EQ(e->settings[5].config.num_pages, 10000);
  EXPECT_EQ(e->settings[5].config.horizon, 1000);
  EXPECT_EQ(e->settings[5].config.false_rate.kind, Distribution::Kind::kUniform);
  EXPECT_EQ(e->settings[6].world, "semi");
  EXPECT_EQ(e->settings[6].config.num_pages, 10000);
  EXPECT_EQ(e->settings[6].config.bandwidth.rate[0], 500);
  EXPECT_EQ(e->settings[6].config.horizon, 200);
  ASSERT_EQ(e->gaps.size(), 2u);
  EXPECT_EQ(e->gaps[0],
            std::make_pair(std::string("GREEDY-NCIS"), std::string("GREEDY-NCIS-LEARN")));
  EXPECT_EQ(e->gaps[1], std::make_pair(std::string("GREEDY"), std::string("GREEDY-LEARN")));
  const auto w = LearningWindows(*e, e->settings[0]);
  ASSERT_EQ(w.size(), 12u);
  EXPECT_EQ(w[0], std::make_pair(0.0, 1000.0));
  EXPECT_EQ(w[1], std::make_pair(750.0, 1000.0));
  EXPECT_EQ(w[2], std::make_pair(0.0, 100.0));
  EXPECT_EQ(w[11], std::make_pair(900.0, 1000.0));
  EXPECT_FALSE(LearnExperiment({"mars"}, {}).ok());
}

// Learning on a small fig6 world where every page is crawled often (m = 100,
// R = 100: one crawl a page per time unit on average, 300 time units): a
// GREEDY-NCIS that learns each page's (Δ, λ, ν) from the population prior
// must do clearly better than one that keeps the prior, and over the last
// half of the run be within 1 point of one given the truth.
// Differences are paired per repetition (same instance and realisation) and
// judged against their standard errors.
TEST(LearningExperimentTest, LearningBeatsThePriorAndNearsTheTruth) {
  ExperimentOverrides o;
  o.m = {100};
  o.horizon = 300;
  o.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN", "GREEDY-NCIS-PRIOR"};
  absl::StatusOr<LearningExperiment> e = LearnExperiment({"fig6"}, o);
  ASSERT_TRUE(e.ok()) << e.status();
  e->last_share = 0.5;
  e->series_windows = 3;
  e->gaps.emplace_back("GREEDY-NCIS-PRIOR", "GREEDY-NCIS-LEARN");
  RunOptions run;
  run.reps = 8;
  run.seed = 5;
  absl::StatusOr<LearningResult> r = RunLearningExperiment(*e, run);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<MeanSe>& last = r->gap[0][1];  // (150, 300]
  const MeanSe& true_minus_learnt = last[0];
  const MeanSe& prior_minus_learnt = last[1];
  // Learning pays: the prior-only policy is worse by many standard errors.
  EXPECT_LT(prior_minus_learnt.mean, -5 * prior_minus_learnt.stderr_)
      << prior_minus_learnt.mean << " ± " << prior_minus_learnt.stderr_;
  // ...and closes most of the prior's gap to the truth.
  const double prior_gap = true_minus_learnt.mean - prior_minus_learnt.mean;
  EXPECT_LT(true_minus_learnt.mean, 0.25 * prior_gap)
      << "true - learnt " << true_minus_learnt.mean << ", true - prior " << prior_gap;
  // Within 1 point of the truth, with 3 standard errors'
  // allowance for the 8 repetitions.
  EXPECT_LT(true_minus_learnt.mean, 0.01 + 3 * true_minus_learnt.stderr_)
      << true_minus_learnt.mean << " ± " << true_minus_learnt.stderr_;
}

TEST(LearningExperimentTest, HostStructureAddsTheHostPooledLearner) {
  HostStructure hosts;
  hosts.mean_pages_per_host = 20;
  absl::StatusOr<LearningExperiment> e = LearnExperiment({"fig6"}, {}, hosts);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NE(std::find(e->policies.begin(), e->policies.end(), "GREEDY-NCIS-LEARN-HOST"),
            e->policies.end());
  EXPECT_NE(
      std::find(e->gaps.begin(), e->gaps.end(),
                std::make_pair(std::string("GREEDY-NCIS"), std::string("GREEDY-NCIS-LEARN-HOST"))),
      e->gaps.end());
  EXPECT_EQ(e->settings[0].hosts.mean_pages_per_host, 20);
  // Off by default; the host-pooled learner then has no hosts to pool.
  ExperimentOverrides o;
  o.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN-HOST"};
  EXPECT_FALSE(LearnExperiment({"fig6"}, o).ok());
  hosts.noise = -1;
  EXPECT_FALSE(LearnExperiment({"fig6"}, {}, hosts).ok());
}

TEST(LearningExperimentTest, HostPriorWeightVariantIsPairedWithTheDefault) {
  HostStructure hosts;
  hosts.mean_pages_per_host = 20;
  ExperimentOverrides o;
  o.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN-HOST", "GREEDY-NCIS-LEARN-HOST-A32-G4"};
  absl::StatusOr<LearningExperiment> e = LearnExperiment({"fig6"}, o, hosts);
  ASSERT_TRUE(e.ok()) << e.status();
  const std::vector<std::pair<std::string, std::string>> gaps = {
      {"GREEDY-NCIS", "GREEDY-NCIS-LEARN-HOST"},
      {"GREEDY-NCIS", "GREEDY-NCIS-LEARN-HOST-A32-G4"},
      {"GREEDY-NCIS-LEARN-HOST-A32-G4", "GREEDY-NCIS-LEARN-HOST"}};
  EXPECT_EQ(e->gaps, gaps);
  // Host-pooled: refused without host structure.
  absl::StatusOr<LearningExperiment> flat = LearnExperiment({"fig6"}, o);
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("GREEDY-NCIS-LEARN-HOST"), std::string::npos);
}

TEST(LearningExperimentTest, HostPooledRunIsDeterministic) {
  HostStructure hosts;
  hosts.mean_pages_per_host = 10;
  ExperimentOverrides o;
  o.m = {200};
  o.horizon = 100;
  o.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN", "GREEDY-NCIS-LEARN-HOST"};
  absl::StatusOr<LearningExperiment> e = LearnExperiment({"fig6"}, o, hosts);
  ASSERT_TRUE(e.ok()) << e.status();
  RunOptions run;
  run.reps = 2;
  run.seed = 3;
  absl::StatusOr<LearningResult> a = RunLearningExperiment(*e, run);
  run.threads = 1;
  absl::StatusOr<LearningResult> b = RunLearningExperiment(*e, run);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->gap[0][0].size(), 2u);
  EXPECT_EQ(a->gap[0][0][1].mean, b->gap[0][0][1].mean);
  EXPECT_EQ(a->accuracy[0][0][2].mean, b->accuracy[0][0][2].mean);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
