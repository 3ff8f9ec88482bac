// SchedulingIndex: candidates parked while their host is held
// (scheduling_index.h, Park).
#include <algorithm>
#include <functional>
#include <vector>

#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {

void SchedulingIndex::Park(PageId id, const CandidatePool::Entry& entry) {
  Page& p = pages_[id];
  p.state = kParked;
  p.pos = ++next_stamp_;  // any older entry of the page is stale now
  std::vector<CandidatePool::Entry>& parked = parked_[p.host];
  if (parked.empty()) {
    host_wakes_.push_back({hosts_.AllowedFrom(p.host), p.host});
    std::push_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
  }
  parked.push_back(entry);
  parked.back().slot = p.pos;
}

void SchedulingIndex::ReleaseHosts(double t) {
  while (!host_wakes_.empty() && host_wakes_.front().at <= t) {
    std::pop_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
    const HostId host = host_wakes_.back().host;
    host_wakes_.pop_back();
    const auto it = parked_.find(host);
    if (it == parked_.end()) continue;  // released already
    if (!hosts_.Allowed(host, t)) {     // held again, or for longer
      host_wakes_.push_back({hosts_.AllowedFrom(host), host});
      std::push_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
      continue;
    }
    for (const CandidatePool::Entry& e : it->second) {
      Page& p = pages_[e.page];
      if (p.state != kParked || p.pos != e.slot) continue;  // stale
      p.state = kCandidate;
      candidates_.AddLike(e.page, e, host);
    }
    parked_.erase(it);
  }
}

void SchedulingIndex::DropParked() {
  parked_.clear();
  host_wakes_.clear();
}

void SchedulingIndex::RewakeParkedHosts() {
  for (const auto& [host, parked] : parked_) {
    host_wakes_.push_back({hosts_.AllowedFrom(host), host});
    std::push_heap(host_wakes_.begin(), host_wakes_.end(), std::greater<HostWake>());
  }
}

size_t SchedulingIndex::ParkedBytes() const {
  size_t bytes =
      parked_.capacity() * (sizeof(HostId) + sizeof(std::vector<CandidatePool::Entry>) + 1) +
      host_wakes_.capacity() * sizeof(HostWake);
  for (const auto& [host, parked] : parked_) {
    bytes += parked.capacity() * sizeof(CandidatePool::Entry);
  }
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
