#include "shard/lease_request_log.h"

#include <utility>

namespace recrawl {
namespace shard {

bool LeaseRequestLog::Released(uint64_t request_id) const {
  auto it = entries_.find(request_id);
  return it != entries_.end() && it->second.released;
}

void LeaseRequestLog::Record(uint64_t request_id, uint64_t lease_id) {
  Touch(request_id).leases.push_back(lease_id);
  ++leases_;
  Trim();
}

std::vector<uint64_t> LeaseRequestLog::Release(uint64_t request_id) {
  Entry& entry = Touch(request_id);
  entry.released = true;
  leases_ -= entry.leases.size();
  std::vector<uint64_t> leases = std::move(entry.leases);
  entry.leases = {};
  Trim();
  return leases;
}

LeaseRequestLog::Entry& LeaseRequestLog::Touch(uint64_t request_id) {
  auto [it, inserted] = entries_.try_emplace(request_id);
  if (inserted) order_.push_back(request_id);
  return it->second;
}

void LeaseRequestLog::Trim() {
  while (order_.size() > 1 && (order_.size() > kMaxRequests || leases_ > kMaxLeases)) {
    auto it = entries_.find(order_.front());
    leases_ -= it->second.leases.size();
    entries_.erase(it);
    order_.pop_front();
  }
}

}  // namespace shard
}  // namespace recrawl
