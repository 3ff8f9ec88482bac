#include "sim/experiment.h"

#include "gtest/gtest.h"
#include "sim/paper_experiments.h"

namespace recrawl {
namespace sim {
namespace {

TEST(ExperimentTest, ThreadsAndSeedsDoNotChangeResultsOnlySeedsDo) {
  ExperimentOverrides o;
  o.m = {60, 150};
  o.horizon = 60;
  absl::StatusOr<Experiment> e = PaperExperiment("fig6", o);
  ASSERT_TRUE(e.ok());
  RunOptions one{4, 9, 1}, two{4, 9, 2}, other{4, 10, 2};
  auto a = RunExperiment(*e, one), b = RunExperiment(*e, two), c = RunExperiment(*e, other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  for (size_t s = 0; s < e->settings.size(); ++s) {
    for (size_t k = 0; k < e->policies.size(); ++k) {
      EXPECT_EQ(a->cells[s][k].mean, b->cells[s][k].mean);
      EXPECT_EQ(a->cells[s][k].stderr_, b->cells[s][k].stderr_);
    }
  }
  EXPECT_NE(a->cells[0][2].mean, c->cells[0][2].mean);  // GREEDY, another seed
}

TEST(ExperimentTest, SemiCorruptionOnlyChangesBeliefs) {
  ExperimentOverrides o;
  o.m = {2000};
  absl::StatusOr<Experiment> e = PaperExperiment("semi", o);
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->settings.size(), 3u);
  Instance inst = e->settings[2].make_instance(1, 5);
  std::vector<policy::PageParams> belief = e->settings[2].make_beliefs(inst, 1, 5);
  std::vector<policy::PageParams> clean = e->settings[0].make_beliefs(inst, 1, 5);
  int changed = 0;
  for (size_t i = 0; i < inst.pages.size(); ++i) {
    EXPECT_EQ(belief[i].change_rate, inst.pages[i].change_rate);
    EXPECT_EQ(clean[i].recall, inst.pages[i].recall);
    changed += belief[i].recall != inst.pages[i].recall;
  }
  EXPECT_GT(changed, 1900);
}

TEST(SignalQualityTest, PrecisionAndRecallRoundTrip) {
  policy::PageParams p = WithSignalQuality({1.0, 0.5, 0, 0}, 0.25, 0.4);
  EXPECT_DOUBLE_EQ(p.recall, 0.4);
  EXPECT_NEAR(p.recall * p.change_rate / (p.recall * p.change_rate + p.false_rate), 0.25, 1e-12);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
