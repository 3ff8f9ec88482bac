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

SchedulingIndex::ParkedHost& SchedulingIndex::AddParked(PageId id,
                                                        const CandidatePool::Entry& entry) {
  Page& p = pages_[id];
  p.state = kParked;
  p.pos = ++next_stamp_;  // any older entry of the page is stale now
  ParkedHost& parked = parked_[p.host];
  parked.entries.push_back(entry);
  parked.entries.back().slot = p.pos;
  return parked;
}

void SchedulingIndex::AddToken(uint32_t token, HostId host, double t, double bound,
                               double later_slope) {
  CandidatePool::Entry e;
  e.value = -kNoBound;  // a token is never valued
  e.at = t;
  // Strictly above the bound: where a page's bound ties it, the token
  // comes first in the pool, as its pages may win the tie on id.
  e.base = std::nextafter(bound, kNoBound);
  e.slope = static_cast<float>(later_slope);
  e.rise = 0.0f;
  e.later_slope = e.slope;
  e.page = kTokenBase + token;
  e.tag = host;
  e.slot = 0;
  candidates_.AddLike(e.page, e, host);
}

void SchedulingIndex::Park(PageId id, const CandidatePool::Entry& entry) {
  const HostId host = pages_[id].host;
  ParkedHost& parked = AddParked(id, entry);
  if (parked.token != kNoToken) {
    // The token may not bound the new entry: the host waits for its wake
    // (it is held) and gets a new one then.
    candidates_.Remove(kTokenBase + parked.token);
    free_tokens_.push_back(parked.token);
    parked.token = kNoToken;
    WakeHostAt(host, hosts_.AllowedFrom(host));
  } else if (parked.entries.size() == 1) {  // the host's first
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
    Park(id, entry);
    return;
  }
  ParkedHost& parked = AddParked(id, entry);
  if (parked.token == kNoToken) {
    // A new host, or one whose wake is still due: its token bounds all
    // its entries (a pass over them, once a hold).
    PlaceToken(host, t, kNoBound);
    return;
  }
  // The token, raised to bound the new entry too.
  const PageId token_page = kTokenBase + parked.token;
  CandidatePool::Entry token = candidates_.Find(token_page);
  const double token_bound = candidates_.GrowthBound(token, t);
  const double bound = std::max(token_bound, candidates_.GrowthBound(entry, t));
  if (token_bound >= bound && token.later_slope >= entry.later_slope) {
    return;  // it bounds the entry already (its slope is its later slope)
  }
  candidates_.Remove(token_page);
  AddToken(parked.token, host, t, bound, std::max(token.later_slope, entry.later_slope));
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
    PlaceToken(host, t, kNoBound);
  }
}

void SchedulingIndex::PlaceToken(HostId host, double t, double bound) {
  const auto it = parked_.find(host);
  std::vector<CandidatePool::Entry>& entries = it->second.entries;
  // Drops the stale entries; the live ones' fastest later slope bounds the
  // slope of each from t on (dV/dt <= later_slope, candidate_pool.h).
  double later_slope = 0.0;
  double largest = -kNoBound;
  size_t kept = 0;
  for (const CandidatePool::Entry& e : entries) {
    const Page& p = pages_[e.page];
    if (p.state != kParked || p.pos != e.slot) continue;
    ++stats_.parked_scans;
    later_slope = std::max<double>(later_slope, e.later_slope);
    if (!(bound < kNoBound)) largest = std::max(largest, candidates_.GrowthBound(e, t));
    entries[kept++] = e;
  }
  entries.resize(kept);
  if (kept == 0) {
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
  AddToken(token, host, t, bound < kNoBound ? bound : largest, later_slope);
}

int64_t SchedulingIndex::BestParked(HostId host, double t, Valuation* value, double* rest) {
  // The live entries by their bound at t, largest first (a max-heap of
  // positions), valued until no bound left can beat the best.
  std::vector<CandidatePool::Entry>& entries = parked_.find(host)->second.entries;
  std::vector<std::pair<double, uint32_t>> order;
  order.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    const CandidatePool::Entry& e = entries[i];
    const Page& p = pages_[e.page];
    if (p.state != kParked || p.pos != e.slot) continue;
    ++stats_.parked_scans;
    order.push_back({candidates_.GrowthBound(e, t), i});
  }
  auto lower = [this, &entries](const std::pair<double, uint32_t>& a,
                                const std::pair<double, uint32_t>& b) {
    return BetterPick({entries[b.second].page, b.first}, {entries[a.second].page, a.first});
  };
  std::make_heap(order.begin(), order.end(), lower);
  int64_t chosen = -1;
  *rest = -kNoBound;
  while (!order.empty()) {
    const auto [bound, i] = order.front();
    if (chosen >= 0 &&
        !BetterPick({entries[i].page, bound}, {entries[chosen].page, value->value})) {
      break;
    }
    std::pop_heap(order.begin(), order.end(), lower);
    order.pop_back();
    CandidatePool::Entry& e = entries[i];
    const Valuation v = ValueWithGrowth(e.page, t);
    ++stats_.candidate_valuations;
    const uint32_t stamp = e.slot;
    e = ExactEntry(e.page, host, t, v);  // exact at t from now on
    e.slot = stamp;
    if (chosen < 0 || BetterPick({e.page, v.value}, {entries[chosen].page, value->value})) {
      if (chosen >= 0) *rest = std::max(*rest, value->value);
      chosen = i;
      *value = v;
    } else {
      *rest = std::max(*rest, v.value);
    }
  }
  if (!order.empty()) *rest = std::max(*rest, order.front().first);
  return chosen;
}

bool SchedulingIndex::OpenToken(const CandidatePool::Entry& token, double t, PageId* best,
                                Valuation* value) {
  const HostId host = token.tag;
  ParkedHost& parked = parked_.find(host)->second;
  free_tokens_.push_back(parked.token);
  parked.token = kNoToken;
  if (!hosts_.Allowed(host, t)) {
    WakeHostAt(host, hosts_.AllowedFrom(host));
    return false;
  }
  double rest;
  const int64_t chosen = BestParked(host, t, value, &rest);
  if (chosen < 0) {  // none live
    parked_.erase(host);
    return false;
  }
  // The chosen page leaves; the others stay behind a token bounded by the
  // largest bound left and the exact values not chosen.
  std::vector<CandidatePool::Entry>& entries = parked.entries;
  *best = entries[chosen].page;
  pages_[*best].state = kCandidate;
  entries[chosen] = entries.back();
  entries.pop_back();
  if (entries.empty()) {
    parked_.erase(host);
  } else {
    PlaceToken(host, t, rest);
  }
  return true;
}

void SchedulingIndex::ReturnParked(HostId host, double t) {
  const auto it = parked_.find(host);
  for (const CandidatePool::Entry& e : it->second.entries) {
    Page& p = pages_[e.page];
    if (p.state != kParked || p.pos != e.slot) continue;
    ++stats_.parked_scans;
    Refine(p, Belief(p), t, ValueWithGrowth(e.page, t), /*solve=*/true);
    Enqueue(e.page);
  }
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
  for (const auto& [host, parked] : parked_) {
    bytes += parked.entries.capacity() * sizeof(CandidatePool::Entry);
  }
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
