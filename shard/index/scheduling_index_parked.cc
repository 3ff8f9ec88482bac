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
  it->second.pages.Push(parked, t, LiveParkedPredicate());
  return {&it->second, added};
}

void SchedulingIndex::AddToken(uint32_t token, HostId host, double t,
                               const ParkedClasses::Envelope& bound) {
  CandidatePool::Entry e;
  e.value = -kNoBound;  // a token is never valued
  e.at = t;
  // Strictly above the bound: where a page's bound ties it, the token
  // comes first in the pool, as its pages may win the tie on id.
  e.base = std::nextafter(bound.base, kNoBound);
  e.slope = CandidatePool::CeilFloat(bound.slope);
  e.rise = CandidatePool::CeilFloat(bound.rise);
  e.later_slope = CandidatePool::CeilFloat(bound.later_slope);
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
  // The token may bound the new entry already; else it is placed anew.
  const PageId token_page = kTokenBase + parked.token;
  if (CandidatePool::BoundsFrom(candidates_.Find(token_page), entry, t)) return;
  candidates_.Remove(token_page);
  AddToken(parked.token, host, t, parked.pages.EnvelopeFrom(t));
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
  ParkedClasses& pages = it->second.pages;
  if (!pages.DropStaleTops(LiveParkedPredicate())) {
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
  AddToken(token, host, t, pages.EnvelopeFrom(t));
}

bool SchedulingIndex::TakeBestParked(HostId host, double t, const PickedPage& floor,
                                     bool gather_alike, CandidatePool::Entry* best,
                                     Valuation* value) {
  ParkedClasses& pages = parked_.find(host)->second.pages;
  auto live = LiveParkedPredicate();
  // In key order until no bound left can beat (or tie) the bar: the better
  // of the floor and the best so far. Each is valued, unless it is alike the
  // best (it has its value); the others go back exact.
  bool found = false;
  auto bar = [&]() {
    return found && BetterPick({best->page, value->value}, floor)
               ? PickedPage{best->page, value->value}
               : floor;
  };
  reparked_.clear();
  pages.DropStaleTops(live);
  while (!pages.empty() && pages.TopBound(t) >= bar().value) {
    ++stats_.parked_scans;
    const CandidatePool::Entry e = pages.PopTop(t, live);
    Valuation v;
    if (found && Alike(pages_[e.page], pages_[best->page])) {
      v = *value;
    } else {
      v = ValueWithGrowth(e.page, t);
      ++stats_.candidate_valuations;
    }
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
  for (const CandidatePool::Entry& e : reparked_) {
    if (gather_alike && found && e.value == value->value &&
        Alike(pages_[e.page], pages_[best->page])) {
      Follow(e.page, best->page);  // tied, and of a higher id
    } else {
      pages.Push(e, t, live);
    }
  }
  return found;
}

bool SchedulingIndex::OpenToken(const CandidatePool::Entry& token, double t,
                                const PickedPage& floor, PageId* best, Valuation* value) {
  const HostId host = token.tag;
  ParkedHost& parked = parked_.find(host)->second;
  FreeToken(&parked);
  if (!hosts_.Allowed(host, t)) {
    WakeHostAt(host, hosts_.AllowedFrom(host));
    return false;
  }
  CandidatePool::Entry entry;
  if (!TakeBestParked(host, t, floor, /*gather_alike=*/true, &entry, value)) {
    if (parked.pages.empty()) {
      parked_.erase(host);  // none live
    } else {
      below_floor_.push_back(host);  // none can beat the floor
    }
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
  it->second.pages.ForEach([this, t](const CandidatePool::Entry& e) {
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
  for (const auto& [host, parked] : parked_) bytes += parked.pages.MemoryBytes();
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
