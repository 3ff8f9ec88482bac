#include "shard/probe_queue.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "shard/learning.h"

namespace recrawl {
namespace shard {
namespace {

// A state after `changed` crawls that all found a change and `unchanged`
// that did not, each τ = 50 apart.
LearningState After(int changed, int unchanged) {
  LearningState s = InitLearning({1.0, 0.5, 0.5, 0.3});
  for (int i = 0; i < changed; ++i) {
    EXPECT_TRUE(LearnFromCrawl(50.0, 0, true, 0.0, &s));
  }
  for (int i = 0; i < unchanged; ++i) {
    EXPECT_TRUE(LearnFromCrawl(50.0, 0, false, 0.0, &s));
  }
  return s;
}

ProbeQueue AtPickLevel(double pick_level, const LearningOptions& options = {}) {
  ProbeQueue probes(options);
  probes.ObservePick(pick_level);
  return probes;
}

TEST(ProbeQueueTest, ProbesAtTheDelayWhereTheCeilingWouldReachTheLevel) {
  ProbeQueue probes = AtPickLevel(4.0);
  // μ/Δ = 2 < Λ = 4: Algorithm 1 would not crawl it again. Δ* = μ/Λ = 0.25.
  const policy::PageParams ranked{1.0, 0.5, 0.5, 0.3};
  EXPECT_DOUBLE_EQ(probes.AfterCrawl(7, 100.0, 50.0, true, After(1, 0), ranked), 104.0);
  uint32_t page = 0;
  double after = 0.0;
  EXPECT_FALSE(probes.PopDue(103.9, &page, &after));
  ASSERT_TRUE(probes.PopDue(104.0, &page, &after));
  EXPECT_EQ(page, 7u);
  EXPECT_EQ(after, 100.0);
  EXPECT_FALSE(probes.PopDue(200.0, &page, &after));
}

TEST(ProbeQueueTest, NoProbeAfterAChangeSeenWithinTheProbesInterval) {
  ProbeQueue probes = AtPickLevel(4.0);
  const policy::PageParams ranked{1.0, 0.5, 0.5, 0.3};  // τ_p = 4
  EXPECT_LT(probes.AfterCrawl(1, 100.0, 4.0, true, After(1, 0), ranked), 0.0);
  EXPECT_LT(probes.AfterCrawl(2, 100.0, 1.0, true, After(1, 0), ranked), 0.0);
  EXPECT_DOUBLE_EQ(probes.AfterCrawl(3, 100.0, 4.5, true, After(1, 0), ranked), 104.0);
}

TEST(ProbeQueueTest, NoProbeWhereTheCrawlsAlreadySay) {
  ProbeQueue probes = AtPickLevel(4.0);
  const policy::PageParams low{1.0, 0.5, 0.5, 0.3};
  // Unchanged: the outcome itself bounds Δ.
  EXPECT_LT(probes.AfterCrawl(1, 100.0, 50.0, false, After(1, 1), low), 0.0);
  // A changed crawl after an unchanged one.
  EXPECT_LT(probes.AfterCrawl(2, 100.0, 50.0, true, After(1, 1), low), 0.0);
  // More than probe_crawls (5) outcomes.
  EXPECT_GT(probes.AfterCrawl(3, 100.0, 50.0, true, After(5, 0), low), 0.0);
  EXPECT_LT(probes.AfterCrawl(4, 100.0, 50.0, true, After(6, 0), low), 0.0);
  // Its ceiling reaches Λ: the argmax will crawl it.
  const policy::PageParams high{1.0, 0.2, 0.5, 0.3};
  EXPECT_LT(probes.AfterCrawl(5, 100.0, 50.0, true, After(1, 0), high), 0.0);
  // No importance: never worth a crawl.
  EXPECT_LT(probes.AfterCrawl(6, 100.0, 50.0, true, After(1, 0), {0.0, 0.5, 0.5, 0.3}), 0.0);
  EXPECT_EQ(probes.size(), 1u);
}

TEST(ProbeQueueTest, OffWithoutAPickOrWhenDisabled) {
  const policy::PageParams ranked{1.0, 0.5, 0.5, 0.3};
  ProbeQueue unpicked{LearningOptions{}};
  EXPECT_LT(unpicked.AfterCrawl(1, 0.0, 50.0, true, After(1, 0), ranked), 0.0);
  LearningOptions off;
  off.probe_crawls = 0;
  ProbeQueue disabled = AtPickLevel(4.0, off);
  EXPECT_LT(disabled.AfterCrawl(1, 0.0, 50.0, true, After(1, 0), ranked), 0.0);
}

TEST(ProbeQueueTest, PickLevelIsAnAverageOfRecentPicks) {
  ProbeQueue probes{LearningOptions{}};
  probes.ObservePick(2.0);
  EXPECT_EQ(probes.pick_level(), 2.0);
  for (int i = 0; i < 2000; ++i) probes.ObservePick(4.0);
  EXPECT_NEAR(probes.pick_level(), 4.0, 1e-3);
  probes.ObservePick(std::numeric_limits<double>::quiet_NaN());  // ignored
  EXPECT_NEAR(probes.pick_level(), 4.0, 1e-3);
}

TEST(ProbeQueueTest, DueProbesComeInTimeOrder) {
  ProbeQueue probes = AtPickLevel(4.0);
  const policy::PageParams ranked{1.0, 0.5, 0.5, 0.3};
  probes.AfterCrawl(1, 10.0, 50.0, true, After(1, 0), ranked);  // at 14
  probes.AfterCrawl(2, 5.0, 50.0, true, After(1, 0), ranked);   // at 9
  probes.AfterCrawl(3, 12.0, 50.0, true, After(1, 0), ranked);  // at 16
  uint32_t page = 0;
  double after = 0.0;
  std::vector<uint32_t> order;
  while (probes.PopDue(15.0, &page, &after)) order.push_back(page);
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(probes.size(), 1u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
