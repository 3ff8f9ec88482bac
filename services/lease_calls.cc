#include "services/lease_calls.h"

#include <algorithm>
#include <utility>

#include "coordinator/coordinator.h"

namespace recrawl {
namespace services {

bool ShardLeaseCalls::DeliverHeld(int shard) {
  return context_.forwarding->DeliverBeforeLeasing(shard);
}

std::vector<std::optional<std::vector<double>>> ShardLeaseCalls::Peek(
    double time, const std::vector<int>& asked) {
  ShardCalls<PeekTopRequest, PeekTopResponse> calls;
  for (size_t s = 0; s < asked.size(); ++s) {
    if (asked[s] == 0) continue;
    PeekTopRequest& request = AddShardCall(&calls, static_cast<int>(s), addresses_[s])->request;
    request.set_time(time);
    request.set_k(static_cast<uint32_t>(asked[s]));
    request.set_values_only(true);
  }
  CallInParallel(context_.channels, context_.deadline, &ShardAsync::PeekTop, &calls);
  std::vector<std::optional<std::vector<double>>> values(asked.size());
  for (const auto& call : calls) {
    if (!context_.call_ok("PeekTop", call->shard, call->address, call->status)) continue;
    peek_ids_[call->shard] = call->response.peek_id();
    std::vector<double>& v = values[call->shard].emplace();
    for (const Candidate& c : call->response.candidates()) v.push_back(c.value());
  }
  return values;
}

std::vector<std::optional<std::vector<double>>> ShardLeaseCalls::Lease(
    const std::vector<std::vector<double>>& slots) {
  ShardCalls<LeaseRequest, LeaseResponse> calls;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].empty()) continue;
    LeaseRequest& request = AddShardCall(&calls, static_cast<int>(s), addresses_[s])->request;
    for (double t : slots[s]) request.add_slot_times(t);
    request.set_holder(holder_);
    request.set_lease_duration(lease_duration_);
    request.set_request_id((*context_.next_request_id)++);
    // The merge gave the shard these slots for the values of its last peek:
    // it leases those candidates (a peek is named once).
    request.set_peek_id(std::exchange(peek_ids_[s], 0));
  }
  CallInParallel(context_.channels, context_.deadline, &ShardAsync::Lease, &calls);
  std::vector<std::optional<std::vector<double>>> values(slots.size());
  for (const auto& call : calls) {
    const int s = call->shard;
    if (!context_.call_ok("Lease", s, call->address, call->status)) {
      // It may have granted leases nobody will get.
      context_.forwarding->Abandon(s, call->request.request_id());
      continue;
    }
    std::vector<double>& v = values[s].emplace();
    for (const LeasedUrl& l : call->response.leases()) {
      CoordinatorLease& lease = leases_.emplace_back();
      lease.set_url(l.url());
      lease.set_lease_id(coordinator::ClusterLeaseId(s, l.lease_id()));
      lease.set_slot_time(l.slot_time());
      lease.set_deadline(l.deadline());
      lease.set_value(l.value());
      lease.set_shard_index(static_cast<uint32_t>(s));
      v.push_back(l.value());
    }
  }
  return values;
}

std::vector<CoordinatorLease> ShardLeaseCalls::TakeLeases() {
  std::sort(leases_.begin(), leases_.end(),
            [](const CoordinatorLease& a, const CoordinatorLease& b) {
              return a.slot_time() < b.slot_time();
            });
  return std::move(leases_);
}

}  // namespace services
}  // namespace recrawl
