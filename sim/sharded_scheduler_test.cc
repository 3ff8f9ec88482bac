#include "sim/sharded_scheduler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/crawl_policy.h"

namespace recrawl {
namespace sim {
namespace {

// Fig. 6 pages (μ, Δ ~ U[0,1], λ ~ U[0,1], ν ~ U(0.1, 0.6)), importance
// normalised; pages with i % 4 == 0 are requested `hot` times as often.
std::vector<policy::PageParams> Pages(int m, uint64_t seed, double hot = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<policy::PageParams> pages(m);
  double total = 0.0;
  for (int i = 0; i < m; ++i) {
    pages[i].importance = u(rng) * (i % 4 == 0 ? hot : 1.0);
    pages[i].change_rate = u(rng);
    pages[i].recall = u(rng);
    pages[i].false_rate = 0.1 + 0.5 * u(rng);
    total += pages[i].importance;
  }
  for (auto& p : pages) p.importance /= total;
  return pages;
}

std::vector<int> RoundRobinShards(int m, int n) {
  std::vector<int> shard_of(m);
  for (int i = 0; i < m; ++i) shard_of[i] = i % n;
  return shard_of;
}

std::unique_ptr<ShardedScheduler> Sharded(const std::vector<policy::PageParams>& pages,
                                          coordinator::Mode mode, double bandwidth) {
  ShardedOptions options;
  options.mode = mode;
  auto s = ShardedScheduler::Create(pages, RoundRobinShards(pages.size(), 4),
                                    policy::CrawlPolicy::GreedyNcis(), bandwidth, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

// Signals at random, every page crawled at its pick.
void Drive(Scheduler& scheduler, int m, int slots, double bandwidth, uint64_t seed,
           const std::function<void(int, double, int)>& on_pick) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> page(0, m - 1);
  for (int j = 1; j <= slots; ++j) {
    const double t = j / bandwidth;
    if (j % 3 == 0) scheduler.OnSignal(page(rng), t);
    const int picked = scheduler.Next(t);
    on_pick(j, t, picked);
    if (picked != Scheduler::kIdle) scheduler.OnCrawl(picked, t, true);
  }
}

TEST(ShardedSchedulerTest, MergeMakesTheUnshardedPicks) {
  const int m = 400;
  const double bandwidth = 40.0;
  const std::vector<policy::PageParams> pages = Pages(m, 3);
  auto single = ValueScheduler::Create(
      pages, std::vector<policy::CrawlPolicy>(m, policy::CrawlPolicy::GreedyNcis()), {});
  ASSERT_TRUE(single.ok());
  auto merged = Sharded(pages, coordinator::Mode::kMerge, bandwidth);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> page(0, m - 1);
  for (int j = 1; j <= 4000; ++j) {
    const double t = j / bandwidth;
    if (j % 3 == 0) {
      const int p = page(rng);
      (*single)->OnSignal(p, t);
      merged->OnSignal(p, t);
    }
    const int expected = (*single)->Next(t);
    ASSERT_EQ(merged->Next(t), expected) << "slot " << j;
    (*single)->OnCrawl(expected, t, true);
    merged->OnCrawl(expected, t, true);
  }
}

TEST(ShardedSchedulerTest, EqualGivesEachShardROverNEvenlySpaced) {
  const int m = 400;
  const double bandwidth = 40.0;
  const std::vector<policy::PageParams> pages = Pages(m, 4);
  auto equal = Sharded(pages, coordinator::Mode::kSplitEqual, bandwidth);
  std::vector<int> last_slot(4, 0);
  std::vector<int> count(4, 0);
  Drive(*equal, m, 4000, bandwidth, 6, [&](int j, double, int picked) {
    ASSERT_NE(picked, Scheduler::kIdle);
    const int s = picked % 4;
    if (last_slot[s] > 0) {
      EXPECT_EQ(j - last_slot[s], 4) << "slot " << j;
    }
    last_slot[s] = j;
    ++count[s];
  });
  for (int c : count) EXPECT_EQ(c, 1000);
}

// With one shard of much-requested pages, equal budgets leave that shard
// picking at a higher crawl value than the others; adaptive moves budget to
// it until the levels agree (the optimum has one level, Lemma 1).
TEST(ShardedSchedulerTest, AdaptiveMovesBudgetToTheHotShardAndEqualisesLevels) {
  const int m = 800;
  const double bandwidth = 80.0;
  const std::vector<policy::PageParams> pages = Pages(m, 7, /*hot=*/8.0);
  auto spread = [](const std::vector<double>& levels) {
    return *std::max_element(levels.begin(), levels.end()) /
           *std::min_element(levels.begin(), levels.end());
  };
  auto equal = Sharded(pages, coordinator::Mode::kSplitEqual, bandwidth);
  auto adaptive = Sharded(pages, coordinator::Mode::kSplitAdaptive, bandwidth);
  Drive(*equal, m, 40000, bandwidth, 8, [](int, double, int) {});
  Drive(*adaptive, m, 40000, bandwidth, 8, [](int, double, int) {});
  const std::vector<double>& fair = equal->levels();
  EXPECT_GT(fair[0], 2.0 * std::max({fair[1], fair[2], fair[3]}));
  EXPECT_GT(adaptive->budgets()[0], 1.5 * bandwidth / 4);
  EXPECT_LT(spread(adaptive->levels()), 1.25) << "equal: " << spread(fair);
  double total = 0.0;
  for (double b : adaptive->budgets()) total += b;
  EXPECT_NEAR(total, bandwidth, 1e-9);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
