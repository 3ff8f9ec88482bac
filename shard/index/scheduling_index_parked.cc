// SchedulingIndex: candidates parked while their host is held, and the
// hosts' tokens in the pool (scheduling_index.h, Park).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "shard/index/page_value.h"
#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {

namespace {
constexpr double kNoBound = std::numeric_limits<double>::infinity();
}  // namespace

void SchedulingIndex::WakeHostAt(HostId host, double at) {
  host_wakes_.push_back({at, host});
  std::push_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
}

bool SchedulingIndex::LiveParked(const CandidatePool::Entry& e) const {
  const Page& p = pages_[e.page];
  return p.state == kParked && p.pos == e.slot;
}

std::pair<SchedulingIndex::ParkedHost*, bool> SchedulingIndex::AddParked(
    PageId id, double t, const CandidatePool::Entry& entry) {
  Page& p = pages_[id];
  p.state = kParked;
  p.pos = ++next_stamp_;  // any older entry of the page is stale now
  const auto [it, added] = parked_.try_emplace(p.host);
  CandidatePool::Entry parked = entry;
  parked.slot = p.pos;
  it->second.heap.Push(parked, t, LiveParkedPredicate());
  return {&it->second, added};
}

void SchedulingIndex::AddToken(uint32_t token, HostId host, double t, double bound,
                               double later_slope) {
  CandidatePool::Entry e;
  e.value = -kNoBound;  // a token is never valued
  e.at = t;
  // Strictly above the bound: where a page's bound ties it, the token
  // comes first in the pool, as its pages may win the tie on id.
  e.base = std::nextafter(bound, kNoBound);
  e.slope = CandidatePool::CeilFloat(later_slope);
  e.rise = 0.0f;
  e.later_slope = e.slope;
  e.page = kTokenBase + token;
  e.tag = host;
  e.slot = 0;
  candidates_.AddLike(e.page, e, host);
}

void SchedulingIndex::Park(PageId id, double t, const CandidatePool::Entry& entry) {
  const HostId host = pages_[id].host;
  const auto [parked, added] = AddParked(id, t, entry);
  if (parked->token != kNoToken) {
    // The token may not bound the new entry: the host waits for its wake
    // (it is held) and gets a new one then.
    candidates_.Remove(kTokenBase + parked->token);
    FreeToken(parked);
    WakeHostAt(host, hosts_.AllowedFrom(host));
  } else if (added) {
    WakeHostAt(host, hosts_.AllowedFrom(host));
  }
}

CandidatePool::Entry SchedulingIndex::ExactEntry(PageId id, HostId host, double t,
                                                 const Valuation& v) {
  CandidatePool::Entry e;
  e.value = v.value;
  e.at = t;
  e.base = v.value;
  e.slope = CandidatePool::CeilFloat(v.growth.slope);
  e.rise = CandidatePool::CeilFloat(v.growth.rise);
  e.later_slope = CandidatePool::CeilFloat(v.growth.later_slope);
  e.page = id;
  e.tag = host;
  e.slot = 0;
  return e;
}

void SchedulingIndex::JoinParked(PageId id, double t, const CandidatePool::Entry& entry) {
  const HostId host = pages_[id].host;
  if (!hosts_.Allowed(host, t)) {
    Park(id, t, entry);
    return;
  }
  ParkedHost& parked = *AddParked(id, t, entry).first;
  if (parked.token == kNoToken) {
    // A new host, or one whose wake is still due.
    PlaceToken(host, t);
    return;
  }
  // The token, raised to bound the new entry too.
  const PageId token_page = kTokenBase + parked.token;
  const CandidatePool::Entry token = candidates_.Find(token_page);
  const double token_bound = candidates_.GrowthBound(token, t);
  const double bound = std::max(token_bound, candidates_.GrowthBound(entry, t));
  if (token_bound >= bound && token.later_slope >= parked.heap.slope()) {
    return;  // it bounds the entry already (its slope is its later slope)
  }
  candidates_.Remove(token_page);
  AddToken(parked.token, host, t, bound, parked.heap.slope());
}

void SchedulingIndex::ReleaseHosts(double t) {
  while (!host_wakes_.empty() && host_wakes_.front().at <= t) {
    std::pop_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
    const HostId host = host_wakes_.back().host;
    host_wakes_.pop_back();
    const auto it = parked_.find(host);
    if (it == parked_.end() || it->second.token != kNoToken) continue;  // released already
    if (!hosts_.Allowed(host, t)) {                                     // held again, or for longer
      WakeHostAt(host, hosts_.AllowedFrom(host));
      continue;
    }
    PlaceToken(host, t);
  }
}

void SchedulingIndex::PlaceToken(HostId host, double t) {
  const auto it = parked_.find(host);
  ParkedHeap& heap = it->second.heap;
  if (!heap.DropStaleTop(LiveParkedPredicate())) {
    parked_.erase(it);
    return;
  }
  uint32_t token;
  if (free_tokens_.empty()) {
    token = static_cast<uint32_t>(tokens_.size());
    tokens_.push_back({host, 0});
  } else {
    token = free_tokens_.back();
    free_tokens_.pop_back();
    tokens_[token] = {host, 0};
  }
  it->second.token = token;
  AddToken(token, host, t, heap.TopBound(t), heap.slope());
}

bool SchedulingIndex::TakeBestParked(HostId host, double t, CandidatePool::Entry* best,
                                     Valuation* value) {
  ParkedHeap& heap = parked_.find(host)->second.heap;
  auto live = LiveParkedPredicate();
  // In key order, valued until no bound left can beat (or tie) the best;
  // the others valued go back exact.
  bool found = false;
  reparked_.clear();
  while (heap.DropStaleTop(live) && (!found || heap.TopBound(t) >= value->value)) {
    ++stats_.parked_scans;
    const CandidatePool::Entry e = heap.PopTop();
    const Valuation v = ValueWithGrowth(e.page, t);
    ++stats_.candidate_valuations;
    CandidatePool::Entry exact = ExactEntry(e.page, host, t, v);
    exact.slot = e.slot;
    if (!found || BetterPick({e.page, v.value}, {best->page, value->value})) {
      if (found) reparked_.push_back(*best);
      *best = exact;
      *value = v;
      found = true;
    } else {
      reparked_.push_back(exact);
    }
  }
  for (const CandidatePool::Entry& e : reparked_) heap.Push(e, t, live);
  return found;
}

bool SchedulingIndex::OpenToken(const CandidatePool::Entry& token, double t, PageId* best,
                                Valuation* value) {
  const HostId host = token.tag;
  ParkedHost& parked = parked_.find(host)->second;
  FreeToken(&parked);
  if (!hosts_.Allowed(host, t)) {
    WakeHostAt(host, hosts_.AllowedFrom(host));
    return false;
  }
  CandidatePool::Entry entry;
  if (!TakeBestParked(host, t, &entry, value)) {  // none live
    parked_.erase(host);
    return false;
  }
  // The best leaves; the others stay behind a new token.
  *best = entry.page;
  pages_[*best].state = kCandidate;
  PlaceToken(host, t);
  return true;
}

void SchedulingIndex::ReturnParked(HostId host, double t) {
  const auto it = parked_.find(host);
  it->second.heap.ForEach([this, t](const CandidatePool::Entry& e) {
    if (!LiveParked(e)) return;
    ++stats_.parked_scans;
    Page& p = pages_[e.page];
    Refine(p, Belief(p), t, ValueWithGrowth(e.page, t), /*solve=*/true);
    Enqueue(e.page);
  });
  parked_.erase(it);
}

void SchedulingIndex::DropParked() {
  parked_.clear();
  host_wakes_.clear();
  tokens_.clear();
  free_tokens_.clear();
}

void SchedulingIndex::RewakeParkedHosts() {
  for (const auto& [host, parked] : parked_) {
    if (parked.token == kNoToken) WakeHostAt(host, hosts_.AllowedFrom(host));
  }
}

size_t SchedulingIndex::ParkedBytes() const {
  size_t bytes = parked_.capacity() * (sizeof(HostId) + sizeof(ParkedHost) + 1) +
                 host_wakes_.capacity() * sizeof(HostWake) + tokens_.capacity() * sizeof(Token) +
                 free_tokens_.capacity() * sizeof(uint32_t);
  for (const auto& [host, parked] : parked_) bytes += parked.heap.MemoryBytes();
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
