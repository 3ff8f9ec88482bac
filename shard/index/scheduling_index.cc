#include "shard/index/scheduling_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "policy/crawl_value.h"
#include "shard/index/page_value.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Keys are solved for a level slightly below Λ, so that rounding in V
// (relative error ~1e-10, crawl_value.h) cannot keep a page with computed
// V ≥ Λ out of the candidates.
constexpr double kKeyMargin = 1e-6;
// A woken page is admitted a little further below, so that a key solved to
// kRootTolerance and rounded down admits its page instead of waking it again.
constexpr double kAdmissionMargin = 1e-4;
// Relative slack on upper bounds, for the same reason.
constexpr double kBoundSlack = 1e-9;
// Refine's valuations at most (it converges in two or three).
constexpr int kMaxRefineSteps = 6;

// The largest float not above x (a lower bound stays a lower bound).
float FloorFloat(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x) {
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  }
  return f;
}

// A lower bound on how much later V reaches V + gap, when its slope is at
// most min(later_slope, slope + rise·s) s after now:
// the smallest d with ∫_0^d min(later, slope + rise s) ds >= gap.
double CrossingDelay(double gap, const CandidatePool::Growth& g) {
  if (!(gap > 0.0)) return 0.0;
  const double slope = g.slope, rise = g.rise, later = g.later_slope;
  if (!(later > 0.0)) return kInf;
  if (!(rise > 0.0) || later <= slope) {
    const double s = std::min(slope, later);
    return s > 0.0 ? gap / s : kInf;
  }
  const double knee = (later - slope) / rise;
  const double knee_gain = slope * knee + 0.5 * rise * knee * knee;
  if (knee_gain >= gap) {
    // slope·d + rise·d²/2 = gap, in the form that does not cancel.
    return 2.0 * gap / (slope + std::sqrt(slope * slope + 2.0 * rise * gap));
  }
  return knee + (gap - knee_gain) / later;
}

}  // namespace

SchedulingIndex::SchedulingIndex(const policy::CrawlPolicy& policy)
    : SchedulingIndex(policy, Options()) {}

SchedulingIndex::SchedulingIndex(const policy::CrawlPolicy& policy, const Options& options)
    : policy_(policy),
      options_(options),
      page_slots_(&pages_, &hosts_, &tokens_),
      candidates_(&page_slots_) {}

policy::PageModel SchedulingIndex::Belief(const Page& p) const {
  const PageId id = static_cast<PageId>(&p - pages_.data());
  CachedBelief* slot = nullptr;
  if (!beliefs_.empty()) {
    slot = &beliefs_[id & (beliefs_.size() - 1)];
    if (slot->page == id) return slot->belief;
  }
  const policy::PageModel belief = UncachedBelief(p);
  if (slot != nullptr) *slot = {id, belief};
  return belief;
}

policy::PageModel SchedulingIndex::UncachedBelief(const Page& p) const {
  policy::PageParams params;
  params.importance = p.importance;
  params.change_rate = p.change_rate;
  params.recall = p.recall;
  params.false_rate = p.false_rate;
  return policy_.Belief(policy::PageModel::Create(params).value());
}

void SchedulingIndex::SizeBeliefCache() {
  size_t slots = 256;
  while (2 * slots * 128 <= size_) slots *= 2;
  if (slots == beliefs_.size()) return;
  beliefs_.assign(slots, CachedBelief{kNoPage, ZeroModel()});
  beliefs_.shrink_to_fit();
}

void SchedulingIndex::ForgetBelief(PageId id) {
  if (beliefs_.empty()) return;
  CachedBelief& slot = beliefs_[id & (beliefs_.size() - 1)];
  if (slot.page == id) slot.page = kNoPage;
}

// τ_eff = τ_elap + β n for pages whose V is a function of τ_eff; τ_elap for
// the others (no informative signals, or ν = 0 before the first signal).
double SchedulingIndex::EffectiveElapsed(const Page& p, const policy::PageModel& b,
                                         double t) const {
  const double tau = std::max(t - p.last_crawl, 0.0);
  if (!b.signals_informative() || p.n_cis == 0) return tau;
  return tau + b.beta() * static_cast<double>(p.n_cis);
}

// How fast V may grow from a point where crawl_value.h gave it (τ_eff grows
// at rate 1 in t until the next signal or crawl). crawl_value.h gives dV/dι
// now (slope, = K ψ(ι) with K = μ̃ α e^{−αι}: Lemma 3 with Lemma 4's ψ) and
// K (slope_rise); ψ = slope / K is at least the true ψ(ι) (the slope is
// widened for rounding). As ψ' <= 1, for s >= ι
//   V'(s) = μ̃ α e^{−αs} ψ(s) <= f(s) := K e^{−α(s−ι)} (ψ + s − ι),
// and
//   * f's maximum over s is K ψ when αψ >= 1 and K e^{αψ−1}/α otherwise:
//     the slope that holds for ever (later_slope);
//   * f'(s) = K e^{−α(s−ι)} (1 − α(ψ + s − ι)) <= K (1 − αψ)⁺ for every
//     s >= ι (the bracket falls as the exponential does), so
//     V'(s) <= Kψ + K (1 − αψ)⁺ (s − ι): the rise. crawl_value.h's own rise,
//     K, leaves out the −αψ; near its threshold a page has αψ of order one,
//     so this is several times tighter, and a candidate's bound with it.
// Zero where V is constant between signals (α = 0, or ν = 0 after a signal).
CandidatePool::Growth SchedulingIndex::GrowthOf(const policy::PageModel& b,
                                                const policy::ValueGrowth& g) const {
  CandidatePool::Growth growth;
  if (!(g.slope_rise > 0.0)) return growth;
  const double alpha = b.signals_informative() ? b.alpha() : b.change_rate();
  const double psi = g.slope / g.slope_rise;
  const double later =
      alpha * psi >= 1.0 ? g.slope : g.slope_rise * std::exp(alpha * psi - 1.0) / alpha;
  growth.slope = g.slope * (1.0 + kBoundSlack);
  growth.rise = g.slope_rise * std::max(1.0 - alpha * psi, 0.0) * (1.0 + kBoundSlack);
  growth.later_slope = later * (1.0 + kBoundSlack);
  return growth;
}

SchedulingIndex::Valuation SchedulingIndex::ValueWithGrowth(const Page& p,
                                                            const policy::PageModel& b,
                                                            double t) const {
  const policy::ValueGrowth g = BeliefGrowth(b, policy_, t - p.last_crawl, p.n_cis);
  return {g.value, GrowthOf(b, g)};
}

// A lower bound on the first time the page is eligible with V >= key_level_:
// d = last_crawl + ι_lb − β n (docs/design.md, "Index"), and never before its host
// allows it.
double SchedulingIndex::KeyOf(const Page& p, const policy::PageModel& b, int64_t signals) const {
  const double iota = p.iota_lb;
  double base;
  if (b.change_rate() <= 0.0 || b.importance() <= 0.0) {
    base = key_level_ <= 0.0 ? p.last_crawl : kInf;  // V = 0 forever
  } else if (!b.signals_informative()) {
    base = p.last_crawl + iota;  // GREEDY: signals do not move V
  } else if (b.false_rate() <= 0.0 || b.alpha() <= 0.0) {
    // V jumps at a signal (to μ̃/Δ when ν = 0) and is otherwise either
    // growing with τ_elap (ν = 0, α > 0, no signal yet) or constant.
    if (p.n_cis > 0) {
      base = std::isinf(iota) ? kInf : -kInf;
    } else if (b.alpha() > 0.0) {
      base = p.last_crawl + iota;
    } else {
      base = key_level_ <= 0.0 ? p.last_crawl : kInf;
    }
  } else {
    base = p.last_crawl + iota - b.beta() * static_cast<double>(signals);
  }
  return std::max(base, hosts_.AllowedFrom(p.host));
}

int64_t SchedulingIndex::SignalsToKeyFor(const Page& p, const policy::PageModel& b,
                                         double t) const {
  const int64_t n = p.n_cis;
  if (!b.signals_informative()) return kMaxSignals;  // GREEDY: V ignores them
  // Without false signals or with α = 0 a signal makes V jump.
  if (b.false_rate() <= 0.0 || b.alpha() <= 0.0) return n;
  // Otherwise V is a function of ι = τ_elap + β·n, and ι_lb = ∞ says it
  // stays below key_level_ for every ι: no count of signals lifts it (most of
  // `semi`'s pages, whose importance is too small ever to be crawled).
  if (!std::isfinite(p.iota_lb)) return kMaxSignals;
  const double due = KeyOf(p, b, n);
  if (!(due > t)) return n;
  // With signals at their mean rate ρ the key x solves
  // x = due − β·ρ·(x − t), i.e. ρ·(x − t) = ρ·(due − t)/(1 + βρ) signals
  // arrive before it; allow for half of them.
  const double rate = b.recall() * b.change_rate() + b.false_rate();
  const double expected = rate * (due - t) / (1.0 + b.beta() * rate);
  const double allowance = std::floor(0.5 * std::min(expected, 1e9));
  return std::min(kMaxSignals, n + static_cast<int64_t>(allowance));
}

// After finding V(t) = v.value < key_level_ with τ_eff growing: V grows at
// most as the growth bound says, so the crossing of key_level_ lies at or
// after τ_eff + CrossingDelay(...). With `solve`, the page is valued there
// and the step repeated: as V is increasing in τ_eff (Lemma 1) every step
// stays below the crossing, and as the bound is exact to first order (its
// slope is dV/dι, Lemma 3) the steps converge like Newton's method from
// below — typically two or three valuations, against ten for a bracketing
// root solve. It stops once V is at least midway between admission_level_ and
// key_level_, so the page is admitted when it next wakes. Stored rounded
// down, so it stays a lower bound; it is kept across crawls, so while Λ
// does not rise a page wakes once per crawl cycle.
void SchedulingIndex::Refine(Page& p, const policy::PageModel& b, double t, const Valuation& v,
                             bool solve) {
  const double level = key_level_;
  if (!(v.growth.later_slope > 0.0) || level >= policy::ValueCeiling(b)) {
    // Constant until the next signal or crawl, or below key_level_ for ever.
    p.iota_lb = std::numeric_limits<float>::infinity();
    return;
  }
  double iota = EffectiveElapsed(p, b, t);
  double value = v.value;
  CandidatePool::Growth growth = v.growth;
  const double close_enough = 0.5 * (key_level_ + admission_level_);
  const int max_terms = policy_.MaxTerms();
  if (solve) ++stats_.refinements;
  for (int step = 0;; ++step) {
    const double delay = CrossingDelay(level - value, growth);
    if (!(delay < kInf)) {
      p.iota_lb = std::numeric_limits<float>::infinity();
      return;
    }
    iota += delay;
    if (!solve || step >= kMaxRefineSteps) break;
    // V at τ_eff = ι with no signal: what V(τ_elap, n) is at that τ_eff.
    const policy::ValueGrowth g = policy::NcisValueGrowth(b, iota, 0, max_terms);
    ++stats_.valuations;
    value = g.value;
    growth = GrowthOf(b, g);
    if (value >= close_enough || !(growth.later_slope > 0.0)) break;
  }
  p.iota_lb = std::max(p.iota_lb, FloorFloat(iota));
}

// A model update (a report's new estimate) moves the crossing of key_level_
// only a little. As V grows with τ_eff (Lemma 1), any ι with V_new(ι) <
// key_level_ is a lower bound on the new crossing: ι_old (the bound under
// the old model) is tried, then ι_old / 2, and Refine steps on from the
// first that is one. Otherwise the bound starts again from 0 and the page
// wakes at once to solve for it, as a new page does.
void SchedulingIndex::CarryBound(Page& p, float old_iota) {
  if (!(old_iota > 0.0f) || std::isinf(old_iota) || needs_rebuild_ || !(key_level_ > 0.0)) return;
  const policy::PageModel b = Belief(p);
  // Only where V is a function of ι between signals (KeyOf's last case,
  // and the cases without signals).
  if (b.signals_informative() && p.n_cis > 0 && (b.false_rate() <= 0.0 || b.alpha() <= 0.0)) {
    return;
  }
  const double shift = EffectiveElapsed(p, b, p.last_crawl);
  for (const double iota : {double{old_iota}, 0.5 * old_iota}) {
    if (!(iota > shift)) return;
    const double at = p.last_crawl + iota - shift;
    ++stats_.valuations;
    const Valuation v = ValueWithGrowth(p, b, at);
    if (v.value < key_level_) {
      ++stats_.carried_bounds;
      Refine(p, b, at, v, /*solve=*/true);
      return;
    }
  }
}

void SchedulingIndex::Upsert(PageId id, const policy::PageParams& params, HostId host,
                             double last_crawl) {
  // Validates (throws on an invalid model, as BruteForceIndex does).
  CheckIndexable(params);
  if (id >= pages_.size()) {
    pages_.resize(static_cast<size_t>(id) + 1, Page{0, 0, 0, 0, 0.0, 0.0f, 0, 0, 0, kAbsent, 0});
  }
  Page& p = pages_[id];
  const bool is_new = p.state == kAbsent;
  if (!is_new) Detach(id);
  const State previous = static_cast<State>(p.state);
  p.importance = static_cast<float>(params.importance);
  p.change_rate = static_cast<float>(params.change_rate);
  p.recall = static_cast<float>(params.recall);
  p.false_rate = static_cast<float>(params.false_rate);
  p.host = host;
  const float old_iota = p.iota_lb;
  p.iota_lb = 0.0f;  // the learnt bound was for the old model
  ForgetBelief(id);
  hosts_.Get(host);
  if (!is_new && previous != kLeased) CarryBound(p, old_iota);
  if (is_new) {
    p.last_crawl = last_crawl;
    p.n_cis = 0;
    ++size_;
    if (size_ >= 2 * 128 * beliefs_.size()) SizeBeliefCache();
    // Λ = 0 from a rebuild of a small index (a shard picked from while its
    // URLs were still being loaded) admits every page: the next pick would
    // wake them all into the pool. Rebuild before it once the pages have
    // doubled since (amortised O(1) an upsert).
    if (level_ <= 0.0 && size_ > MaxCandidates() && size_ >= 2 * size_at_rebuild_) {
      needs_rebuild_ = true;
    }
  }
  if (previous == kLeased) {
    p.state = kLeased;
    return;
  }
  Enqueue(id);
  RecertifyQueued(id);  // its key is for Λ, not for the reserve's floor
}

void SchedulingIndex::Remove(PageId id) {
  if (!Contains(id)) return;
  ForgetBelief(id);
  Detach(id);
  pages_[id].state = kAbsent;
  --size_;
}

void SchedulingIndex::Reserve(size_t pages, size_t hosts) {
  pages_.reserve(pages);
  queue_.Reserve(pages);
  hosts_.Reserve(hosts);
}

bool SchedulingIndex::Contains(PageId id) const {
  return id < pages_.size() && pages_[id].state != kAbsent;
}

void SchedulingIndex::RecordSignals(PageId id, double t, int64_t count) {
  if (!Contains(id) || count <= 0) return;
  Page& p = pages_[id];
  const int64_t before = p.n_cis;
  p.n_cis = static_cast<uint16_t>(std::min(kMaxSignals, before + std::min(count, kMaxSignals)));
  const int64_t added = p.n_cis - before;
  if (added == 0) return;                  // saturated: V does not move
  if (p.state == kPicked) RestorePicks();  // its bound must move with it
  if (p.state == kLeased || p.state == kParked) {
    // Its ι_lb is kept for when it is queued again; where V jumps at a
    // signal, a bound of +∞ ("not before the next signal") ends here.
    const policy::PageModel b = Belief(p);
    if (b.signals_informative() && (b.false_rate() <= 0.0 || b.alpha() <= 0.0)) {
      p.iota_lb = 0.0f;
    }
  }
  if (p.state == kParked) {
    Requeue(id);  // its entry no longer bounds it; keyed for its host
  } else if (p.state == kFollower) {
    Unfollow(id);  // no longer alike its cohort: its own candidate
  } else if (const uint32_t c = p.state == kCandidate ? LedCohort(id) : kNoCohort; c != kNoCohort) {
    HandOverInPool(id, c, candidates_.Find(id));  // the entry before the signal
  }
  if (needs_rebuild_) return;  // it values every page at its count
  if (p.state != kQueued && p.state != kCandidate) return;
  if (p.state == kQueued && !reserve_active_ && p.n_cis <= p.keyed_signals) {
    return;  // its key allows for these signals already
  }
  const policy::PageModel b = Belief(p);
  if (p.state == kCandidate) {
    if (!b.signals_informative()) return;  // GREEDY: V ignores signals
    if (b.false_rate() > 0.0 && b.alpha() > 0.0) {
      // V(τ_eff), τ_eff += β per signal.
      candidates_.Shift(id, b.beta() * static_cast<double>(added));
    } else {
      // V jumped (to μ̃/Δ when ν = 0): unknown until valued again.
      candidates_.Void(id);
    }
    return;
  }
  if (b.signals_informative() && (b.false_rate() <= 0.0 || b.alpha() <= 0.0)) {
    p.iota_lb = 0.0f;  // V jumped; value it again at the next pick
  }
  if (reserve_active_) {
    const double at = std::max(t, reserve_at_);
    if (Recertify(id, at, ValueWithGrowth(id, at))) return;
  }
  ++stats_.signal_rekeys;
  const int64_t keyed = SignalsToKeyFor(p, b, t);
  PushQueued(id, KeyOf(p, b, keyed), keyed);  // the entry before is stale now
}

void SchedulingIndex::RecordCrawl(PageId id, double t) {
  if (!Contains(id)) return;
  Page& p = pages_[id];
  hosts_.Get(p.host).last_crawl = t;
  Detach(id);
  p.last_crawl = t;
  p.n_cis = 0;
  Enqueue(id);
  // V restarts from 0 < the floor; only its later slope may raise G.
  if (reserve_active_) Recertify(id, t, ValueWithGrowth(id, t));
}

void SchedulingIndex::Lease(PageId id) {
  if (!Contains(id) || pages_[id].state == kLeased) return;
  Detach(id);
  pages_[id].state = kLeased;
}

bool SchedulingIndex::LeaseAt(PageId id, double t) {
  if (!Contains(id) || pages_[id].state == kLeased || !hosts_.Allowed(pages_[id].host, t)) {
    return false;
  }
  Lease(id);
  hosts_.Hold(pages_[id].host, t);
  return true;
}

void SchedulingIndex::ReleaseLease(PageId id) {
  if (!Contains(id) || pages_[id].state != kLeased) return;
  Enqueue(id);
  RecertifyQueued(id);  // its key is for Λ, not for the reserve's floor
}

void SchedulingIndex::SetHostDelay(HostId host, double min_delay) {
  const double before = hosts_.AllowedFrom(host);
  hosts_.Get(host).min_delay = min_delay;
  if (hosts_.AllowedFrom(host) < before) needs_rekey_ = true;
}

void SchedulingIndex::BlockHost(HostId host, double until) {
  const double before = hosts_.AllowedFrom(host);
  hosts_.Get(host).blocked_until = until;
  if (hosts_.AllowedFrom(host) < before) needs_rekey_ = true;
}

std::optional<PageView> SchedulingIndex::View(PageId id) const {
  if (!Contains(id)) return std::nullopt;
  const Page& p = pages_[id];
  PageView view;
  view.params.importance = p.importance;
  view.params.change_rate = p.change_rate;
  view.params.recall = p.recall;
  view.params.false_rate = p.false_rate;
  view.host = p.host;
  view.last_crawl = p.last_crawl;
  view.n_cis = p.n_cis;
  view.leased = p.state == kLeased;
  return view;
}

double SchedulingIndex::Value(PageId id, double t) const {
  if (!Contains(id)) return 0.0;
  const Page& p = pages_[id];
  return BeliefValue(Belief(p), policy_, t - p.last_crawl, p.n_cis);
}

void SchedulingIndex::SetPolicy(const policy::CrawlPolicy& policy) {
  policy_ = policy;
  DropReserve();
  for (CachedBelief& slot : beliefs_) slot.page = kNoPage;
  needs_rebuild_ = true;
}

size_t SchedulingIndex::MemoryBytes() const {
  return AllocatedBytes(pages_) + queue_.MemoryBytes() + candidates_.MemoryBytes() +
         reserve_.MemoryBytes() + hosts_.MemoryBytes() +
         beliefs_.capacity() * sizeof(CachedBelief) + CohortBytes() + ParkedBytes();
}

// ---------------------------------------------------------------------------
// Queue and candidates.

void SchedulingIndex::Detach(PageId id) {
  Page& p = pages_[id];
  if (p.state == kQueued) {
    --queued_;  // its entry is stale once the caller changes the state
  } else if (p.state == kCandidate) {
    if (const uint32_t c = LedCohort(id); c != kNoCohort) {
      HandOverInPool(id, c, candidates_.Find(id));
    }
    candidates_.Remove(id);
  } else if (p.state == kFollower) {
    // Its heap entry is stale once the caller changes the state.
    --cohorts_[p.pos].live;
    --followers_;
  } else if (p.state == kPicked) {
    // (A parked page's entry is stale once the caller changes the state.)
    for (size_t i = 0; i < picked_.size(); ++i) {
      if (picked_[i].page == id) {
        picked_.erase(picked_.begin() + i);
        break;
      }
    }
  }
}

void SchedulingIndex::Enqueue(PageId id) {
  const Page& p = pages_[id];
  // A pending rebuild keys every page anew (PushQueued): no key to solve.
  EnqueueAt(id, needs_rebuild_ ? 0.0 : KeyOf(p, Belief(p), p.n_cis));
}

void SchedulingIndex::EnqueueAt(PageId id, double key) {
  pages_[id].state = kQueued;
  ++queued_;
  PushQueued(id, key, pages_[id].n_cis);
}

void SchedulingIndex::Requeue(PageId id) {
  if (reserve_active_) {
    EnqueueAt(id, hosts_.AllowedFrom(pages_[id].host));
  } else {
    Enqueue(id);
  }
}

void SchedulingIndex::PushQueued(PageId id, double key, int64_t keyed_signals) {
  // Any older entry of the page is stale from here on, and every other
  // queued page has one live entry: the rest of the queue is stale. They
  // are dropped when the queue would otherwise grow and they are at least
  // a sixteenth of it, so a compaction (O(queue)) comes after queue/16
  // stale entries were made: amortised O(1) a push; until then they cost
  // only memory the queue has anyway.
  const uint32_t stamp = Restamp(pages_[id], keyed_signals);
  // A pending rebuild (a start-up's load, a new policy) clears the queue
  // and pushes every page with a key for its new level: until then pages
  // are only marked queued.
  if (needs_rebuild_) return;
  const size_t stale = queue_.size() - (queued_ - 1);
  if (queue_.full() && stale >= kMinStaleToCompact && 16 * stale >= queue_.size()) {
    Compact();
  }
  queue_.Push({key, id, stamp});
}

uint32_t SchedulingIndex::Restamp(Page& p, int64_t keyed_signals) {
  p.pos = ++next_stamp_;  // any older entry of the page is stale now
  p.keyed_signals = static_cast<uint16_t>(std::min(keyed_signals, kMaxKeyedSignals));
  return p.pos;
}

void SchedulingIndex::Compact() {
  ++stats_.compactions;
  queue_.Rewrite([this](Queued* e) { return Live(*e); });
}

void SchedulingIndex::AddCandidate(PageId id, double t, const Valuation& v) {
  const HostId host = pages_[id].host;
  if (hosts_.OnePerPick(host) && LedCohort(id) == kNoCohort) {
    JoinParked(id, t, ExactEntry(id, host, t, v));  // behind its host's token
    return;
  }
  pages_[id].state = kCandidate;
  candidates_.Add(id, v.value, t, v.growth, host);
}

void SchedulingIndex::SetLevel(double level) {
  level_ = level;
  key_level_ = level * (1.0 - kKeyMargin);
  admission_level_ = level * (1.0 - kAdmissionMargin);
}

SchedulingIndex::Valuation SchedulingIndex::ValueWithGrowth(PageId id, double t) {
  ++stats_.valuations;
  const Page& p = pages_[id];
  return ValueWithGrowth(p, Belief(p), t);
}

void SchedulingIndex::Wake(PageId id, double t, std::vector<PageId>* deferred) {
  ++stats_.wakeups;
  Page& p = pages_[id];
  if (!hosts_.Allowed(p.host, t)) {
    ++stats_.host_waits;
    // Re-keyed at the host's allowed time (and valued first while the
    // reserve is active: Λ's key may be later than the floor's).
    if (reserve_active_ && Recertify(id, t, ValueWithGrowth(id, t))) return;
    deferred->push_back(id);
    return;
  }
  const policy::PageModel b = Belief(p);
  const Valuation v = ValueWithGrowth(p, b, t);
  ++stats_.valuations;
  if (reserve_active_) {
    reserve_growth_ = std::max(reserve_growth_, v.growth.later_slope);
  }
  if (v.value >= admission_level_) {
    AddCandidate(id, t, v);
    return;
  }
  if (reserve_active_ && !(v.value < FloorBound(t))) AddToReserve(id, t, v);
  Refine(p, b, t, v, /*solve=*/true);
  deferred->push_back(id);
}

void SchedulingIndex::Drain(double t) {
  ReleaseHosts(t);
  deferred_.clear();
  Queued top;
  while (queue_.PopDue(t, &top)) {
    if (!Live(top)) continue;
    // Out of the queue (any duplicate of the entry is stale now); Wake
    // makes it a candidate or it is queued again.
    --queued_;
    pages_[top.page].state = kWaking;
    Wake(top.page, t, &deferred_);
  }
  // Pushed after the loop: a key that rounds back to <= t must not spin.
  for (PageId id : deferred_) Enqueue(id);
  // The next page to wake, in a slot or so: its record (read by Live and
  // Wake) is then in cache.
  if (const Queued* next = queue_.Next()) Prefetch(next->page);
}

// The best k eligible candidates at t. Candidates leave the pool in order of
// their bounds and are valued exactly; the search stops when the best
// exact value left beats every remaining bound. The valued ones go back
// with fresh bounds; the picks stay out, in taken_.
void SchedulingIndex::Select(double t, int k, std::vector<PickedPage>* picked) {
  picked->clear();
  used_hosts_.clear();
  valued_.clear();
  taken_.clear();
  requeue_.clear();
  set_aside_.clear();
  retoken_.clear();
  // Whether a pick may still take a page of `host` in this call.
  auto usable_host = [&](HostId host) {
    return !hosts_.OnePerPick(host) ||
           std::find(used_hosts_.begin(), used_hosts_.end(), host) == used_hosts_.end();
  };
  auto usable = [&](PageId page) { return usable_host(pages_[page].host); };
  auto better = [](PageId a, double va, PageId b, double vb) {
    return BetterPick({a, va}, {b, vb});
  };
  std::vector<Exact>& valued = valued_;
  int best = -1;
  // Whether `page`, just valued `value` at t and out of the pool, joins the
  // cohort of a page alike it and of a lower id (so tied with it) that is
  // out of the pool as well: the best, or a page of a delayed host valued
  // in this call (alike_valued_). It then waits there instead of being
  // valued pick after pick; on a delayed host, instead of opening its
  // host's token at every pick to lose a tie on its id.
  alike_valued_.clear();
  auto joins_alike = [&](PageId page, double value) {
    const Page& p = pages_[page];
    PageId leader = kNoPage;
    if (best >= 0 && value == valued[best].v.value && page > valued[best].page &&
        Alike(p, pages_[valued[best].page])) {
      leader = valued[best].page;
    } else if (hosts_.OnePerPick(p.host)) {
      const auto [it, first] = alike_valued_.try_emplace(LikenessOf(p), Exact{page, {value, {}}});
      if (first || it->second.v.value != value) return false;
      if (page < it->second.page || !usable(it->second.page)) {
        // The new first of its likeness, or the first may not be picked
        // in this call any more (its cohort's next page took its place).
        it->second.page = page;
        return false;
      }
      leader = it->second.page;
    } else {
      return false;
    }
    Follow(page, leader);
    return true;
  };
  // The cohort `leader` led: its next page whose host allows it at t (the
  // ones before it go back to the queue), valued alike, or kNoPage.
  auto hand_over = [&](PageId leader) {
    const uint32_t c = LedCohort(leader);
    if (c == kNoCohort) return kNoPage;
    PageId next = HandOver(leader, c);
    while (next != kNoPage && !hosts_.Allowed(pages_[next].host, t)) {
      requeue_.push_back(next);
      ++stats_.host_waits;
      next = cohorts_[c].leader == next ? HandOver(next, c) : kNoPage;
    }
    return next;
  };
  candidates_.Expire(t);
  // Makes valued[i] the best if it is usable and better; a cohort's leader
  // that is not usable (its host had a pick) hands over to its next
  // follower, valued as it is, which is considered in turn.
  auto consider = [&](size_t i) {
    for (; i < valued.size(); ++i) {
      const Exact& e = valued[i];
      if (usable(e.page)) {
        if (best < 0 || better(e.page, e.v.value, valued[best].page, valued[best].v.value)) {
          best = static_cast<int>(i);
        }
      } else if (const PageId next = hand_over(e.page); next != kNoPage) {
        valued.push_back({next, e.v});  // alike: the same valuation
      }
    }
  };
  while (static_cast<int>(picked->size()) < k) {
    best = -1;
    consider(0);
    CandidatePool::Entry top;
    double bound;
    while (candidates_.Top(t, &top, &bound)) {
      // A host's token bounds pages of any id (they may tie and win on it).
      const PageId rank_id = IsToken(top.page) ? 0 : top.page;
      if (best >= 0 && !better(rank_id, bound, valued[best].page, valued[best].v.value)) {
        break;  // no bound left can beat (or tie and win on id) the best
      }
      if (best >= 0) {
        // The line overshoots the growth bound by its class's rounding;
        // when the growth bound itself cannot win, restart the line from it
        // instead of valuing the page (the line goes below the best unless
        // rounding keeps it above, and then the page is valued).
        const double tight = candidates_.GrowthBound(top, t);
        if (!better(rank_id, tight, valued[best].page, valued[best].v.value)) {
          ++stats_.tightenings;
          const double placed = candidates_.RestartTop(t, tight);
          if (!better(rank_id, placed, valued[best].page, valued[best].v.value)) {
            continue;
          }
          candidates_.Remove(top.page);
        } else {
          candidates_.PopTop();
        }
      } else {
        candidates_.PopTop();
      }
      if (IsToken(top.page)) {
        const HostId host = top.tag;
        if (!usable_host(host)) {
          // Its host had its pick in this call: a new token after it.
          FreeToken(&parked_.find(host)->second);
          retoken_.push_back(host);
          continue;
        }
        PageId page;
        Valuation v;
        const PickedPage floor =
            best >= 0 ? PickedPage{valued[best].page, valued[best].v.value} : kNoFloor;
        if (OpenToken(top, t, floor, &page, &v) && !joins_alike(page, v.value)) {
          valued.push_back({page, v});
          consider(valued.size() - 1);
        }
        continue;
      }
      const PageId id = top.page;
      if (!hosts_.Allowed(top.tag, t)) {  // the page's host
        // Its host was crawled meanwhile: parked until allowed; its
        // cohort's next page takes its place in the pool.
        ++stats_.host_waits;
        if (const uint32_t c = LedCohort(id); c != kNoCohort) {
          HandOverInPool(id, c, top);
          candidates_.Expire(t);  // its line from top.at may have ended
        }
        Park(id, t, top);
        continue;
      }
      if (!used_hosts_.empty() && !usable(id)) {
        // Its host had its pick in this call: it waits, unvalued, with
        // its entry until the next call; its cohort's next page takes its
        // place in the pool.
        if (const uint32_t c = LedCohort(id); c != kNoCohort) {
          HandOverInPool(id, c, top);
          candidates_.Expire(t);
        }
        set_aside_.push_back(top);
        continue;
      }
      const Exact e{id, ValueCandidate(top, t)};
      if (joins_alike(id, e.v.value)) continue;
      valued.push_back(e);
      consider(valued.size() - 1);
    }
    // Hosts none of whose pages could beat this pick's best may have the
    // next pick's.
    for (HostId host : below_floor_) PlaceToken(host, t);
    below_floor_.clear();
    if (best < 0) break;
    const Exact chosen = valued[best];
    if (!alike_valued_.empty()) {
      // It cannot lead a cohort from taken_ (its cohort's next page takes
      // its place below).
      const auto it = alike_valued_.find(LikenessOf(pages_[chosen.page]));
      if (it != alike_valued_.end() && it->second.page == chosen.page) alike_valued_.erase(it);
    }
    picked->push_back({chosen.page, chosen.v.value});
    valued.erase(valued.begin() + best);
    // Its cohort's next page is the best of the rest of it, valued alike.
    if (const PageId next = hand_over(chosen.page); next != kNoPage) {
      valued.push_back({next, chosen.v});
    }
    const HostId host = pages_[chosen.page].host;
    if (hosts_.OnePerPick(host)) used_hosts_.push_back(host);
    taken_.push_back(chosen);
  }
  for (const Exact& e : valued) AddCandidate(e.page, t, e.v);
  for (const CandidatePool::Entry& e : set_aside_) candidates_.AddLike(e.page, e, e.tag);
  for (HostId host : retoken_) {
    const auto it = parked_.find(host);
    if (it == parked_.end() || it->second.token != kNoToken) continue;
    if (hosts_.Allowed(host, t)) {
      PlaceToken(host, t);
    } else {
      WakeHostAt(host, hosts_.AllowedFrom(host));
    }
  }
  for (PageId id : requeue_) Requeue(id);
}

SchedulingIndex::Valuation SchedulingIndex::ValueCandidate(const CandidatePool::Entry& e,
                                                           double t) {
  if (e.at == t && e.value == e.base) {
    // Valued at t already (woken or pulled at t, or picked at t before):
    // the value is exact and the growth an upper bound (rounded up).
    return {e.value, {e.slope, e.rise, e.later_slope}};
  }
  ++stats_.candidate_valuations;
  return ValueWithGrowth(e.page, t);
}

void SchedulingIndex::ReturnTaken(double t) {
  for (const Exact& e : taken_) AddCandidate(e.page, t, e.v);
  taken_.clear();
}

void SchedulingIndex::RestorePicks() {
  for (const Exact& e : picked_) {
    if (pages_[e.page].state == kPicked) AddCandidate(e.page, picked_at_, e.v);
  }
  picked_.clear();
}

void SchedulingIndex::PickExact(double t, int k, std::vector<PickedPage>* picked) {
  last_pick_at_ = std::max(last_pick_at_, t);
  RestorePicks();
  if (needs_rebuild_) Rebuild(t, TargetCandidates());
  if (needs_rekey_) RekeyAll();
  if (reserve_active_ && !(FloorBound(t) < admission_level_)) DropReserve();
  Drain(t);
  if (PoolFlooded()) Rebuild(t, PoolTarget());
  size_t target = 0;  // of the last rebuild in this call
  for (;;) {
    Select(t, k, picked);
    // Every eligible page with V >= Λ is a candidate, so picks down to Λ are
    // the brute-force ones; below Λ a page in the queue might be better,
    // unless the reserve clears it.
    const bool exact =
        level_ <= 0.0 || (static_cast<int>(picked->size()) == k &&
                          (picked->back().value >= level_ ||
                           (reserve_active_ && picked->back().value > ClearBound(t))));
    if (exact) {
      picks_ += picked->size();
      // Drain prefetched the next page to wake; its record has come in
      // meanwhile, so its host (which Wake reads first) can follow.
      if (const Queued* next = queue_.Next()) {
        hosts_.Prefetch(pages_[next->page].host);
      }
      return;
    }
    ReturnTaken(t);
    if (PullReserve(t, k)) continue;
    // 4x the first target if the k-th pick is still short.
    target = target == 0 ? RefillTarget(k) : 4 * target;
    Rebuild(t, target);
  }
}

bool SchedulingIndex::PoolFlooded() const {
  // Twice the size that makes a pick raise Λ (so the pool grew between
  // picks), an eighth of the pages and a rebuild's parallel size (so that
  // picking from the pool and raising over it, 1–2 µs a candidate on one
  // thread, costs more than a rebuild, ~0.15 µs a page on several), and
  // twice the pool a rebuild left with pages tied at Λ (rebuilding would
  // leave them all candidates again).
  return candidates_.size() > std::max({2 * MaxCandidates(PoolTarget()), size_ / 8,
                                        kParallelRebuildPages, flood_above_});
}

std::vector<PickedPage> SchedulingIndex::PickTop(double t, int k) {
  std::vector<PickedPage> picked;
  if (k <= 0) return picked;
  PickExact(t, k, &picked);
  // Picks stay candidates until they are leased or crawled; they are put
  // back in the pool when it is next needed, unless that happened first.
  for (const Exact& e : taken_) pages_[e.page].state = kPicked;
  picked_.swap(taken_);
  picked_at_ = t;
  taken_.clear();
  if (ShouldRaise()) Raise(t);
  return picked;
}

std::vector<SlotPick> SchedulingIndex::PickSlots(const std::vector<double>& slot_times) {
  std::vector<SlotPick> slots;
  slots.reserve(slot_times.size());
  std::vector<PickedPage> picked;
  for (size_t slot = 0; slot < slot_times.size(); ++slot) {
    const double t = slot_times[slot];
    PickExact(t, 1, &picked);  // restores the last PickTop's picks first
    if (picked.empty()) continue;
    // Leased straight from the pool (Lease would find it there).
    const PageId id = picked[0].page;
    taken_.clear();
    pages_[id].state = kLeased;
    hosts_.Hold(pages_[id].host, t);  // only ever later: no re-key
    slots.push_back({id, picked[0].value, t, slot});
    if (ShouldRaise()) Raise(t);
  }
  return slots;
}

}  // namespace shard
}  // namespace recrawl
