// Picks per second of the scheduling index against the brute-force scan, on
// fig. 6 pages (main paper Sec. 6.6) with GREEDY-NCIS values. Each iteration
// is one slot of Algorithm 1 at bandwidth R = m/10: PickTop(t, 1), then
// RecordCrawl at t, and one signal every 5 picks (100,000 signals/s at
// 500,000 picks/s). Everything the index does (re-leveling, rebuilds) runs
// inside the timed loop. Before it: the fill, the first rebuild, and a
// warm-up past the start-up transient (the first crawl cycle, when every
// page learns its due time at its first wake-up and the pick level climbs):
// chunks of m/10 slots until a full cycle (m slots) has passed since the
// start and since the last raise of Λ (after a raise every page re-solves
// its due time at its next wake-up, within a cycle) and the last chunk's
// valuations per pick are within 5% of the previous chunk's (at most 3m
// slots; the counter warmup_slots says how many it took).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/index/brute_force_index.h"
#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {
namespace {

policy::PageParams Fig6Page(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::gamma_distribution<double> g(0.25, 1.0);
  const double a = g(rng), b = g(rng);
  return {u(rng), u(rng), a + b > 0 ? a / (a + b) : 0.5, 0.1 + 0.5 * u(rng)};
}

template <typename Index>
void Fill(Index* index, int64_t m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t i = 0; i < m; ++i) {
    // Crawled at some time in the last 10 units, as in a running system.
    // Eight pages a host, no politeness delay: the host table is counted
    // in bytes/page but does not restrict picks.
    index->Upsert(static_cast<PageId>(i), Fig6Page(rng), static_cast<HostId>(i / 8),
                  -10.0 * u(rng));
  }
}

template <typename Index>
void RunSlots(Index* index, int64_t m, int64_t slots, double* t, std::mt19937_64& rng,
              int64_t* counter) {
  const double rate = static_cast<double>(m) / 10.0;
  std::uniform_int_distribution<int64_t> page(0, m - 1);
  for (int64_t j = 0; j < slots; ++j) {
    *t += 1.0 / rate;
    const std::vector<PickedPage> pick = index->PickTop(*t, 1);
    if (!pick.empty()) index->RecordCrawl(pick[0].page, *t);
    if (++*counter % 5 == 0) {
      index->RecordSignal(static_cast<PageId>(page(rng)), *t);
    }
  }
}

// One warmed-up index per m, shared by the runs Google Benchmark makes with
// growing iteration counts (each continues the same simulated crawl).
struct WarmIndex {
  std::unique_ptr<SchedulingIndex> index;
  std::mt19937_64 rng{1};
  double t = 0.0;
  int64_t counter = 0;
  int64_t warmup_slots = 0;
};

// A SchedulingIndex sized for and filled with m pages.
std::unique_ptr<SchedulingIndex> FilledIndex(int64_t m, std::mt19937_64& rng) {
  auto index = std::make_unique<SchedulingIndex>();
  index->Reserve(static_cast<size_t>(m), static_cast<size_t>(m / 8 + 1));
  Fill(index.get(), m, rng);
  return index;
}

std::map<int64_t, std::unique_ptr<WarmIndex>>& WarmCache() {
  static auto* cache = new std::map<int64_t, std::unique_ptr<WarmIndex>>();
  return *cache;
}
void ClearCaches();  // one index in memory at a time

WarmIndex& Warm(int64_t m) {
  auto* cache = &WarmCache();
  if (cache->count(m) == 0) {
    ClearCaches();
    auto w = std::make_unique<WarmIndex>();
    w->index = FilledIndex(m, w->rng);
    const int64_t chunk = std::max<int64_t>(m / 10, 1000);
    double last_valuations = -1.0;
    int64_t calm_slots = 0;  // since the start or the last raise / rebuild
    for (;;) {
      const SchedulingIndex::Stats before = w->index->stats();
      RunSlots(w->index.get(), m, chunk, &w->t, w->rng, &w->counter);
      w->warmup_slots += chunk;
      const SchedulingIndex::Stats& after = w->index->stats();
      const double valuations = static_cast<double>(after.valuations - before.valuations) / chunk;
      const bool leveled = after.raises != before.raises || after.rebuilds != before.rebuilds;
      calm_slots = leveled ? 0 : calm_slots + chunk;
      const bool settled = std::abs(valuations - last_valuations) <= 0.05 * last_valuations;
      last_valuations = valuations;
      if ((calm_slots >= m && settled) || w->warmup_slots >= 3 * m) break;
    }
    (*cache)[m] = std::move(w);
  }
  return *(*cache)[m];
}

// Picks, the index's work per pick since `before` and its bytes per page.
void SetCounters(const SchedulingIndex& index, const SchedulingIndex::Stats& before,
                 const DueQueue::Work& queue_before, int64_t m, int64_t picks,
                 benchmark::State& state) {
  const SchedulingIndex::Stats& after = index.stats();
  auto per_pick = [&](uint64_t a, uint64_t b) {
    return static_cast<double>(a - b) / static_cast<double>(picks);
  };
  state.SetItemsProcessed(picks);
  state.counters["bytes_per_page"] =
      static_cast<double>(index.MemoryBytes()) / static_cast<double>(m);
  state.counters["valuations_per_pick"] = per_pick(after.valuations, before.valuations);
  state.counters["wakeups_per_pick"] = per_pick(after.wakeups, before.wakeups);
  state.counters["refinements_per_pick"] = per_pick(after.refinements, before.refinements);
  state.counters["candidate_valuations_per_pick"] =
      per_pick(after.candidate_valuations, before.candidate_valuations);
  state.counters["tightenings_per_pick"] = per_pick(after.tightenings, before.tightenings);
  state.counters["rebuilds"] = static_cast<double>(after.rebuilds - before.rebuilds);
  state.counters["raises"] = static_cast<double>(after.raises - before.raises);
  state.counters["reserve_pulls"] = static_cast<double>(after.pulls - before.pulls);
  state.counters["candidates"] = static_cast<double>(index.candidates());
  // The due queue's upkeep: entries moved by splits, compactions and growth.
  auto moves = [](const DueQueue::Work& w) {
    return w.split_moves + w.rewrite_moves + w.growth_copies;
  };
  state.counters["queue_moves_per_pick"] = per_pick(moves(index.queue_work()), moves(queue_before));
}

void BM_SchedulingIndex(benchmark::State& state) {
  const int64_t m = state.range(0);
  WarmIndex& w = Warm(m);
  SchedulingIndex* index = w.index.get();
  const SchedulingIndex::Stats before = index->stats();
  const DueQueue::Work queue_before = index->queue_work();
  int64_t picks = 0;
  for (auto _ : state) {
    RunSlots(index, m, 1, &w.t, w.rng, &w.counter);
    ++picks;
  }
  SetCounters(*index, before, queue_before, m, picks, state);
  state.counters["warmup_slots"] = static_cast<double>(w.warmup_slots);
}
BENCHMARK(BM_SchedulingIndex)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kNanosecond);

// Lease bursts, as a shard serving lease requests faster than its crawl
// rate sees them (bench/shard_server_benchmark leases 200,000 URLs at
// "now"): each iteration is PickSlots of 256 slots at one time, which
// advances by a thousandth of a slot (R = m/10) per batch, with one signal
// per 5 picks. After every m/5 leases (a fifth of the pages, leased in
// about a thousandth of the time the crawl cycle gives them) they are
// reported (RecordCrawl at t) and time moves on by the m/5 slots those
// crawls take at R, outside the timing; the next burst then also drains
// the pages that crossed Λ meanwhile. The first rebuild (after the fill)
// is outside the timing too.
// One filled index per m, continued by each run Google Benchmark makes.
struct BurstIndex {
  std::unique_ptr<SchedulingIndex> index;
  std::mt19937_64 rng{1};
  double t = 0.0;
  std::vector<PageId> leased;
};

std::map<int64_t, std::unique_ptr<BurstIndex>>& BurstCache() {
  static auto* cache = new std::map<int64_t, std::unique_ptr<BurstIndex>>();
  return *cache;
}

void ClearCaches() {
  WarmCache().clear();
  BurstCache().clear();
}

BurstIndex& Filled(int64_t m) {
  auto* cache = &BurstCache();
  if (cache->count(m) == 0) {
    ClearCaches();
    auto b = std::make_unique<BurstIndex>();
    b->index = FilledIndex(m, b->rng);
    b->index->PickTop(b->t, 1);  // the first rebuild
    (*cache)[m] = std::move(b);
  }
  return *(*cache)[m];
}

void BM_LeaseBurst(benchmark::State& state) {
  const int64_t m = state.range(0);
  constexpr int kBatch = 256;
  BurstIndex& b = Filled(m);
  SchedulingIndex* index = b.index.get();
  const double dt = 10.0 / static_cast<double>(m) / 1000.0;
  std::uniform_int_distribution<int64_t> page(0, m - 1);
  int64_t picks = 0;
  const SchedulingIndex::Stats before = index->stats();
  const DueQueue::Work queue_before = index->queue_work();
  for (auto _ : state) {
    b.t += dt;
    const std::vector<double> times(kBatch, b.t);
    for (const SlotPick& s : index->PickSlots(times)) {
      b.leased.push_back(s.page);
    }
    picks += kBatch;
    for (int j = 0; j < kBatch / 5; ++j) {
      index->RecordSignal(static_cast<PageId>(page(b.rng)), b.t);
    }
    if (static_cast<int64_t>(b.leased.size()) >= m / 5) {
      state.PauseTiming();
      for (PageId p : b.leased) index->RecordCrawl(p, b.t);
      b.leased.clear();
      b.t += 2.0;  // m/5 slots at R = m/10
      state.ResumeTiming();
    }
  }
  SetCounters(*index, before, queue_before, m, picks, state);
}
BENCHMARK(BM_LeaseBurst)->Arg(100000)->Arg(1000000)->Arg(10000000)->Unit(benchmark::kNanosecond);

void BM_BruteForce(benchmark::State& state) {
  const int64_t m = state.range(0);
  ClearCaches();
  std::mt19937_64 rng(1);
  auto index = std::make_unique<BruteForceIndex>();
  Fill(index.get(), m, rng);
  double t = 0.0;
  int64_t counter = 0;
  int64_t picks = 0;
  for (auto _ : state) {
    RunSlots(index.get(), m, 1, &t, rng, &counter);
    ++picks;
  }
  state.SetItemsProcessed(picks);
  state.counters["bytes_per_page"] =
      static_cast<double>(index->MemoryBytes()) / static_cast<double>(m);
}
BENCHMARK(BM_BruteForce)
    ->Arg(100000)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace shard
}  // namespace recrawl
