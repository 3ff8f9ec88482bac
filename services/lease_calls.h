// The shard calls of one fetcher's Lease (coordinator::LeaseShards) over
// gRPC: each step calls the shards concerned in parallel with the
// request's deadline; the leases granted are collected with cluster lease
// ids. A shard's Lease call names the shard's peek before it in this
// request, for whose values the merge gave it the slots. A Lease call that
// fails is abandoned at its shard (ShardForwarding sends the release), so
// that whatever it granted is released.
//
// One object per fetcher request; not thread-safe.
#ifndef RECRAWL_SERVICES_LEASE_CALLS_H_
#define RECRAWL_SERVICES_LEASE_CALLS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/lease_rounds.h"
#include "proto/coordinator.pb.h"
#include "services/coordinator_shards.h"
#include "services/shard_forwarding.h"

namespace recrawl {
namespace services {

class ShardLeaseCalls : public coordinator::LeaseShards {
 public:
  struct Context {
    ShardChannels* channels;
    ShardForwarding* forwarding;
    // Real seconds each call may take.
    double deadline;
    // The next Lease request id (LeaseRequest.request_id).
    std::atomic<uint64_t>* next_request_id;
    // Judges a finished call: true when OK; else logs it and takes the
    // shard out if it is down.
    std::function<bool(const char* method, int shard, const std::string& address,
                       const grpc::Status& status)>
        call_ok;
  };

  // addresses[s] is shard s's; `lease_duration` goes with every Lease call
  // (0: the shards' default).
  ShardLeaseCalls(const Context& context, std::vector<std::string> addresses, std::string holder,
                  double lease_duration)
      : context_(context),
        addresses_(std::move(addresses)),
        holder_(std::move(holder)),
        lease_duration_(lease_duration),
        peek_ids_(addresses_.size(), 0) {}

  bool DeliverHeld(int shard) override;
  std::vector<std::optional<std::vector<double>>> Peek(double time,
                                                       const std::vector<int>& asked) override;
  std::vector<std::optional<std::vector<double>>> Lease(
      const std::vector<std::vector<double>>& slots) override;

  // The leases granted, by slot time.
  std::vector<CoordinatorLease> TakeLeases();

 private:
  const Context context_;
  const std::vector<std::string> addresses_;
  const std::string holder_;
  const double lease_duration_;
  std::vector<CoordinatorLease> leases_;
  // Per shard, the id of its latest peek not yet named by a Lease (0: none):
  // the next Lease call to the shard leases that peek's candidates first
  // (LeaseRequest.peek_id).
  std::vector<uint64_t> peek_ids_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_LEASE_CALLS_H_
