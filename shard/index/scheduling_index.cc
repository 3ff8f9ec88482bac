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
// Candidates are admitted slightly below Λ, so that rounding in V (relative
// error ~1e-13, crawl_value.h) cannot keep a page with computed V ≥ Λ out.
constexpr double kAdmissionMargin = 1e-6;
// Relative slack on upper bounds, for the same reason.
constexpr double kBoundSlack = 1e-9;

// The largest float not above x (a lower bound stays a lower bound).
float FloorFloat(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x) {
    f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  }
  return f;
}

}  // namespace

SchedulingIndex::SchedulingIndex(const policy::CrawlPolicy& policy)
    : SchedulingIndex(policy, Options()) {}

SchedulingIndex::SchedulingIndex(const policy::CrawlPolicy& policy,
                                 const Options& options)
    : policy_(policy), options_(options) {}

policy::PageModel SchedulingIndex::Belief(const Page& p) const {
  policy::PageParams params;
  params.importance = p.importance;
  params.change_rate = p.change_rate;
  params.recall = p.recall;
  params.false_rate = p.false_rate;
  return policy_.Belief(policy::PageModel::Create(params).value());
}

double SchedulingIndex::PageValue(const Page& p, const policy::PageModel& b,
                                  double t) const {
  return BeliefValue(b, policy_, t - p.last_crawl, p.n_cis);
}

// τ_eff = τ_elap + β n for pages whose V is a function of τ_eff; τ_elap for
// the others (no informative signals, or ν = 0 before the first signal).
double SchedulingIndex::EffectiveElapsed(const Page& p,
                                         const policy::PageModel& b,
                                         double t) const {
  const double tau = std::max(t - p.last_crawl, 0.0);
  if (!b.signals_informative() || p.n_cis == 0) return tau;
  return tau + b.beta() * static_cast<double>(p.n_cis);
}

// Upper bound on dV/dt from now until the next signal or crawl. Lemma 4's
// identity w'(ι) = e^{−αι} ψ'(ι) holds term by term in the NCIS sum, so
//   dV/dι = μ̃ α e^{−αι} ψ_J(ι) <= μ̃ α e^{−αι} ι
// for the exact value and for every G-NCIS-APPROX-J (ψ_J <= ψ <= ι, an
// interval never outlasts its threshold). Since τ_eff grows at rate 1, for
// s >= ι the slope is at most μ̃ max_{s>=ι} α s e^{−αs}, which is
// μ̃ αι e^{−αι} when αι >= 1 and μ̃/e otherwise. Zero where V is constant
// between signals (α = 0, or ν = 0 after a signal).
double SchedulingIndex::SlopeBound(const Page& p, const policy::PageModel& b,
                                   double t) const {
  if (b.change_rate() <= 0.0 || b.importance() <= 0.0) return 0.0;
  double alpha;
  if (!b.signals_informative()) {
    alpha = b.change_rate();
  } else {
    alpha = b.alpha();
    if (alpha <= 0.0) return 0.0;
    if (b.false_rate() <= 0.0 && p.n_cis > 0) return 0.0;
  }
  const double x = alpha * EffectiveElapsed(p, b, t);
  const double shape = x >= 1.0 ? x * std::exp(-x) : std::exp(-1.0);
  return b.importance() * shape * (1.0 + kBoundSlack);
}

// A lower bound on the first time the page is eligible with V >= adm_:
// d = last_crawl + ι_lb − β n (DESIGN.md §Index), and never before its host
// allows it.
double SchedulingIndex::KeyOf(const Page& p, const policy::PageModel& b) const {
  const double iota = p.iota_lb;
  double base;
  if (b.change_rate() <= 0.0 || b.importance() <= 0.0) {
    base = adm_ <= 0.0 ? p.last_crawl : kInf;  // V = 0 forever
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
      base = adm_ <= 0.0 ? p.last_crawl : kInf;
    }
  } else {
    base = p.last_crawl + iota - b.beta() * static_cast<double>(p.n_cis);
  }
  return std::max(base, hosts_.AllowedFrom(p.host));
}

// After finding V(t) = value < adm_: V needs at least (adm_ − value)/slope
// more τ_eff to reach adm_.
void SchedulingIndex::Refine(Page& p, const policy::PageModel& b, double t,
                             double value, double slope) {
  if (!(slope > 0.0)) {
    p.iota_lb = std::numeric_limits<float>::infinity();
    return;
  }
  const double next = EffectiveElapsed(p, b, t) + (adm_ - value) / slope;
  p.iota_lb = std::max(p.iota_lb, FloorFloat(next));
}

void SchedulingIndex::Upsert(PageId id, const policy::PageParams& params,
                             HostId host, double last_crawl) {
  // Validates (throws on an invalid model, as BruteForceIndex does).
  policy::PageModel::Create(params).value();
  if (id >= pages_.size()) {
    pages_.resize(static_cast<size_t>(id) + 1, Page{0, 0, 0, 0, 0.0, 0.0f, 0,
                                                    0, 0, kAbsent});
  }
  Page& p = pages_[id];
  const bool is_new = p.state == kAbsent;
  if (!is_new) Detach(id);
  const State previous = p.state;
  p.importance = static_cast<float>(params.importance);
  p.change_rate = static_cast<float>(params.change_rate);
  p.recall = static_cast<float>(params.recall);
  p.false_rate = static_cast<float>(params.false_rate);
  p.host = host;
  p.iota_lb = 0.0f;  // the learnt bound was for the old model
  hosts_.Get(host);
  if (is_new) {
    p.last_crawl = last_crawl;
    p.n_cis = 0;
    ++size_;
  }
  if (previous == kLeased) {
    p.state = kLeased;
  } else {
    Enqueue(id);
  }
}

void SchedulingIndex::Remove(PageId id) {
  if (!Contains(id)) return;
  Detach(id);
  pages_[id].state = kAbsent;
  --size_;
}

bool SchedulingIndex::Contains(PageId id) const {
  return id < pages_.size() && pages_[id].state != kAbsent;
}

void SchedulingIndex::RecordSignal(PageId id, double) {
  if (!Contains(id)) return;
  Page& p = pages_[id];
  if (p.n_cis < std::numeric_limits<uint32_t>::max()) ++p.n_cis;
  if (p.state == kCandidate) {
    Candidate& c = candidates_[p.pos];
    c.at = -kInf;
    c.slope = kInf;
    return;
  }
  if (p.state != kQueued) return;
  const policy::PageModel b = Belief(p);
  if (b.signals_informative() &&
      (b.false_rate() <= 0.0 || b.alpha() <= 0.0)) {
    p.iota_lb = 0.0f;  // V jumped; re-evaluate at the next pick
  }
  HeapUpdate(id, KeyOf(p, b));
}

void SchedulingIndex::RecordCrawl(PageId id, double t) {
  if (!Contains(id)) return;
  Page& p = pages_[id];
  hosts_.Get(p.host).last_crawl = t;
  Detach(id);
  p.last_crawl = t;
  p.n_cis = 0;
  Enqueue(id);
}

void SchedulingIndex::Lease(PageId id) {
  if (!Contains(id) || pages_[id].state == kLeased) return;
  Detach(id);
  pages_[id].state = kLeased;
}

void SchedulingIndex::ReleaseLease(PageId id) {
  if (!Contains(id) || pages_[id].state != kLeased) return;
  Enqueue(id);
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

double SchedulingIndex::Value(PageId id, double t) const {
  if (!Contains(id)) return 0.0;
  const Page& p = pages_[id];
  return PageValue(p, Belief(p), t);
}

void SchedulingIndex::SetPolicy(const policy::CrawlPolicy& policy) {
  policy_ = policy;
  needs_rebuild_ = true;
}

size_t SchedulingIndex::MemoryBytes() const {
  return pages_.capacity() * sizeof(Page) +
         heap_keys_.capacity() * sizeof(double) +
         heap_ids_.capacity() * sizeof(PageId) +
         candidates_.capacity() * sizeof(Candidate) + hosts_.MemoryBytes();
}

// ---------------------------------------------------------------------------
// Queue and candidates.

void SchedulingIndex::Detach(PageId id) {
  Page& p = pages_[id];
  if (p.state == kQueued) {
    HeapErase(id);
  } else if (p.state == kCandidate) {
    RemoveCandidate(id);
  }
}

void SchedulingIndex::Enqueue(PageId id) {
  Page& p = pages_[id];
  p.state = kQueued;
  HeapPush(id, KeyOf(p, Belief(p)));
}

void SchedulingIndex::AddCandidate(PageId id, double value, double t,
                                   double slope, double ceiling) {
  Page& p = pages_[id];
  p.state = kCandidate;
  p.pos = static_cast<uint32_t>(candidates_.size());
  candidates_.push_back({id, value, t, slope, ceiling});
}

void SchedulingIndex::RemoveCandidate(PageId id) {
  const uint32_t i = pages_[id].pos;
  candidates_[i] = candidates_.back();
  pages_[candidates_[i].page].pos = i;
  candidates_.pop_back();
}

double SchedulingIndex::UpperBound(const Candidate& c, double t) const {
  if (c.at == t) return c.value;
  const double grown = c.value + c.slope * (t - c.at);
  return std::min(c.ceiling * (1.0 + kBoundSlack), grown);
}

void SchedulingIndex::Wake(PageId id, double t,
                           std::vector<PageId>* deferred) {
  ++stats_.wakeups;
  Page& p = pages_[id];
  if (!hosts_.Allowed(p.host, t)) {
    deferred->push_back(id);  // re-keyed at the host's allowed time
    return;
  }
  const policy::PageModel b = Belief(p);
  const double value = PageValue(p, b, t);
  ++stats_.evaluations;
  const double slope = SlopeBound(p, b, t);
  if (value >= adm_) {
    AddCandidate(id, value, t, slope, policy::ValueCeiling(b));
    return;
  }
  Refine(p, b, t, value, slope);
  deferred->push_back(id);
}

void SchedulingIndex::Drain(double t) {
  std::vector<PageId> deferred;
  while (!heap_keys_.empty() && heap_keys_[0] <= t) Wake(HeapPop(), t, &deferred);
  // Pushed after the loop: a key that rounds back to <= t must not spin.
  for (PageId id : deferred) Enqueue(id);
}

// The best k eligible candidates at t. A candidate's exact value is computed
// only while its upper bound can still beat the best exact value found.
std::vector<PickedPage> SchedulingIndex::Select(double t, int k) {
  std::vector<PickedPage> picked;
  std::vector<HostId> used_hosts;
  std::vector<PageId> chosen;
  while (static_cast<int>(picked.size()) < k) {
    int best = -1;
    double best_ub = 0.0;
    bool best_exact = false;
    for (size_t i = 0; i < candidates_.size();) {
      const Candidate& c = candidates_[i];
      const Page& p = pages_[c.page];
      if (!hosts_.Allowed(p.host, t)) {
        // Its host was crawled meanwhile: back to the queue until allowed
        // (its ι_lb is still a lower bound at this level).
        const PageId id = c.page;
        RemoveCandidate(id);
        Enqueue(id);
        continue;
      }
      ++i;
      if (std::find(chosen.begin(), chosen.end(), c.page) != chosen.end() ||
          (hosts_.OnePerPick(p.host) &&
           std::find(used_hosts.begin(), used_hosts.end(), p.host) !=
               used_hosts.end())) {
        continue;
      }
      const double ub = UpperBound(c, t);
      const bool exact = c.at == t;
      // Highest bound first; on equal bounds an inexact one (it might tie
      // and win on id), then the lower page id, as BetterPick.
      const bool better =
          best < 0 || ub > best_ub ||
          (ub == best_ub &&
           ((!exact && best_exact) ||
            (exact == best_exact && c.page < candidates_[best].page)));
      if (better) {
        best = static_cast<int>(i - 1);
        best_ub = ub;
        best_exact = exact;
      }
    }
    if (best < 0) break;
    Candidate& c = candidates_[best];
    if (!best_exact) {
      const Page& p = pages_[c.page];
      const policy::PageModel b = Belief(p);
      c.value = PageValue(p, b, t);
      c.at = t;
      c.slope = SlopeBound(p, b, t);
      ++stats_.evaluations;
      continue;
    }
    picked.push_back({c.page, c.value});
    chosen.push_back(c.page);
    const HostId host = pages_[c.page].host;
    if (hosts_.OnePerPick(host)) used_hosts.push_back(host);
  }
  return picked;
}

std::vector<PickedPage> SchedulingIndex::PickTop(double t, int k) {
  if (k <= 0) return {};
  if (needs_rebuild_) Rebuild(t, options_.target_candidates);
  if (needs_rekey_) RekeyAll();
  Drain(t);
  int target = options_.target_candidates;
  for (;;) {
    std::vector<PickedPage> picked = Select(t, k);
    // Every eligible page with V >= Λ is a candidate, so picks down to Λ are
    // the brute-force ones; below Λ a page in the queue might be better.
    const bool exact = level_ <= 0.0 || (static_cast<int>(picked.size()) == k &&
                                         picked.back().value >= level_);
    if (exact) {
      if (static_cast<int>(candidates_.size()) > options_.max_candidates) {
        Raise(t);
      }
      return picked;
    }
    target = std::max(target, k) * 4;
    Rebuild(t, target);
  }
}

// Evaluates every page at t and sets Λ to the target-th largest value: the
// only O(m) step, needed at start, after SetPolicy and when Λ must come down.
void SchedulingIndex::Rebuild(double t, int target) {
  ++stats_.rebuilds;
  needs_rebuild_ = false;
  needs_rekey_ = false;
  candidates_.clear();
  heap_keys_.clear();
  heap_ids_.clear();
  std::vector<double> values(pages_.size(), 0.0);
  std::vector<double> ranked;
  ranked.reserve(size_);
  for (PageId id = 0; id < pages_.size(); ++id) {
    Page& p = pages_[id];
    if (p.state == kAbsent) continue;
    if (p.state == kLeased) {
      p.iota_lb = 0.0f;  // its bound was for the old level
      continue;
    }
    values[id] = PageValue(p, Belief(p), t);
    ++stats_.evaluations;
    ranked.push_back(values[id]);
  }
  if (static_cast<int>(ranked.size()) <= target) {
    level_ = 0.0;
  } else {
    std::nth_element(ranked.begin(), ranked.begin() + (target - 1),
                     ranked.end(), std::greater<double>());
    level_ = ranked[target - 1];
  }
  adm_ = level_ * (1.0 - kAdmissionMargin);
  for (PageId id = 0; id < pages_.size(); ++id) {
    Page& p = pages_[id];
    if (p.state == kAbsent || p.state == kLeased) continue;
    const policy::PageModel b = Belief(p);
    const double slope = SlopeBound(p, b, t);
    p.iota_lb = 0.0f;
    if (values[id] >= adm_ && hosts_.Allowed(p.host, t)) {
      AddCandidate(id, values[id], t, slope, policy::ValueCeiling(b));
      continue;
    }
    if (values[id] < adm_) Refine(p, b, t, values[id], slope);
    p.state = kQueued;
    p.pos = static_cast<uint32_t>(heap_keys_.size());
    heap_keys_.push_back(KeyOf(p, b));
    heap_ids_.push_back(id);
  }
  for (size_t i = heap_keys_.size() / 2; i-- > 0;) SiftDown(static_cast<uint32_t>(i));
}

// Too many candidates: raise Λ to the target-th largest known lower bound
// (so at least that many candidates stay) and send back to the queue those
// that provably fell below it. Keys stay valid: crossing a higher level
// cannot happen earlier.
void SchedulingIndex::Raise(double t) {
  ++stats_.raises;
  std::vector<double> lows;
  lows.reserve(candidates_.size());
  for (const Candidate& c : candidates_) lows.push_back(c.value);
  const int target = options_.target_candidates;
  std::nth_element(lows.begin(), lows.begin() + (target - 1), lows.end(),
                   std::greater<double>());
  const double level = lows[target - 1];
  if (!(level > level_)) return;
  level_ = level;
  adm_ = level_ * (1.0 - kAdmissionMargin);
  for (size_t i = 0; i < candidates_.size();) {
    Candidate& c = candidates_[i];
    Page& p = pages_[c.page];
    if (UpperBound(c, t) >= adm_ && c.at != t) {
      const policy::PageModel b = Belief(p);
      c.value = PageValue(p, b, t);
      c.at = t;
      c.slope = SlopeBound(p, b, t);
      ++stats_.evaluations;
    }
    if (c.value >= adm_) {
      ++i;
      continue;
    }
    // V(c.at) = c.value exactly and no signal since (else the bound is
    // +∞ and it was just re-evaluated), so refine from there.
    const PageId id = c.page;
    const policy::PageModel b = Belief(p);
    Refine(p, b, c.at, c.value, c.slope);
    RemoveCandidate(id);
    Enqueue(id);
  }
}

void SchedulingIndex::RekeyAll() {
  needs_rekey_ = false;
  for (size_t i = 0; i < heap_ids_.size(); ++i) {
    heap_keys_[i] = KeyOf(pages_[heap_ids_[i]], Belief(pages_[heap_ids_[i]]));
  }
  for (size_t i = heap_keys_.size() / 2; i-- > 0;) SiftDown(static_cast<uint32_t>(i));
}

// ---------------------------------------------------------------------------
// Binary min-heap with positions.

void SchedulingIndex::HeapSet(uint32_t i, double key, PageId id) {
  heap_keys_[i] = key;
  heap_ids_[i] = id;
  pages_[id].pos = i;
}

void SchedulingIndex::SiftUp(uint32_t i) {
  const double key = heap_keys_[i];
  const PageId id = heap_ids_[i];
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (!(key < heap_keys_[parent])) break;
    HeapSet(i, heap_keys_[parent], heap_ids_[parent]);
    i = parent;
  }
  HeapSet(i, key, id);
}

void SchedulingIndex::SiftDown(uint32_t i) {
  const uint32_t n = static_cast<uint32_t>(heap_keys_.size());
  const double key = heap_keys_[i];
  const PageId id = heap_ids_[i];
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_keys_[child + 1] < heap_keys_[child]) ++child;
    if (!(heap_keys_[child] < key)) break;
    HeapSet(i, heap_keys_[child], heap_ids_[child]);
    i = child;
  }
  HeapSet(i, key, id);
}

void SchedulingIndex::HeapPush(PageId id, double key) {
  heap_keys_.push_back(key);
  heap_ids_.push_back(id);
  SiftUp(static_cast<uint32_t>(heap_keys_.size() - 1));
}

void SchedulingIndex::HeapUpdate(PageId id, double key) {
  const uint32_t i = pages_[id].pos;
  const double old = heap_keys_[i];
  heap_keys_[i] = key;
  if (key < old) {
    SiftUp(i);
  } else {
    SiftDown(i);
  }
}

void SchedulingIndex::HeapErase(PageId id) {
  const uint32_t i = pages_[id].pos;
  const uint32_t last = static_cast<uint32_t>(heap_keys_.size() - 1);
  if (i != last) {
    const double old = heap_keys_[i];
    HeapSet(i, heap_keys_[last], heap_ids_[last]);
    heap_keys_.pop_back();
    heap_ids_.pop_back();
    if (heap_keys_[i] < old) {
      SiftUp(i);
    } else {
      SiftDown(i);
    }
    return;
  }
  heap_keys_.pop_back();
  heap_ids_.pop_back();
}

PageId SchedulingIndex::HeapPop() {
  const PageId top = heap_ids_[0];
  HeapErase(top);
  return top;
}

}  // namespace shard
}  // namespace recrawl
