// The scheduling index's work at the sizes shards hold, counted rather than
// timed: loading pages, signals and picks move each due-queue entry a
// bounded number of times, whether or not the caller sized the tables.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/index/brute_force_index.h"
#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {
namespace {

// Growth copies each entry at most kGrowthDivisor (8) times in all and a
// compaction moves at most 16 entries for each stale one made (due_queue.h,
// SchedulingIndex::PushQueued); the bound leaves room for the slack chunks.
constexpr uint64_t kMovesPerPush = 32;

uint64_t MaintenanceMoves(const SchedulingIndex& index) {
  return index.queue_work().rewrite_moves + index.queue_work().growth_copies;
}

policy::PageParams RandomPage(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  policy::PageParams p;
  p.importance = 0.01 + u(rng);
  p.change_rate = 1e-5 * (0.1 + u(rng));
  p.recall = u(rng);
  p.false_rate = 1e-6 * u(rng);
  return p;
}

// A bulk load with no Reserve into an index already picked from (before
// the first pick a load only marks pages queued: the first pick's rebuild
// keys them all): the queue grows by itself. Checked as it goes, so that a
// quadratic path fails at the first step that shows it.
TEST(SchedulingIndexWorkTest, LoadWithoutReserveMovesEachEntryBoundedTimes) {
  constexpr uint32_t kPages = 1000000;
  constexpr uint32_t kFirst = 10000;  // loaded before the first pick
  constexpr uint32_t kHosts = 100000;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  const double now = 1e6;
  for (PageId id = 0; id < kPages; ++id) {
    index.Upsert(id, RandomPage(rng), id % kHosts, now - 86400 * u(rng));
    if (id + 1 == kFirst) {
      ASSERT_EQ(index.PickTop(now, 1).size(), 1u);
    }
    if (id % 4096 == 0 || id + 1 == kPages) {
      // Growth by an eighth copies each slab entry 8 times in all; the
      // slab is a little larger than its entries (chunks' slack).
      ASSERT_LE(MaintenanceMoves(index), 12 * (uint64_t{id} + 1) + 100000)
          << "after " << id + 1 << " pages";
    }
  }
  EXPECT_EQ(index.stats().rebuilds, 1u);
  // A page has one live entry unless it is in the pool (new pages valued
  // above Λ go there, leaving their entry stale).
  EXPECT_LE(index.queue_entries(), 17 * kPages / 16);
  std::printf("load of %u pages: %llu growth copies, %llu rewrite moves\n", kPages,
              static_cast<unsigned long long>(index.queue_work().growth_copies),
              static_cast<unsigned long long>(index.queue_work().rewrite_moves));
  EXPECT_EQ(index.PickTop(now, 1).size(), 1u);
}

// Upserts (new and existing pages), signals that re-key queued pages, and
// picks with crawls, interleaved: every such call may push one entry and
// leave one stale. The maintenance moves stay within a constant a call,
// and the queue within a constant share above the pages.
TEST(SchedulingIndexWorkTest, InterleavedCallsMoveEntriesLinearly) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  double t = 1e6;
  PageId next_page = 0;
  uint64_t calls = 0;
  for (int step = 0; step < 300000; ++step) {
    const double r = u(rng);
    if (r < 0.35 || next_page < 1000) {
      // Mostly new pages; an existing one's model replaced.
      const PageId id = next_page == 0 || u(rng) < 0.8 ? next_page++ : rng() % next_page;
      index.Upsert(id, RandomPage(rng), id % 5000, t - 86400 * u(rng));
      ++calls;
    } else if (r < 0.85) {
      // Bursts of signals: each past the count its key allows re-keys.
      index.RecordSignals(rng() % next_page, t, 1 + rng() % 50);
      ++calls;
    } else {
      t += 1.0;
      for (const PickedPage& p : index.PickTop(t, 8)) {
        index.RecordCrawl(p.page, t);
        ++calls;
      }
      ++calls;
    }
    if (step % 1000 == 0) {
      ASSERT_LE(MaintenanceMoves(index), kMovesPerPush * calls + 100000) << "step " << step;
      // Live entries are at most the pages. Stale ones fill the room the
      // queue has, and it grows (by 1/8) only when they are under 1/16 of
      // it: about 17/16 · 9/8 ≈ 1.2 entries a page, with part-full chunks.
      ASSERT_LE(index.queue_entries(), 1.25 * index.size() + 4096) << "step " << step;
    }
  }
  EXPECT_GT(index.stats().compactions, 0u);
  EXPECT_GT(index.stats().signal_rekeys, 10000u);
  std::printf(
      "%llu calls: %llu compactions, %llu rewrite moves, %llu growth "
      "copies, %llu split moves\n",
      static_cast<unsigned long long>(calls),
      static_cast<unsigned long long>(index.stats().compactions),
      static_cast<unsigned long long>(index.queue_work().rewrite_moves),
      static_cast<unsigned long long>(index.queue_work().growth_copies),
      static_cast<unsigned long long>(index.queue_work().split_moves));
}

// Steady picking: 10 pages every 0.01 units of time (1,000 a unit) for
// `steps` steps, each crawled at once, then `after_crawl(page, t)`. Returns
// the crawls from step `from` on, with the index's counts at that step in
// *before.
template <typename AfterCrawl>
uint64_t PickAndCrawl(SchedulingIndex* index, int steps, int from, SchedulingIndex::Stats* before,
                      AfterCrawl after_crawl) {
  constexpr int kPicksPerStep = 10;
  double t = 0.0;
  uint64_t crawls = 0;
  for (int step = 0; step < steps; ++step) {
    t += kPicksPerStep / 1000.0;
    if (step == from) *before = index->stats();
    for (const PickedPage& p : index->PickTop(t, kPicksPerStep)) {
      index->RecordCrawl(p.page, t);
      after_crawl(p.page, t);
      if (step >= from) ++crawls;
    }
  }
  return crawls;
}

// The index's work a crawl between two of its counts (PickAndCrawl's).
struct WorkPerCrawl {
  double wakeups, valuations, candidate_valuations, host_waits, parked_scans, follows;
  uint64_t rebuilds, raises;
};

WorkPerCrawl PerCrawl(const SchedulingIndex::Stats& before, const SchedulingIndex::Stats& after,
                      uint64_t crawls) {
  const double per = 1.0 / static_cast<double>(crawls);
  WorkPerCrawl w;
  w.wakeups = (after.wakeups - before.wakeups) * per;
  w.valuations = (after.valuations - before.valuations) * per;
  w.candidate_valuations = (after.candidate_valuations - before.candidate_valuations) * per;
  w.host_waits = (after.host_waits - before.host_waits) * per;
  w.parked_scans = (after.parked_scans - before.parked_scans) * per;
  w.follows = (after.follows - before.follows) * per;
  w.rebuilds = after.rebuilds - before.rebuilds;
  w.raises = after.raises - before.raises;
  std::printf(
      "per crawl: %.2f wake-ups, %.2f valuations (%.2f of candidates), %.2f host waits, %.1f "
      "parked entries scanned, %.2f joined a cohort; %llu rebuilds, %llu raises\n",
      w.wakeups, w.valuations, w.candidate_valuations, w.host_waits, w.parked_scans, w.follows,
      static_cast<unsigned long long>(w.rebuilds), static_cast<unsigned long long>(w.raises));
  return w;
}

// A Zipf-like host for a page (`u` uniform in [0, 1)): host h holds about
// 1/(h + 1) of the pages.
HostId ZipfHost(double u, int hosts) {
  return static_cast<HostId>(
      std::min<double>(hosts - 1, std::floor(std::exp(u * std::log(hosts + 1.0))) - 1.0));
}

// A learning shard re-estimates a page's model at each of its crawls and
// upserts it. The page's due-time bound carries over to the new model where
// it is still a lower bound (SchedulingIndex::CarryBound), so the page is
// not woken at once to solve for it again: in steady state a crawl costs
// about one wake-up, as without the updates (two without the carry).
TEST(SchedulingIndexWorkTest, LearntUpdatesAfterCrawlsKeepOneWakeACrawl) {
  constexpr int kPages = 20000;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  std::vector<policy::PageParams> params(kPages);
  for (PageId id = 0; id < kPages; ++id) {
    params[id].importance = 0.5 + u(rng);
    params[id].change_rate = 0.05 + 0.1 * u(rng);
    params[id].recall = 0.5 * u(rng);
    params[id].false_rate = 0.01 * u(rng);
    index.Upsert(id, params[id], id % 1000, -100.0 * u(rng));
  }
  // 1000 picks a unit of time: each page crawled every ~20 units, ~25
  // crawls a page over the run; counted over the last 15.
  SchedulingIndex::Stats before;
  const uint64_t crawls = PickAndCrawl(&index, 50000, 20000, &before, [&](PageId page, double t) {
    policy::PageParams& m = params[page];
    m.change_rate *= 0.9 + 0.2 * u(rng);
    m.recall = std::min(1.0, m.recall * (0.9 + 0.2 * u(rng)));
    m.false_rate *= 0.9 + 0.2 * u(rng);
    index.Upsert(page, m, page % 1000, t);
  });
  const SchedulingIndex::Stats& after = index.stats();
  const double wakeups = static_cast<double>(after.wakeups - before.wakeups) / crawls;
  const double valuations = static_cast<double>(after.valuations - before.valuations) / crawls;
  const double carried = static_cast<double>(after.carried_bounds - before.carried_bounds) / crawls;
  std::printf("per crawl: %.2f wake-ups, %.2f valuations, %.2f bounds carried\n", wakeups,
              valuations, carried);
  EXPECT_GT(carried, 0.8);
  EXPECT_LT(wakeups, 1.5);
}

// Crawling at a steady rate with signals, the pages fixed: each crawl and
// each signal that moves a page's due time leaves a stale entry behind.
// They are dropped before the queue would grow, so once the first crawl
// cycles have sized it the queue keeps its memory, about one entry a page
// with a sixteenth of stale ones and the room a split needs.
TEST(SchedulingIndexWorkTest, SteadyCrawlingKeepsTheQueueItsSize) {
  constexpr uint32_t kPages = 20000;
  constexpr int kCycles = 12;
  constexpr int kSettleCycles = 3;
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  index.Reserve(kPages, kPages / 8);
  for (PageId id = 0; id < kPages; ++id) {
    policy::PageParams p;
    p.importance = u(rng);
    p.change_rate = u(rng);
    p.recall = u(rng);
    p.false_rate = 0.1 + 0.5 * u(rng);
    index.Upsert(id, p, id / 8, -10.0 * u(rng));
  }
  // R = m/10: a crawl cycle is m picks; a signal every 5 picks.
  const double rate = kPages / 10.0;
  double t = 0.0;
  uint64_t growth_after_settling = 0;
  uint64_t compactions_after_settling = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    if (cycle == kSettleCycles) {
      growth_after_settling = index.queue_work().growth_copies;
      compactions_after_settling = index.stats().compactions;
    }
    for (uint32_t j = 0; j < kPages; ++j) {
      t += 1.0 / rate;
      const std::vector<PickedPage> pick = index.PickTop(t, 1);
      if (!pick.empty()) index.RecordCrawl(pick[0].page, t);
      if (j % 5 == 0) index.RecordSignal(static_cast<PageId>(rng() % kPages), t);
    }
    std::printf("cycle %d: %.3f queue entries a page, %llu growth copies, %llu compactions\n",
                cycle, static_cast<double>(index.queue_entries()) / kPages,
                static_cast<unsigned long long>(index.queue_work().growth_copies),
                static_cast<unsigned long long>(index.stats().compactions));
  }
  EXPECT_EQ(index.queue_work().growth_copies, growth_after_settling);
  EXPECT_GT(index.stats().compactions, compactions_after_settling);
}

// Signals on most pages between two picks (fetchers away while sites keep
// pinging, or a signal backlog delivered at once) make most of them
// candidates. The next pick then rebuilds Λ over the pages, once, instead
// of picking from the flooded pool and raising Λ over it (which values
// and re-keys every candidate on one thread); its picks are the brute
// force's.
TEST(SchedulingIndexWorkTest, ASignalFloodBetweenPicksCostsOneRebuild) {
  constexpr uint32_t kPages = 200000;
  constexpr uint32_t kHosts = 20000;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  BruteForceIndex oracle;
  const double now = 1e6;
  for (PageId id = 0; id < kPages; ++id) {
    policy::PageParams p = RandomPage(rng);
    p.recall = 0.5 + 0.5 * u(rng);  // signals say much
    const double last_crawl = now - 86400 * u(rng);
    index.Upsert(id, p, id % kHosts, last_crawl);
    oracle.Upsert(id, p, id % kHosts, last_crawl);
  }
  ASSERT_EQ(index.PickTop(now, 1)[0].page, oracle.PickTop(now, 1)[0].page);
  for (PageId id = 0; id < kPages; ++id) {
    index.RecordSignals(id, now + 1, 8);
    oracle.RecordSignals(id, now + 1, 8);
  }
  const size_t flooded = index.candidates();
  ASSERT_GT(flooded, kPages / 2) << "not a flood";
  const SchedulingIndex::Stats before = index.stats();
  const uint64_t placed = index.candidate_placements();
  const std::vector<PickedPage> picked = index.PickTop(now + 2, 10);
  const uint64_t placements = index.candidate_placements() - placed;
  const SchedulingIndex::Stats& after = index.stats();
  const std::vector<PickedPage> want = oracle.PickTop(now + 2, 10);
  ASSERT_EQ(picked.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(picked[i].page, want[i].page) << "rank " << i;
    EXPECT_EQ(picked[i].value, want[i].value) << "rank " << i;
  }
  std::printf("the flooded pick: %zu candidates before; %llu valuations, %llu placements\n",
              flooded, static_cast<unsigned long long>(after.valuations - before.valuations),
              static_cast<unsigned long long>(placements));
  EXPECT_EQ(after.rebuilds - before.rebuilds, 1u);
  EXPECT_EQ(after.raises - before.raises, 0u);
  // The rebuild values each page once (on several threads) and places
  // about its target in the pool; picking from the flooded pool moved every
  // candidate's bound on to its next line, and the raise after it placed
  // them again.
  EXPECT_LE(after.valuations - before.valuations, uint64_t{kPages} * 11 / 10);
  EXPECT_LE(placements, uint64_t{4096});
  EXPECT_LE(index.candidates(), size_t{4096});
}

// Pages alike (an import of URLs with one importance, one prior and no
// crawl time) have one value at all times, so only their ids order them:
// they wait in a cohort behind the one of lowest id, and a pick values that
// one, not every page tied with it (which only exact values could show to
// lose on its id). The picks are the brute force's.
policy::PageParams AlikePage() {
  policy::PageParams alike;
  alike.importance = 1.0;
  alike.change_rate = 1e-5;
  alike.recall = 0.5;
  alike.false_rate = 1e-6;
  return alike;
}

// Registers `batches` batches of `batch` pages alike in both indexes, the
// first crawled a day before `now` and each next `spacing` seconds later.
void LoadAlike(SchedulingIndex* index, BruteForceIndex* oracle, double now, uint32_t batches,
               uint32_t batch, double spacing) {
  for (uint32_t b = 0; b < batches; ++b) {
    const double registered = now - 86400 + spacing * b;
    for (PageId id = b * batch; id < (b + 1) * batch; ++id) {
      index->Upsert(id, AlikePage(), id % 50000, registered);
      oracle->Upsert(id, AlikePage(), id % 50000, registered);
    }
  }
}

// Picks 10 at a time, one a second, crawling each pick; the brute force
// checks the first `checked` picks and the last. Returns the candidates
// the picks after the first valued (the first follows a rebuild, which
// values every page).
uint64_t PickAlike(SchedulingIndex* index, BruteForceIndex* oracle, double now, int picks,
                   int checked) {
  uint64_t after_first = 0;
  for (int pick = 0; pick < picks; ++pick) {
    const double t = now + pick;
    if (pick == 1) after_first = index->stats().candidate_valuations;
    const std::vector<PickedPage> got = index->PickTop(t, 10);
    if (pick < checked || pick == picks - 1) {
      const std::vector<PickedPage> want = oracle->PickTop(t, 10);
      EXPECT_EQ(got.size(), want.size()) << "pick " << pick;
      for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        EXPECT_EQ(got[i].page, want[i].page) << "pick " << pick << " rank " << i;
        EXPECT_EQ(got[i].value, want[i].value) << "pick " << pick << " rank " << i;
      }
    }
    for (const PickedPage& p : got) {
      index->RecordCrawl(p.page, t);
      oracle->RecordCrawl(p.page, t);
    }
  }
  return index->stats().candidate_valuations - after_first;
}

void PrintAlike(const char* what, const SchedulingIndex& index, uint64_t valued, int picks) {
  const SchedulingIndex::Stats& s = index.stats();
  std::printf(
      "%s: %.1f candidates valued a pick after the first; %llu rebuilds, %llu raises, "
      "%llu joined a cohort, %zu followers at the end; all valuations %.1f a pick "
      "(%llu wake-ups)\n",
      what, static_cast<double>(valued) / (picks - 1), static_cast<unsigned long long>(s.rebuilds),
      static_cast<unsigned long long>(s.raises), static_cast<unsigned long long>(s.follows),
      index.followers(), static_cast<double>(s.valuations) / picks,
      static_cast<unsigned long long>(s.wakeups));
}

TEST(SchedulingIndexWorkTest, PagesAlikeAreNotValuedPickAfterPick) {
  constexpr uint32_t kPages = 200000;
  constexpr int kPicks = 50;
  SchedulingIndex index;
  BruteForceIndex oracle;
  const double now = 1e6;
  LoadAlike(&index, &oracle, now, 1, kPages, 0.0);
  const uint64_t valued = PickAlike(&index, &oracle, now, kPicks, 3);
  PrintAlike("pages alike", index, valued, kPicks);
  EXPECT_EQ(index.stats().rebuilds, 1u);
  // A pick values the cohort's first page, not each page tied with it.
  EXPECT_LE(valued, uint64_t{kPicks} * 20);
  EXPECT_EQ(index.CheckCohorts(), "");
}

// The same pages registered 1,000 at a time, 10 s apart: 200 cohorts of
// slightly different values. Each wakes from the queue page by page as its
// value crosses the level, and forms again in the pool when a pick first
// finds its pages tied (each page valued once for it), not a cohort's worth
// of valuations a pick. (All valuations count each page's first wake-up,
// which solves its due time: once a crawl cycle, as for any page.)
TEST(SchedulingIndexWorkTest, PagesAlikeInBatchesFormCohortsOnce) {
  constexpr uint32_t kBatches = 200;
  constexpr uint32_t kBatch = 1000;
  constexpr int kPicks = 600;
  SchedulingIndex index;
  BruteForceIndex oracle;
  const double now = 1e6;
  LoadAlike(&index, &oracle, now, kBatches, kBatch, 10.0);
  const uint64_t valued = PickAlike(&index, &oracle, now, kPicks, 3);
  PrintAlike("pages alike in batches", index, valued, kPicks);
  // The picks took 6 batches; their forming costs one valuation a page.
  EXPECT_LE(valued, uint64_t{kPicks} * 20 + 6 * kBatch);
  EXPECT_EQ(index.CheckCohorts(), "");
}

// A host with a crawl delay and far more pages above the level than its
// delay lets through: each of its crawls holds it again, and its other
// pages above the level wait for it. They wait parked behind the host's
// token (no valuation, no due time solved, no pool entry each), and the
// level is set by the pages picks can take (the host counting once), so a
// crawl costs about one wake-up and a few valuations, as for pages of many
// hosts; opening the token is a pass over the host's parked entries
// (arithmetic), counted below. Without the parking and that level: 47.5
// wake-ups and 88 valuations a crawl, and 38 rebuilds (O(m) each) over the
// 20,000 crawls counted; parked without the token, 47.8 pages parked again
// a crawl.
TEST(SchedulingIndexWorkTest, HeldHostsPagesDoNotAllWakeAtEachOfItsCrawls) {
  constexpr int kBigHostPages = 5000;
  constexpr int kSpreadPages = 5000;
  constexpr HostId kBigHost = 0;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex index;
  auto page = [&]() {
    policy::PageParams p;
    p.importance = 0.5 + u(rng);
    p.change_rate = 0.05 + 0.1 * u(rng);
    p.recall = 0.5 * u(rng);
    p.false_rate = 0.01 * u(rng);
    return p;
  };
  for (PageId id = 0; id < kBigHostPages + kSpreadPages; ++id) {
    const HostId host = id < kBigHostPages ? kBigHost : 1 + id % 250;
    index.Upsert(id, page(), host, -100.0 * u(rng));
  }
  index.SetHostDelay(kBigHost, 0.1);  // 10 crawls a unit of its 5,000 pages
  // 1,000 picks a unit; counted over the second half.
  SchedulingIndex::Stats before;
  const uint64_t crawls = PickAndCrawl(&index, 4000, 2000, &before, [](PageId, double) {});
  const WorkPerCrawl work = PerCrawl(before, index.stats(), crawls);
  EXPECT_EQ(crawls, 20000u);
  EXPECT_LT(work.wakeups, 1.5);
  EXPECT_LT(work.valuations, 10.0);
  EXPECT_LT(work.host_waits, 1.0);
  // A few heap steps a crawl, not a pass over the host's parked pages.
  EXPECT_LT(work.parked_scans, 20.0);
  EXPECT_LE(work.rebuilds, 1u);
}

// Every host with a crawl delay, as a crawl whose fetchers keep a default
// politeness has it: every candidate waits parked behind its host's token,
// and the pool holds tokens only. A raise counts each host once, by its
// best page, and sends the hosts below the new level back to the queue,
// so that the pool shrinks; raising over tokens it cannot value would leave
// the pool as it was, to be raised again at every pick (O(pool) each).
TEST(SchedulingIndexWorkTest, EveryHostDelayedKeepsRaisesRare) {
  constexpr int kHosts = 2000;
  constexpr int kPages = 30000;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SchedulingIndex::Options options;
  options.target_candidates = 200;
  options.max_candidates = 800;
  SchedulingIndex index(policy::CrawlPolicy::GreedyNcis(), options);
  for (PageId id = 0; id < kPages; ++id) {
    // Zipf-like host sizes: host h holds about 1/(h + 1) of the pages.
    const HostId host = ZipfHost(u(rng), kHosts);
    policy::PageParams p;
    p.importance = 0.5 + u(rng);
    p.change_rate = 0.02 + 0.05 * u(rng);
    p.recall = 0.5 * u(rng);
    p.false_rate = 0.01 * u(rng);
    index.Upsert(id, p, host, -100.0 * u(rng));
  }
  for (HostId host = 0; host < kHosts; ++host) index.SetHostDelay(host, 0.5);
  SchedulingIndex::Stats before;
  const uint64_t crawls = PickAndCrawl(&index, 4000, 2000, &before, [](PageId, double) {});
  const WorkPerCrawl work = PerCrawl(before, index.stats(), crawls);
  EXPECT_EQ(crawls, 20000u);
  EXPECT_LE(work.raises, 20u);
  EXPECT_LT(work.parked_scans, 20.0);
  EXPECT_LE(work.rebuilds, 4u);
}

// Pages alike (one model, one crawl time: an import of URLs with default
// priors) on hosts that all have a crawl delay. Each host's pages wait
// parked behind its token; the tokens of hosts whose best pages are alike
// tie with the best page, and the pages of one host with each other. The
// pages that lose such a tie on their id follow the page that wins it (a
// cohort across hosts, or of one host's pages) instead of coming back
// through their host's token at every pick; before, every pick opened
// every such token, and each opening valued all of its host's tied pages
// (13,096 valuations a crawl here). Pages nearly alike (models a hair
// apart, as a host's pooled estimates leave them) do not tie, and their
// tokens' bounds must stay close enough to their pages' growth that a pick
// does not open them all.
TEST(SchedulingIndexWorkTest, PagesAlikeOnDelayedHostsDoNotReopenAtEveryPick) {
  constexpr int kHosts = 2000;
  constexpr int kPages = 30000;
  for (const double spread : {0.0, 1e-6}) {
    SCOPED_TRACE(spread);
    std::mt19937_64 rng(8);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    SchedulingIndex::Options options;
    options.target_candidates = 200;
    options.max_candidates = 800;
    SchedulingIndex index(policy::CrawlPolicy::GreedyNcis(), options);
    for (PageId id = 0; id < kPages; ++id) {
      const HostId host = ZipfHost(u(rng), kHosts);
      policy::PageParams p;
      p.importance = 1.0;
      p.change_rate = 0.05 * (1.0 + spread * u(rng));
      p.recall = 0.3;
      p.false_rate = 0.005;
      index.Upsert(id, p, host, -100.0);
    }
    for (HostId host = 0; host < kHosts; ++host) index.SetHostDelay(host, 0.5);
    SchedulingIndex::Stats before;
    const uint64_t crawls = PickAndCrawl(&index, 4000, 2000, &before, [](PageId, double) {});
    std::printf("models %g apart: ", spread);
    const WorkPerCrawl work = PerCrawl(before, index.stats(), crawls);
    EXPECT_EQ(crawls, 20000u);
    EXPECT_LT(work.valuations, spread == 0.0 ? 10.0 : 40.0);
    EXPECT_LT(work.parked_scans, 60.0);
    EXPECT_LE(work.rebuilds, 4u);
  }
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
