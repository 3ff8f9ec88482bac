// SchedulingIndex's level Λ (scheduling_index.h): the rebuild that sets it,
// its raise when candidates pile up, and the burst reserve that lets a
// lease burst go below it without a rebuild.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Frees storage from ::operator new.
struct FreeStorage {
  void operator()(void* p) const { ::operator delete(p); }
};

}  // namespace

// Values every page at t and sets Λ to the target-th largest value: the
// only O(m) step, needed at start, after SetPolicy and when Λ must come down.
// Keys come from the slope bound here; each page solves for its exact due
// time when it first wakes below Λ, which spreads that cost over the cycle.
void SchedulingIndex::Rebuild(double t, size_t target) {
  ++stats_.rebuilds;
  RestorePicks();
  DropReserve();
  rebuild_target_ = target;
  picks_at_rebuild_ = picks_;
  size_at_rebuild_ = size_;
  needs_rebuild_ = false;
  needs_rekey_ = false;
  candidates_.Clear();
  queue_.Clear();
  queued_ = 0;
  DropParked();   // parked pages are valued and placed as the others are
  DropCohorts();  // followers are valued and placed as the others are
  // The per-page steps run on several threads when there are many pages,
  // each over its own range of ids; they write only their range's pages
  // and entries. The arrays are first written by those threads too, so
  // their pages' first-touch faults are shared out as well.
  const size_t n = pages_.size();
  const size_t parts =
      n < kParallelRebuildPages ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  auto in_parallel = [n, parts](const auto& range) {
    std::vector<std::thread> helpers;
    for (size_t k = 1; k < parts; ++k) {
      helpers.emplace_back(range, k * n / parts, (k + 1) * n / parts);
    }
    range(0, n / parts);
    for (std::thread& helper : helpers) helper.join();
  };
  // Value and growth bounds, per page: the step's bulk. (Valuation is
  // trivially destructible: its storage is freed without destructor calls.)
  const std::unique_ptr<Valuation, FreeStorage> storage(
      static_cast<Valuation*>(::operator new(n * sizeof(Valuation))));
  Valuation* const found = storage.get();
  in_parallel([this, t, found](size_t begin, size_t end) {
    for (size_t id = begin; id < end; ++id) {
      const Page& p = pages_[id];
      new (&found[id]) Valuation(p.state == kAbsent || p.state == kLeased
                                     ? Valuation{0.0, {}}
                                     : ValueWithGrowth(p, UncachedBelief(p), t));
    }
  });
  // Λ is the target-th value of the pages a pick could take: a host that
  // gives one page a pick (a crawl delay) counts with its best page only,
  // so that a delayed host with many pages of high value, which it can
  // let through only one by one, does not lift Λ over every other host's
  // pages (then parked, they would leave picks short of Λ and force
  // rebuild after rebuild).
  std::vector<double> ranked;
  ranked.reserve(size_);
  absl::flat_hash_map<HostId, double> one_per_pick;  // such a host's best
  for (PageId id = 0; id < n; ++id) {
    Page& p = pages_[id];
    if (p.state == kAbsent) continue;
    if (p.state == kLeased) {
      p.iota_lb = 0.0f;  // its bound was for the old level
      continue;
    }
    ++stats_.valuations;
    if (hosts_.OnePerPick(p.host)) {
      const auto [it, first] = one_per_pick.try_emplace(p.host, found[id].value);
      if (!first) it->second = std::max(it->second, found[id].value);
      continue;
    }
    ranked.push_back(found[id].value);
  }
  for (const auto& [host, best] : one_per_pick) ranked.push_back(best);
  absl::flat_hash_map<HostId, double>().swap(one_per_pick);
  double floor = 0.0;  // the reserve's, 0: none
  if (ranked.size() <= target) {
    SetLevel(0.0);
  } else {
    auto end = ranked.end();
    const size_t depth = std::max(2 * target, size_ / 4);
    if (depth < ranked.size()) {
      std::nth_element(ranked.begin(), ranked.begin() + (depth - 1), ranked.end(),
                       std::greater<double>());
      floor = ranked[depth - 1];
      end = ranked.begin() + depth;
    }
    std::nth_element(ranked.begin(), ranked.begin() + (target - 1), end, std::greater<double>());
    SetLevel(ranked[target - 1]);
  }
  std::vector<double>().swap(ranked);
  if (floor > 0.0 && floor < admission_level_) {
    reserve_active_ = true;
    reserve_at_ = t;
    reserve_floor_ = floor;
    reserve_growth_ = 0.0;
    reserve_.Start(t);
  }
  // The pages that are candidates now (about `target` of them), and the
  // due time under the new level of the others (Refine, then KeyOf), which
  // reads only the level, the policy and the host table besides the page.
  auto is_candidate = [this, t, found](PageId id) {
    return found[id].value >= admission_level_ && hosts_.Allowed(pages_[id].host, t);
  };
  const std::unique_ptr<double[]> keys(new double[n]);
  in_parallel([this, t, found, &keys, &is_candidate](size_t begin, size_t end) {
    for (size_t id = begin; id < end; ++id) {
      Page& p = pages_[id];
      if (p.state == kAbsent || p.state == kLeased) continue;
      p.iota_lb = 0.0f;
      if (is_candidate(id)) continue;
      const policy::PageModel b = UncachedBelief(p);
      if (found[id].value < admission_level_) {
        Refine(p, b, t, found[id], /*solve=*/false);
      }
      keys[id] = KeyOf(p, b, p.n_cis);
    }
  });
  queue_.Reserve(size_);
  // Candidates alike one of lower id follow it (ids ascend here, so the
  // first of each likeness leads). A first of a delayed host is placed once
  // it is known whether it leads a cohort (in the pool) or not (parked
  // behind its host's token: AddCandidate).
  absl::flat_hash_map<Likeness, PageId> first_alike;
  std::vector<PageId> delayed_firsts;
  for (PageId id = 0; id < n; ++id) {
    Page& p = pages_[id];
    if (p.state == kAbsent || p.state == kLeased) continue;
    if (is_candidate(id)) {
      const auto [it, first] = first_alike.try_emplace(LikenessOf(p), id);
      if (!first) {
        Follow(id, it->second);
      } else if (hosts_.OnePerPick(p.host)) {
        delayed_firsts.push_back(id);
      } else {
        AddCandidate(id, t, found[id]);
      }
      continue;
    }
    if (reserve_active_) {
      reserve_growth_ = std::max(reserve_growth_, found[id].growth.later_slope);
      if (found[id].value >= floor) AddToReserve(id, t, found[id]);
    }
    p.state = kQueued;
    ++queued_;
    queue_.Push({keys[id], id, Restamp(p, p.n_cis)});
  }
  for (PageId id : delayed_firsts) AddCandidate(id, t, found[id]);
  reserve_.Order();
  if (!(reserve_growth_ < kInf)) DropReserve();
  // Pages tied at Λ all stay candidates; neither a raise nor a rebuild could
  // shrink the pool they make before it grows (ShouldRaise, PoolFlooded).
  const bool tied = candidates_.size() > MaxCandidates(PoolTarget());
  retry_raise_above_ = tied ? 2 * candidates_.size() : 0;
  flood_above_ = retry_raise_above_;
}

double SchedulingIndex::ClearBound(double t) const {
  const double bound = std::max(FloorBound(t), reserve_.TopBound(t));
  // Values carry relative rounding ~1e-10 (crawl_value.h).
  return bound * (1.0 + 1e-8);
}

bool SchedulingIndex::Recertify(PageId id, double t, const Valuation& v) {
  reserve_growth_ = std::max(reserve_growth_, v.growth.later_slope);
  if (v.value < FloorBound(t)) return false;  // certified below the floor
  if (v.value < admission_level_) {
    AddToReserve(id, t, v);
    return false;
  }
  Detach(id);
  const HostId host = pages_[id].host;
  if (hosts_.Allowed(host, t)) {
    AddCandidate(id, t, v);
  } else {
    EnqueueAt(id, hosts_.AllowedFrom(host));
  }
  return true;
}

// The next chunk of the reserve (and the pages tied with its last) into
// the pool, valued at t; pages that changed since the rebuild were
// re-certified or left the queue already, and are skipped unless queued.
// A page of a held host with a crawl delay waits parked behind its host
// (AddCandidate), where its host's token carries it; keyed at the host's
// allowed time instead, it would wake then only to be valued and rejoin
// the reserve. Chunks are taken by bound, across the slope classes.
bool SchedulingIndex::PullReserve(double t, int k) {
  if (!reserve_active_ || reserve_.empty()) return false;
  ++stats_.pulls;
  const size_t chunk = std::max(TargetCandidates(), static_cast<size_t>(k));
  size_t pulled = 0;
  int c = -1;
  float last = std::numeric_limits<float>::infinity();
  PageId valued = kNoPage;  // the last page valued here
  Valuation value;
  while (!reserve_.empty()) {
    if (pulled < chunk) {
      c = reserve_.TopClass(t);
    } else if (const ReserveClasses::Entry* next = reserve_.Top(c);
               next == nullptr || next->value != last) {
      break;  // a run tied in one class (most often pages alike) is pulled whole
    }
    const ReserveClasses::Entry r = reserve_.Pop(c);
    ++pulled;
    last = r.value;
    if (pages_[r.page].state != kQueued) continue;
    Detach(r.page);
    const HostId host = pages_[r.page].host;
    if (!hosts_.Allowed(host, t) && !hosts_.OnePerPick(host)) {
      EnqueueAt(r.page, hosts_.AllowedFrom(host));
      continue;
    }
    // Pages alike have one value, and a chunk of pages tied in the
    // reserve is most often a run of them: valued once.
    if (valued == kNoPage || !Alike(pages_[r.page], pages_[valued])) {
      value = ValueWithGrowth(r.page, t);
      valued = r.page;
    }
    AddCandidate(r.page, t, value);
  }
  return true;
}

void SchedulingIndex::AddToReserve(PageId id, double t, const Valuation& v) {
  if (!(v.growth.later_slope < kInf)) {
    DropReserve();  // a page it cannot bound
    return;
  }
  reserve_.Add(id, t, v.value, v.growth.later_slope);
}

void SchedulingIndex::RecertifyQueued(PageId id) {
  if (!reserve_active_) return;
  // Not after the next pick (picks never go back), so that the certificate
  // holds from then on; not before the reserve's values.
  const double at = std::max(reserve_at_, last_pick_at_);
  Recertify(id, at, ValueWithGrowth(id, at));
}

void SchedulingIndex::DropReserve() {
  reserve_active_ = false;
  reserve_.Clear();
}

// Also while the reserve is active (the raise drops it): its pulls add a
// pool's target at a time, so a pool past its maximum was filled by pages
// crossing Λ (signals, a lease burst's level passed), and the level is not
// falling.
bool SchedulingIndex::ShouldRaise() const {
  return candidates_.size() > std::max(MaxCandidates(PoolTarget()), retry_raise_above_);
}

// Too many candidates: value every candidate at t, raise Λ to the
// target-th largest value (so that that many candidates stay) and send the
// ones below it back to the queue, each with its due time solved for the
// new level. Keys stay valid: crossing a higher level cannot happen earlier.
// The candidates' last exact values would not do: most date from when they
// woke, just above Λ, so in a pool of more than a few thousand the
// target-th largest of them is Λ itself and Λ could not rise while the pool
// grew. Valuing them all costs max_candidates valuations a raise, amortised
// over the picks that filled the pool; those that stay get fresh bounds.
void SchedulingIndex::Raise(double t) {
  ++stats_.raises;
  const size_t target = PoolTarget();
  if (candidates_.size() <= target) return;
  std::vector<Exact> valued;
  valued.reserve(candidates_.size());
  // A host behind a token counts with its best parked page, valued in the
  // order of the bounds until known (its other pages stay unvalued); the
  // page stays parked. A host with no live page left has no best.
  struct HostBest {
    HostId host;
    Exact best;
  };
  std::vector<HostBest> token_hosts;
  for (const CandidatePool::Entry& e : candidates_.Entries()) {
    if (IsToken(e.page)) {
      token_hosts.push_back({e.tag, {kNoPage, {-kInf, {}}}});
      continue;
    }
    valued.push_back({e.page, ValueWithGrowth(e.page, t)});
  }
  std::vector<Exact> ranked = valued;
  // Λ only rises: a host with no page at Λ (a tie included) goes back to
  // the queue whatever the new level, its best unneeded.
  const PickedPage at_level{kNoPage, admission_level_};
  for (HostBest& h : token_hosts) {
    CandidatePool::Entry entry;
    if (!TakeBestParked(h.host, t, at_level, /*gather_alike=*/false, &entry, &h.best.v)) continue;
    h.best.page = entry.page;
    parked_.find(h.host)->second.pages.Push(entry, t, LiveParkedPredicate());
    ranked.push_back(h.best);
  }
  const double level = LevelKeeping(std::move(ranked), target);
  if (!(level > level_)) {
    // Ties at Λ, or fewer than the target of pages a pick could take: try
    // again when the pool has doubled, so that this O(pool) step stays
    // amortised.
    retry_raise_above_ = 2 * candidates_.size();
    return;
  }
  retry_raise_above_ = 0;
  DropReserve();  // the pages it sends back are not valued at the floor
  SetLevel(level);
  candidates_.Clear();
  for (const HostBest& h : token_hosts) {
    FreeToken(&parked_.find(h.host)->second);
    if (h.best.page != kNoPage && h.best.v.value >= admission_level_) {
      PlaceToken(h.host, t);
    } else {
      ReturnParked(h.host, t);  // every page of the host is below Λ
    }
  }
  for (const Exact& e : valued) {
    if (e.v.value >= admission_level_) {
      AddCandidate(e.page, t, e.v);
      continue;
    }
    Page& p = pages_[e.page];
    Refine(p, Belief(p), t, e.v, /*solve=*/true);
    Enqueue(e.page);
    EnqueueCohort(e.page);  // its followers are below Λ with it
  }
}

double SchedulingIndex::LevelKeeping(std::vector<Exact> ranked, size_t target) const {
  if (ranked.size() <= target) return level_;
  const bool one_per_pick = std::any_of(ranked.begin(), ranked.end(), [this](const Exact& e) {
    return hosts_.OnePerPick(pages_[e.page].host);
  });
  auto higher = [](const Exact& a, const Exact& b) { return a.v.value > b.v.value; };
  if (followers_ == 0 && !one_per_pick) {
    std::nth_element(ranked.begin(), ranked.begin() + (target - 1), ranked.end(), higher);
    return ranked[target - 1].v.value;
  }
  std::sort(ranked.begin(), ranked.end(), higher);
  absl::flat_hash_set<HostId> counted_hosts;
  size_t counted = 0;
  for (const Exact& e : ranked) {
    const HostId host = pages_[e.page].host;
    if (hosts_.OnePerPick(host)) {
      if (!counted_hosts.insert(host).second) continue;
      ++counted;  // its followers are on other hosts or wait with it
    } else {
      const uint32_t c = LedCohort(e.page);
      counted += 1 + (c == kNoCohort ? 0 : cohorts_[c].live);
    }
    if (counted >= target) return e.v.value;
  }
  return ranked.back().v.value;
}

size_t SchedulingIndex::TargetCandidates() const {
  const double scaled = options_.target_fraction * static_cast<double>(size_);
  return std::max(static_cast<size_t>(std::max(options_.target_candidates, 1)),
                  static_cast<size_t>(scaled));
}

size_t SchedulingIndex::MaxCandidates(size_t target) const {
  // The options' ratio of max to target, at the given target.
  const double ratio =
      static_cast<double>(options_.max_candidates) / std::max(options_.target_candidates, 1);
  return std::max(static_cast<size_t>(std::max(options_.max_candidates, 1)),
                  static_cast<size_t>(ratio * static_cast<double>(target)));
}

bool SchedulingIndex::LevelFalling() const {
  return rebuild_target_ > 0 && picks_ - picks_at_rebuild_ < 2 * rebuild_target_;
}

size_t SchedulingIndex::PoolTarget() const {
  return LevelFalling() ? std::max(TargetCandidates(), rebuild_target_) : TargetCandidates();
}

size_t SchedulingIndex::RefillTarget(int k) const {
  // The default target first: a larger pool would only be raised back
  // (which would drop the new reserve).
  const size_t target = std::max(TargetCandidates(), 2 * static_cast<size_t>(k));
  if (!LevelFalling()) return target;
  const size_t deepest = std::max(target, size_ / 16);
  return std::max(target, std::min(4 * rebuild_target_, deepest));
}

void SchedulingIndex::RekeyAll() {
  needs_rekey_ = false;
  DropReserve();  // keys at hosts' allowed times would be lost
  RewakeParkedHosts();
  queue_.Rewrite([this](Queued* q) {
    if (!Live(*q)) return false;
    const Page& p = pages_[q->page];
    q->key = KeyOf(p, Belief(p), std::max<int64_t>(p.n_cis, p.keyed_signals));
    return true;
  });
}

}  // namespace shard
}  // namespace recrawl
