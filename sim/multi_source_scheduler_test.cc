#include "sim/multi_source_scheduler.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "policy/estimators.h"
#include "policy/multi_source_model.h"
#include "shard/learning.h"
#include "sim/multi_source_world.h"
#include "sim/scheduler.h"

namespace recrawl {
namespace sim {
namespace {

MultiSourceWorldConfig SmallWorld(int m) {
  MultiSourceWorldConfig config;
  config.num_pages = m;
  config.pages_per_host = 5;
  config.bandwidth = 10.0;
  config.horizon = 60.0;
  return config;
}

// Hosts share their sources' parameters up to the configured noise.
TEST(MultiSourceWorldTest, PagesOfAHostShareParametersUpToNoise) {
  const MultiSourceWorldConfig config = SmallWorld(200);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 3, 0);
  ASSERT_EQ(instance.pages.size(), 200u);
  ASSERT_EQ(instance.merged.pages.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    const int first = i - i % 5;
    for (int s = 0; s < 2; ++s) {
      const auto& a = instance.pages[i].sources[s];
      const auto& b = instance.pages[first].sources[s];
      EXPECT_LE(std::fabs(a.recall - b.recall), 2 * config.sources[s].recall_noise + 1e-12);
      EXPECT_LE(std::fabs(std::log(a.false_rate / b.false_rate)),
                2 * config.sources[s].false_noise + 1e-12);
      EXPECT_GE(a.recall, 0.0);
      EXPECT_LE(a.recall, 1.0);
    }
  }
  // The same seed and instance give the same pages.
  const MultiSourceInstance again = GenerateMultiSourceInstance(config, 3, 0);
  EXPECT_EQ(again.pages[17].sources[1].false_rate, instance.pages[17].sources[1].false_rate);
}

// Signalling instants by kind (source 0 alone, source 1 alone, both) arrive
// at the rates of (M1).
TEST(MultiSourceWorldTest, SignalRatesMatchTheModel) {
  MultiSourceWorldConfig config = SmallWorld(400);
  config.horizon = 500.0;
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 5, 1);
  const MultiSourceRealization r = RealizeMultiSource(config, instance, 5, 1);
  ASSERT_EQ(r.signal_sources.size(), r.world.signal_time.size());
  double want[3] = {0, 0, 0}, got[3] = {0, 0, 0};
  const double span = r.world.slot_times.back();
  for (const auto& page : instance.pages) {
    const policy::MultiSourceModel model = *policy::MultiSourceModel::Create(page);
    want[0] += model.signal_rate(0) * span;
    want[1] += model.signal_rate(1) * span;
    want[2] += model.joint_rate() * span;
  }
  for (uint32_t sources : r.signal_sources) ++got[sources == 1 ? 0 : sources == 2 ? 1 : 2];
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(got[k], want[k], 5 * std::sqrt(want[k])) << "kind " << k;
  }
  // Buckets hold the signals between consecutive slots.
  for (size_t j = 0; j < r.world.slot_times.size(); ++j) {
    for (int64_t k = r.world.signal_begin[j]; k < r.world.signal_begin[j + 1]; ++k) {
      EXPECT_LE(r.world.signal_time[k], r.world.slot_times[j]);
      if (j > 0) {
        EXPECT_GT(r.world.signal_time[k], r.world.slot_times[j - 1]);
      }
    }
  }
}

// The lazy argmax returns a page of maximal exact value at every slot, for
// every view.
TEST(MultiSourceSchedulerTest, LazyArgmaxIsExact) {
  const MultiSourceWorldConfig config = SmallWorld(40);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 7, 0);
  const MultiSourceRealization r = RealizeMultiSource(config, instance, 7, 0);
  for (const MultiSourcePolicy& policy : MultiSourcePolicies()) {
    auto scheduler =
        *MultiSourceScheduler::Create(instance.pages, policy.view, config.pages_per_host);
    std::vector<int64_t> next_change(r.world.change_begin.begin(), r.world.change_begin.end() - 1);
    std::vector<int64_t> at_crawl = next_change;
    int checked = 0;
    for (size_t j = 0; j < r.world.slot_times.size(); ++j) {
      const double t = r.world.slot_times[j];
      for (int64_t k = r.world.signal_begin[j]; k < r.world.signal_begin[j + 1]; ++k) {
        scheduler->OnSignal(r.world.signal_page[k], r.world.signal_time[k], r.signal_sources[k]);
      }
      const int page = scheduler->Next(t);
      ASSERT_NE(page, Scheduler::kIdle);
      const double best = scheduler->Value(page, t);
      for (int i = 0; i < 40; ++i) {
        ASSERT_LE(scheduler->Value(i, t), best * (1 + 1e-9)) << policy.name << " slot " << j;
      }
      int64_t& next = next_change[page];
      while (next < r.world.change_begin[page + 1] && r.world.change_times[next] <= t) ++next;
      scheduler->OnCrawl(page, t, next != at_crawl[page]);
      at_crawl[page] = next;
      ++checked;
    }
    EXPECT_EQ(checked, 600) << policy.name;
    // Lazy: far fewer evaluations than pages × slots.
    EXPECT_LT(scheduler->evaluations(), 40 * 600 / 2) << policy.name;
  }
}

// Runs `a` and `b` side by side on r, crawling a's choice with both, and
// checks at every slot that both choose the same page and value every page
// the same.
void ExpectSameRanking(const MultiSourceRealization& r, int num_pages, MultiSourceScheduler& a,
                       MultiSourceScheduler& b) {
  std::vector<int64_t> next_change(r.world.change_begin.begin(), r.world.change_begin.end() - 1);
  std::vector<int64_t> at_crawl = next_change;
  for (size_t j = 0; j < r.world.slot_times.size(); ++j) {
    const double t = r.world.slot_times[j];
    for (int64_t k = r.world.signal_begin[j]; k < r.world.signal_begin[j + 1]; ++k) {
      a.OnSignal(r.world.signal_page[k], r.world.signal_time[k], r.signal_sources[k]);
      b.OnSignal(r.world.signal_page[k], r.world.signal_time[k], r.signal_sources[k]);
    }
    const int page = a.Next(t);
    ASSERT_EQ(b.Next(t), page) << "slot " << j;
    ASSERT_NE(page, Scheduler::kIdle);
    for (int i = 0; i < num_pages; ++i) {
      ASSERT_DOUBLE_EQ(a.Value(i, t), b.Value(i, t)) << "slot " << j << " page " << i;
    }
    int64_t& next = next_change[page];
    while (next < r.world.change_begin[page + 1] && r.world.change_times[next] <= t) ++next;
    a.OnCrawl(page, t, next != at_crawl[page]);
    b.OnCrawl(page, t, next != at_crawl[page]);
    at_crawl[page] = next;
  }
}

// A sitemap that is pure noise (λ = 0) is never trusted, so the trusted view
// is the CDN source alone.
TEST(MultiSourceSchedulerTest, TrustedIgnoresAPureNoiseSource) {
  MultiSourceWorldConfig config = SmallWorld(40);
  config.sources = {kCdnSource, kCmsNoiseSource};
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 11, 0);
  for (const auto& page : instance.pages) ASSERT_EQ(page.sources[1].recall, 0.0);
  const MultiSourceRealization r = RealizeMultiSource(config, instance, 11, 0);
  auto trusted = *MultiSourceScheduler::Create(instance.pages, SignalView::kTrusted, 5);
  auto cdn_only = *MultiSourceScheduler::Create(instance.pages, SignalView::kFirstSourceOnly, 5);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(trusted->counted_sources(i), 1u) << i;
  ExpectSameRanking(r, 40, *trusted, *cdn_only);
}

// Two sources of alike weight are both trusted: the trusted view is the
// merged one.
TEST(MultiSourceSchedulerTest, TrustedMergesAlikeSources) {
  MultiSourceWorldConfig config = SmallWorld(40);
  const SourceDistribution alike = {0.5, 0.7, 0.1, 0.2, 0.0, 0.0};
  config.sources = {alike, alike};
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 13, 0);
  const MultiSourceRealization r = RealizeMultiSource(config, instance, 13, 0);
  auto trusted = *MultiSourceScheduler::Create(instance.pages, SignalView::kTrusted, 5);
  auto merged = *MultiSourceScheduler::Create(instance.pages, SignalView::kMerged, 5);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(trusted->counted_sources(i), 3u) << i;
  ExpectSameRanking(r, 40, *trusted, *merged);
}

// The learned view starts from equal priors (both sources trusted) and, once
// its hosts have been crawled enough, stops listening to a pure-noise source.
TEST(MultiSourceSchedulerTest, TrustedLearnedDropsAPureNoiseSource) {
  MultiSourceWorldConfig config = SmallWorld(20);
  config.sources = {kCdnSource, kCmsNoiseSource};
  config.horizon = 300.0;
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 17, 0);
  const MultiSourceRealization r = RealizeMultiSource(config, instance, 17, 0);
  auto learned = *MultiSourceScheduler::Create(instance.pages, SignalView::kTrustedLearned, 5);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(learned->counted_sources(i), 3u) << i;
  std::vector<int64_t> next_change(r.world.change_begin.begin(), r.world.change_begin.end() - 1);
  std::vector<int64_t> at_crawl = next_change;
  for (size_t j = 0; j < r.world.slot_times.size(); ++j) {
    const double t = r.world.slot_times[j];
    for (int64_t k = r.world.signal_begin[j]; k < r.world.signal_begin[j + 1]; ++k) {
      learned->OnSignal(r.world.signal_page[k], r.world.signal_time[k], r.signal_sources[k]);
    }
    const int page = learned->Next(t);
    ASSERT_NE(page, Scheduler::kIdle);
    int64_t& next = next_change[page];
    while (next < r.world.change_begin[page + 1] && r.world.change_times[next] <= t) ++next;
    learned->OnCrawl(page, t, next != at_crawl[page]);
    at_crawl[page] = next;
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(learned->counted_sources(i), 1u) << i;
}

// The view that also learns Δ_i starts each page at ChangeRateEstimator's
// no-data value and follows that estimator over the page's own outcomes,
// whatever the signals; the value's ceiling μ/Δ follows the estimate.
TEST(MultiSourceSchedulerTest, LearnedChangeRatesFollowThePagesOwnOutcomes) {
  MultiSourceWorldConfig config = SmallWorld(4);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 5, 0);
  auto learner =
      *MultiSourceScheduler::Create(instance.pages, SignalView::kPerSourceLearnedChangeRates, 2);
  policy::ChangeRateEstimator expected;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(learner->belief(i).change_rate(), expected.Estimate()) << i;
    EXPECT_EQ(learner->belief(i).importance(), instance.pages[i].importance) << i;
  }
  const double intervals[] = {0.5, 2.0, 1.0, 3.0, 0.25, 4.0};
  double t = 0.0;
  for (int k = 0; k < 6; ++k) {
    learner->OnSignal(1, t + intervals[k] / 2, 1u);  // signals do not enter Δ's estimate
    t += intervals[k];
    const bool changed = k % 3 != 2;
    learner->OnCrawl(1, t, changed);
    ASSERT_TRUE(expected.Add(intervals[k], changed).ok());
    EXPECT_DOUBLE_EQ(learner->belief(1).change_rate(), expected.Estimate()) << k;
  }
  // Page 0, of the same host, has its own estimate still.
  EXPECT_EQ(learner->belief(0).change_rate(), policy::ChangeRateEstimator().Estimate());
  // The value stays under its ceiling μ/Δ̂.
  EXPECT_LE(learner->Value(1, t + 1e6),
            instance.pages[1].importance / expected.Estimate() * 1.000001);
}

// The view that takes Δ_i from the shard's per-page fit counts each
// signalling instant once (a joint event too) and follows shard::Fit.
TEST(MultiSourceSchedulerTest, JointFitChangeRatesFollowTheShardsFit) {
  MultiSourceWorldConfig config = SmallWorld(4);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 5, 0);
  auto learner =
      *MultiSourceScheduler::Create(instance.pages, SignalView::kPerSourceLearnedJointFit, 2);
  EXPECT_EQ(learner->belief(2).change_rate(), 0.5);
  shard::LearningState expected = shard::InitLearning(JointFitPrior());
  const double intervals[] = {0.5, 2.0, 1.0, 3.0};
  const uint32_t signalled[] = {0u, 1u, 3u, 2u};  // none, CDN, both at once, sitemap
  double t = 0.0;
  for (int k = 0; k < 4; ++k) {
    if (signalled[k] != 0) learner->OnSignal(2, t + intervals[k] / 2, signalled[k]);
    t += intervals[k];
    const bool changed = k != 3;
    learner->OnCrawl(2, t, changed);
    ASSERT_TRUE(
        shard::LearnFromCrawl(intervals[k], signalled[k] != 0 ? 1 : 0, changed, 0.0, &expected));
    const shard::LearnedModel fit =
        shard::Fit(expected, instance.pages[2].importance, shard::LearningOptions());
    ASSERT_TRUE(fit.ok);
    EXPECT_DOUBLE_EQ(learner->belief(2).change_rate(), fit.estimate.change_rate) << k;
  }
}

// The view that fits Δ_i with its host's trust gives the estimator each
// interval's per-source counts (a joint event as one) and the host's
// sources as the page believes them.
TEST(MultiSourceSchedulerTest, SourceFitChangeRatesFollowTheEstimator) {
  MultiSourceWorldConfig config = SmallWorld(4);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 5, 0);
  auto learner =
      *MultiSourceScheduler::Create(instance.pages, SignalView::kPerSourceLearnedSourceFit, 2);
  EXPECT_EQ(learner->belief(2).change_rate(), JointFitPrior().change_rate);
  policy::SourceChangeRateEstimator expected(2, {JointFitPrior().change_rate, 1.0});
  const double intervals[] = {0.5, 2.0, 1.0, 3.0};
  const uint32_t signalled[] = {0u, 1u, 3u, 2u};  // none, CDN, both at once, sitemap
  double t = 0.0;
  for (int k = 0; k < 4; ++k) {
    if (signalled[k] != 0) learner->OnSignal(2, t + intervals[k] / 2, signalled[k]);
    const std::vector<policy::SourceParams> sources = learner->belief(2).params().sources;
    t += intervals[k];
    const bool changed = k != 3;
    learner->OnCrawl(2, t, changed);
    policy::SourceSignals signals{{0, 0}, 0};
    if (signalled[k] == 3u) {
      signals.joint = 1;
    } else if (signalled[k] != 0) {
      signals.counts[signalled[k] - 1] = 1;
    }
    ASSERT_TRUE(expected.Add(intervals[k], signals, changed).ok());
    EXPECT_NEAR(learner->belief(2).change_rate(), expected.Estimate(sources), 1e-8) << k;
  }
  // Page 3, of the same host, has its own estimate still.
  EXPECT_EQ(learner->belief(3).change_rate(), JointFitPrior().change_rate);
}

// The trusted views that fit Δ_i as the shard does count every signalling
// instant (-FIT) or only the trusted sources' (-RANKED-FIT) once the host's
// refit has dropped a source.
TEST(MultiSourceSchedulerTest, TrustedFitsCountAllOrTheTrustedSignals) {
  MultiSourceWorldConfig config = SmallWorld(2);
  const MultiSourceInstance instance = GenerateMultiSourceInstance(config, 5, 0);
  for (SignalView view :
       {SignalView::kTrustedLearnedJointFit, SignalView::kTrustedLearnedRankedFit}) {
    auto learner = *MultiSourceScheduler::Create(instance.pages, view, 1);
    EXPECT_EQ(learner->belief(0).change_rate(), JointFitPrior().change_rate);
    EXPECT_EQ(learner->counted_sources(0), 3u);
    shard::LearningState expected = shard::InitLearning(JointFitPrior());
    double t = 0.0;
    auto crawl = [&](std::vector<std::pair<double, uint32_t>> signals, bool changed,
                     int64_t expected_n) {
      for (const auto& [at, sources] : signals) learner->OnSignal(0, t + at, sources);
      t += 1.0;
      learner->OnCrawl(0, t, changed);
      ASSERT_TRUE(shard::LearnFromCrawl(1.0, expected_n, changed, 0.0, &expected));
    };
    // The CDN's signals come with changes; the sitemap's never do.
    for (int k = 0; k < 10; ++k) {
      if (k % 2 == 0) {
        crawl({{0.5, 1u}}, true, 1);
      } else {
        crawl({{0.2, 2u}, {0.4, 2u}}, false, 2);
      }
    }
    ASSERT_EQ(learner->counted_sources(0), 1u) << "the refit after 10 crawls trusts the CDN alone";
    const int64_t counted = view == SignalView::kTrustedLearnedRankedFit ? 1 : 3;
    crawl({{0.2, 2u}, {0.4, 1u}, {0.6, 2u}}, true, counted);
    const shard::LearnedModel fit =
        shard::Fit(expected, instance.pages[0].importance, shard::LearningOptions());
    ASSERT_TRUE(fit.ok);
    EXPECT_DOUBLE_EQ(learner->belief(0).change_rate(), fit.estimate.change_rate);
  }
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
