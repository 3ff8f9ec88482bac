#include "sim/bandwidth_experiment.h"

#include <cmath>
#include <limits>
#include <memory>

#include "gtest/gtest.h"
#include "sim/metrics.h"
#include "sim/policies.h"
#include "sim/simulator.h"
#include "sim/windowed_accuracy.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {
namespace {

TEST(Fig12Test, PaperSetting) {
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment({});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->world.num_pages, 1000);
  EXPECT_EQ(e->world.horizon, 400);
  EXPECT_EQ(e->window_crawls, 1000);
  EXPECT_EQ(e->policies, std::vector<std::string>{"GREEDY"});
  ASSERT_EQ(e->schedules.size(), 3u);
  EXPECT_EQ(e->schedules[0].bandwidth.start, (std::vector<double>{0, 133, 266}));
  EXPECT_EQ(e->schedules[0].bandwidth.rate, (std::vector<double>{100, 150, 100}));
  EXPECT_EQ(e->schedules[1].bandwidth.rate, std::vector<double>{100});
  EXPECT_EQ(e->schedules[2].bandwidth.rate, std::vector<double>{150});
  EXPECT_EQ(e->times.front(), 1.0);
  EXPECT_EQ(e->times.back(), 400.0);
  ExperimentOverrides two_m;
  two_m.m = {100, 200};
  EXPECT_FALSE(Fig12Experiment(two_m).ok());
}

// Crawls per unit time follow R(t): 100, then 150 from t = 133, then 100
// from t = 266 (GREEDY on 200 pages, whole slots only).
TEST(Fig12Test, CrawlRateFollowsTheBandwidthSchedule) {
  ExperimentOverrides o;
  o.m = {200};
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment(o);
  ASSERT_TRUE(e.ok());
  WorldConfig config = e->world;
  config.bandwidth = e->schedules[0].bandwidth;
  const Instance inst = GenerateInstance(config, 3, 0);
  const Realization world = Realize(config, inst, 3, 0);
  auto greedy = MakeScheduler("GREEDY", inst.pages, 100);
  ASSERT_TRUE(greedy.ok());
  const std::vector<double> crawls =
      SortedCrawlTimes(RunScheduler(world, config.num_pages, **greedy));
  auto count = [&](double from, double to) {  // crawls in (from, to]
    return std::upper_bound(crawls.begin(), crawls.end(), to) -
           std::upper_bound(crawls.begin(), crawls.end(), from);
  };
  for (int t = 0; t < 400; ++t) {
    const int expected = t < 133 ? 100 : t < 266 ? 150 : 100;
    EXPECT_NEAR(count(t, t + 1), expected, 1) << "t = " << t;
  }
  EXPECT_NEAR(static_cast<double>(crawls.size()), 133 * 100 + 133 * 150 + 134 * 100, 2);
}

// The paper's claim (App. D): after each switch the accuracy moves to the
// level of the constant bandwidth now in force. Before the first switch the
// changing run is the constant-100 run slot for slot.
TEST(Fig12Test, AccuracyMovesToTheLevelOfTheBandwidthInForce) {
  ExperimentOverrides o;
  o.m = {300};
  o.horizon = 90;  // switches at 29.925 and 59.85
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment(o);
  ASSERT_TRUE(e.ok());
  absl::StatusOr<BandwidthResult> r = RunBandwidthExperiment(*e, {4, 5, 2});
  ASSERT_TRUE(r.ok());
  const auto& changing = r->series[0][0];
  const auto& low = r->series[1][0];
  const auto& high = r->series[2][0];
  for (size_t j = 0; j < e->times.size(); ++j) {
    if (e->times[j] < 29.9) {
      EXPECT_EQ(changing[j].mean, low[j].mean) << e->times[j];
    }
  }
  auto at = [&](double t) {
    return std::lower_bound(e->times.begin(), e->times.end(), t - 1e-9) - e->times.begin();
  };
  for (double t : {27.0, 57.0, 88.0}) {
    const size_t j = at(t);
    const double in_force = t < 29.9 || t > 59.9 ? low[j].mean : high[j].mean;
    const double other = t < 29.9 || t > 59.9 ? high[j].mean : low[j].mean;
    EXPECT_LT(std::fabs(changing[j].mean - in_force), std::fabs(changing[j].mean - other))
        << "t = " << t;
  }
  // More bandwidth, more accuracy.
  EXPECT_GT(high[at(57.0)].mean, low[at(57.0)].mean + 0.05);
}

TEST(Fig12Test, ThreadsDoNotChangeResultsOnlySeedsDo) {
  ExperimentOverrides o;
  o.m = {60};
  o.horizon = 6;
  o.policies = {"GREEDY", "GREEDY-NCIS", "LDS", "BASELINE"};
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment(o);
  ASSERT_TRUE(e.ok());
  RunOptions one{3, 9, 1}, two{3, 9, 2}, other{3, 10, 2};
  auto a = RunBandwidthExperiment(*e, one), b = RunBandwidthExperiment(*e, two),
       c = RunBandwidthExperiment(*e, other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool differs = false;
  for (size_t v = 0; v < e->schedules.size(); ++v) {
    for (size_t k = 0; k < e->policies.size(); ++k) {
      for (size_t j = 0; j < e->times.size(); ++j) {
        EXPECT_EQ(a->series[v][k][j].mean, b->series[v][k][j].mean);
        EXPECT_EQ(a->series[v][k][j].stderr_, b->series[v][k][j].stderr_);
        differs |= a->series[v][k][j].mean != c->series[v][k][j].mean;
      }
    }
  }
  EXPECT_TRUE(differs);
  // BASELINE is re-solved for R(t): one value per bandwidth.
  const auto& baseline = a->series[0][3];
  EXPECT_EQ(baseline.front().mean, a->series[1][3].front().mean);
  EXPECT_EQ(baseline[200].mean, a->series[2][3][200].mean);  // t = 3, R = 150
}

TEST(Fig12Test, ReportShapes) {
  ExperimentOverrides o;
  o.m = {40};
  o.horizon = 4;
  o.policies = {"GREEDY", "GREEDY-NCIS"};
  absl::StatusOr<BandwidthExperiment> e = Fig12Experiment(o);
  ASSERT_TRUE(e.ok());
  RunOptions opts{2, 1, 1};
  absl::StatusOr<BandwidthResult> r = RunBandwidthExperiment(*e, opts);
  ASSERT_TRUE(r.ok());
  const Report report = BandwidthReport(*e, *r, opts);
  EXPECT_EQ(report.table.header.size(), 2u + 2 * 3);
  EXPECT_EQ(report.table.rows.size(), e->times.size() / e->table_every);
  EXPECT_EQ(report.csv.header,
            (std::vector<std::string>{"t", "schedule", "R", "policy", "accuracy", "stderr"}));
  EXPECT_EQ(report.csv.rows.size(), e->times.size() * 2 * 3);
  EXPECT_EQ(report.plot.lines.size(), 6u);
}

TEST(WindowedAccuracyTest, TotalsAgreeWithEvaluate) {
  WorldConfig config;
  config.num_pages = 80;
  config.recall = Distribution::Uniform(0, 1);
  config.false_rate = Distribution::Uniform(0, 0.5);
  config.bandwidth = BandwidthSchedule::Constant(20);
  config.horizon = 50;
  const Instance inst = GenerateInstance(config, 7, 2);
  const Realization world = Realize(config, inst, 7, 2);
  for (const char* name : {"GREEDY", "ROUND-ROBIN"}) {
    auto sched = MakeScheduler(name, inst.pages, 20);
    ASSERT_TRUE(sched.ok());
    const CrawlLog log = RunScheduler(world, config.num_pages, **sched);
    const RunMetrics m = Evaluate(inst, world, log, 7, 2);
    const RequestTimeline timeline = CollectRequests(inst, world, log, 7, 2);
    EXPECT_EQ(static_cast<int64_t>(timeline.times.size()), m.requests) << name;
    EXPECT_EQ(timeline.fresh_before.back(), m.fresh_requests) << name;
    EXPECT_TRUE(std::is_sorted(timeline.times.begin(), timeline.times.end()));
    // A window longer than the run is the whole run.
    const std::vector<double> whole =
        AccuracyOverLastCrawls(timeline, SortedCrawlTimes(log), 1 << 30, {config.horizon});
    EXPECT_DOUBLE_EQ(whole[0], m.accuracy()) << name;
  }
}

TEST(WindowedAccuracyTest, WindowStartsAtTheWthMostRecentCrawl) {
  RequestTimeline requests;
  requests.times = {0.5, 1.5, 2.5, 3.5};
  requests.fresh_before = {0, 1, 1, 2, 3};  // fresh, stale, fresh, fresh
  const std::vector<double> crawls = {1, 2, 3};
  const std::vector<double> a = AccuracyOverLastCrawls(requests, crawls, 2, {0.1, 1.2, 2.2, 3.5});
  EXPECT_TRUE(std::isnan(a[0]));  // no request in (0, 0.1]
  EXPECT_EQ(a[1], 1.0);           // one crawl so far: (0, 1.2]
  EXPECT_EQ(a[2], 0.0);           // (1, 2.2]: the stale request
  EXPECT_EQ(a[3], 1.0);           // (2, 3.5]
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
