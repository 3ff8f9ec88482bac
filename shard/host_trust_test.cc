#include "shard/host_trust.h"

#include <cmath>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kDay = 86400.0;

policy::SourceTrustPrior DailyPrior() {
  policy::SourceTrustPrior prior;
  prior.recall = 0.5;
  prior.false_rate = 0.1 / kDay;
  return prior;
}

// Crawls of `pages` pages of `host`, each daily-ish, where CDN purges signal
// 90% of the changes and almost nothing else and the sitemap signals half
// of them plus one false signal a day. With `match`, a change both signal
// is one joint event (as the shard matches signals of one instant); without,
// each signal counts as its source's own. Returns how many intervals came
// from the first that had a second source signalling on (the ones the host
// learns from when it starts learning here).
int64_t LearnHost(HostTrustTable* table, HostId host, int pages, int crawls, uint64_t seed,
                  bool match = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double cdn_recall = 0.9, cdn_false = 0.02 / kDay;
  const double sitemap_recall = 0.5, sitemap_false = 1.0 / kDay;
  const int cdn = TrustSourceIndex(SIGNAL_SOURCE_CDN);
  const int sitemap = TrustSourceIndex(SIGNAL_SOURCE_SITEMAP);
  uint32_t signalled = 0;
  int64_t learnt = 0;
  for (int i = 0; i < pages; ++i) {
    const double delta = (0.2 + 1.8 * u(rng)) / kDay;
    for (int c = 0; c < crawls; ++c) {
      const double tau = (0.3 + 2.0 * u(rng)) * kDay;
      IntervalSignals signals;
      SourceCounts& counts = signals.single;
      const int changes = std::poisson_distribution<int>(delta * tau)(rng);
      for (int k = 0; k < changes; ++k) {
        const bool by_cdn = u(rng) < cdn_recall;
        const bool by_sitemap = u(rng) < sitemap_recall;
        if (match && by_cdn && by_sitemap) {
          ++signals.joint;
        } else {
          counts[cdn] += by_cdn;
          counts[sitemap] += by_sitemap;
        }
      }
      counts[cdn] += std::poisson_distribution<int>(cdn_false * tau)(rng);
      counts[sitemap] += std::poisson_distribution<int>(sitemap_false * tau)(rng);
      EXPECT_TRUE(table->Learn(host, delta, tau, signals, changes > 0).ok());
      for (int s = 0; s < kTrustSources; ++s) {
        if (counts[s] > 0) signalled |= 1u << s;
      }
      if (signals.joint > 0) signalled |= (1u << cdn) | (1u << sitemap);
      if (__builtin_popcount(signalled) >= 2) ++learnt;
    }
  }
  return learnt;
}

TEST(HostTrustTest, SourcesHaveFixedPlaces) {
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_SITEMAP), 0);
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_CDN), 1);
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_INDEXNOW), 2);
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_WEBSUB), 3);
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_OTHER), 4);
  EXPECT_EQ(TrustSourceIndex(SIGNAL_SOURCE_UNSPECIFIED), 4);
  for (int i = 0; i < kTrustSources; ++i) EXPECT_EQ(TrustSourceIndex(TrustSourceAt(i)), i);
}

TEST(HostTrustTest, TellsAnAccurateSourceFromANoisyOne) {
  HostTrustTable table(DailyPrior());
  const int64_t learnt = LearnHost(&table, 7, 100, 30, 1);
  EXPECT_FALSE(table.Has(8));
  EXPECT_FALSE(table.Estimate(8).has_value());
  const std::optional<policy::SourceTrustEstimate> e = table.Estimate(7);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->num_crawls, learnt);
  EXPECT_GT(learnt, 2990);
  EXPECT_TRUE(e->converged) << e->iterations;
  // The shard does not match one change's signals from two sources, so a
  // sitemap signal that comes with a CDN purge (45% of changes) counts as
  // the sitemap's alone: the fit credits the CDN with the changes and the
  // sitemap's extra signals go to its false rate, ν + λ_sitemap·λ_cdn·Δ̄ +
  // its signals alone ≈ 1 + 0.55 per day (Δ̄ = 1.1 per day), with its recall
  // near 0 — the bias (M4) describes.
  const policy::SourceParams cdn = e->sources[TrustSourceIndex(SIGNAL_SOURCE_CDN)];
  const policy::SourceParams sitemap = e->sources[TrustSourceIndex(SIGNAL_SOURCE_SITEMAP)];
  std::printf("cdn λ %.3f ν %.3f/day; sitemap λ %.3f ν %.3f/day (%d iterations)\n", cdn.recall,
              cdn.false_rate * kDay, sitemap.recall, sitemap.false_rate * kDay, e->iterations);
  EXPECT_GT(cdn.recall, sitemap.recall);
  EXPECT_NEAR(cdn.recall, 0.9, 0.05);
  EXPECT_NEAR(cdn.false_rate * kDay, 0.02, 0.015);
  EXPECT_NEAR(sitemap.false_rate * kDay, 1.55, 0.2);
  // Silent sources are fitted towards "never signals".
  EXPECT_LT(e->sources[TrustSourceIndex(SIGNAL_SOURCE_WEBSUB)].recall, 0.1);
}

// With one change's signals from both sources matched (joint events), the
// sitemap is learnt as what it is: half the changes and a false signal a
// day, instead of recall 0 (the test above).
TEST(HostTrustTest, JointEventsLearnEachSourcesOwnRecall) {
  HostTrustTable table(DailyPrior());
  const int64_t learnt = LearnHost(&table, 7, 100, 30, 1, /*match=*/true);
  const std::optional<policy::SourceTrustEstimate> e = table.Estimate(7);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->num_crawls, learnt);
  EXPECT_TRUE(e->converged) << e->iterations;
  const policy::SourceParams cdn = e->sources[TrustSourceIndex(SIGNAL_SOURCE_CDN)];
  const policy::SourceParams sitemap = e->sources[TrustSourceIndex(SIGNAL_SOURCE_SITEMAP)];
  std::printf("cdn λ %.3f ν %.3f/day; sitemap λ %.3f ν %.3f/day (%d iterations)\n", cdn.recall,
              cdn.false_rate * kDay, sitemap.recall, sitemap.false_rate * kDay, e->iterations);
  EXPECT_NEAR(cdn.recall, 0.9, 0.05);
  EXPECT_NEAR(cdn.false_rate * kDay, 0.02, 0.015);
  EXPECT_NEAR(sitemap.recall, 0.5, 0.08);
  EXPECT_NEAR(sitemap.false_rate * kDay, 1.0, 0.15);
  // A joint event proves a change: an unchanged interval with one is refused.
  IntervalSignals joint;
  joint.joint = 1;
  EXPECT_FALSE(table.Learn(7, 1.0 / kDay, kDay, joint, false).ok());
  // A joint event is two sources: a host learns from its first one.
  ASSERT_TRUE(table.Learn(9, 1.0 / kDay, kDay, joint, true).ok());
  EXPECT_TRUE(table.Has(9));
}

// Until a second source signals, a host keeps no estimator: nothing to
// choose between. The interval that brings the second one on is learnt.
TEST(HostTrustTest, LearnsOnceTwoSourcesHaveSignalled) {
  HostTrustTable table(DailyPrior());
  IntervalSignals cdn;
  cdn.single[TrustSourceIndex(SIGNAL_SOURCE_CDN)] = 2;
  IntervalSignals sitemap;
  sitemap.single[TrustSourceIndex(SIGNAL_SOURCE_SITEMAP)] = 1;
  const size_t empty = table.MemoryBytes();
  for (int n = 0; n < 100; ++n) {
    ASSERT_TRUE(table.Learn(4, 1.0 / kDay, kDay, cdn, true).ok());
    ASSERT_TRUE(table.Learn(4, 1.0 / kDay, kDay, IntervalSignals{}, n % 2 == 0).ok());
  }
  EXPECT_FALSE(table.Has(4));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_LE(table.MemoryBytes(), empty + 64);  // a byte a host id
  EXPECT_FALSE(table.ShouldPersist(4));
  ASSERT_TRUE(table.Learn(4, 1.0 / kDay, kDay, sitemap, false).ok());
  ASSERT_TRUE(table.Has(4));
  EXPECT_EQ(table.Estimate(4)->num_crawls, 1);
  EXPECT_TRUE(table.ShouldPersist(4));
  ASSERT_TRUE(table.Learn(4, 1.0 / kDay, kDay, cdn, true).ok());
  EXPECT_EQ(table.Estimate(4)->num_crawls, 2);
  // Bad input is refused whether or not the host learns yet.
  EXPECT_FALSE(table.Learn(5, 1.0 / kDay, -kDay, cdn, true).ok());
  EXPECT_FALSE(table.Learn(4, 1.0 / kDay, -kDay, cdn, true).ok());
  EXPECT_EQ(table.Estimate(4)->num_crawls, 2);
}

TEST(HostTrustTest, PersistsAtDoublingThenEvery256) {
  HostTrustTable table(DailyPrior());
  IntervalSignals two;
  two.single[TrustSourceIndex(SIGNAL_SOURCE_SITEMAP)] = 1;
  two.single[TrustSourceIndex(SIGNAL_SOURCE_CDN)] = 1;
  std::vector<int> persisted;
  for (int n = 1; n <= 1000; ++n) {
    ASSERT_TRUE(table.Learn(3, 1.0 / kDay, kDay, two, false).ok());
    if (table.ShouldPersist(3)) {
      persisted.push_back(n);
      table.MarkWritten(3);
    }
  }
  EXPECT_EQ(persisted, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768}));
  EXPECT_EQ(table.TakeUnwritten(), std::vector<HostId>{3});
  EXPECT_TRUE(table.TakeUnwritten().empty());
}

TEST(HostTrustTest, ARestoredHostGoesOnAsTheOriginal) {
  HostTrustTable original(DailyPrior());
  LearnHost(&original, 1, 20, 10, 2);
  SourceTrustRecord record;
  ASSERT_TRUE(original.ToRecord(1, &record));
  SourceTrustRecord none;
  EXPECT_FALSE(original.ToRecord(2, &none));  // a host that has not learnt
  HostTrustTable restored(DailyPrior());
  ASSERT_TRUE(restored.Restore(5, record).ok());
  EXPECT_FALSE(restored.ShouldPersist(5));  // as stored
  LearnHost(&original, 1, 20, 10, 3);
  LearnHost(&restored, 5, 20, 10, 3);
  const policy::SourceTrustEstimate a = *original.Estimate(1), b = *restored.Estimate(5);
  EXPECT_EQ(a.num_crawls, b.num_crawls);
  EXPECT_EQ(a.log_likelihood, b.log_likelihood);
  for (int s = 0; s < kTrustSources; ++s) {
    EXPECT_EQ(a.sources[s].recall, b.sources[s].recall);
    EXPECT_EQ(a.sources[s].false_rate, b.sources[s].false_rate);
  }
}

TEST(HostTrustTest, RejectsBadInputNamingTheField) {
  HostTrustTable table(DailyPrior());
  absl::Status s = table.Learn(1, -1.0, kDay, IntervalSignals{}, false);
  EXPECT_NE(std::string(s.message()).find("change_rate"), std::string::npos);
  EXPECT_FALSE(table.Has(1));  // nothing learnt, nothing kept
  LearnHost(&table, 1, 2, 5, 4);
  SourceTrustRecord record;
  ASSERT_TRUE(table.ToRecord(1, &record));
  SourceTrustRecord bad = record;
  bad.add_changed_counts(1);
  s = table.Restore(2, bad);
  EXPECT_NE(std::string(s.message()).find("trust.changed_"), std::string::npos);
  bad = record;
  bad.set_changed(bad.crawls() + 1);
  s = table.Restore(2, bad);
  EXPECT_NE(std::string(s.message()).find("num_changed"), std::string::npos);
  EXPECT_FALSE(table.Has(2));
}

TEST(HostTrustTest, RanksByTheSourcesWorthListeningTo) {
  HostTrustTable table(DailyPrior());
  const int sitemap = TrustSourceIndex(SIGNAL_SOURCE_SITEMAP);
  const int cdn = TrustSourceIndex(SIGNAL_SOURCE_CDN);
  LearnHost(&table, 7, 100, 30, 1);
  // Before a choice every source counts.
  EXPECT_TRUE(table.Trusted(7, sitemap));
  EXPECT_FALSE(table.TrustedModel(7));
  EXPECT_TRUE(table.Refit(7, 0.5));
  EXPECT_TRUE(table.Trusted(7, cdn));
  EXPECT_FALSE(table.Trusted(7, sitemap));
  EXPECT_TRUE(table.Trusted(8, sitemap));  // another host
  double recall = 0, false_rate = 0;
  ASSERT_TRUE(table.TrustedModel(7, &recall, &false_rate));
  const policy::SourceTrustEstimate e = *table.Estimate(7);
  EXPECT_DOUBLE_EQ(recall, e.sources[cdn].recall);
  EXPECT_DOUBLE_EQ(false_rate, e.sources[cdn].false_rate);
  EXPECT_FALSE(table.Refit(7, 0.5));  // nothing new

  // The choice is part of the host's record.
  SourceTrustRecord record;
  ASSERT_TRUE(table.ToRecord(7, &record));
  HostTrustTable restored(DailyPrior());
  ASSERT_TRUE(restored.Restore(3, record).ok());
  EXPECT_FALSE(restored.Trusted(3, sitemap));
  double r2 = 0, f2 = 0;
  ASSERT_TRUE(restored.TrustedModel(3, &r2, &f2));
  EXPECT_EQ(r2, recall);
  EXPECT_EQ(f2, false_rate);

  // A share of 0 trusts every source.
  EXPECT_TRUE(table.Refit(7, 0.0));
  EXPECT_TRUE(table.Trusted(7, sitemap));
  EXPECT_FALSE(table.TrustedModel(7));
}

TEST(HostTrustTest, RefitsAtDoublingIntervalsOfHostsWithTwoSources) {
  HostTrustTable table(DailyPrior());
  IntervalSignals two;
  two.single[TrustSourceIndex(SIGNAL_SOURCE_SITEMAP)] = 1;
  two.single[TrustSourceIndex(SIGNAL_SOURCE_CDN)] = 1;
  IntervalSignals one;
  one.single[TrustSourceIndex(SIGNAL_SOURCE_CDN)] = 1;
  std::vector<int> refits;
  for (int n = 1; n <= 300; ++n) {
    ASSERT_TRUE(table.Learn(1, 1.0 / kDay, kDay, two, true).ok());
    ASSERT_TRUE(table.Learn(2, 1.0 / kDay, kDay, one, true).ok());
    if (table.ShouldRefit(1)) refits.push_back(n);
    EXPECT_FALSE(table.ShouldRefit(2)) << n;  // one source: nothing to choose
  }
  EXPECT_EQ(refits, (std::vector<int>{64, 128, 256}));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
