// Which shards lease which slots for one fetcher's Lease call, in rounds:
// the slots a round leaves unfilled (a merge that stopped at a shard's short
// peek, a shard that failed) go to the next round, on the shards that
// answered; what the last round leaves goes unused.
//
//   Before leasing: every live shard gets what the coordinator holds for it
//   (HeldReports, LeaseReleases); a shard that still holds reports after
//   that is not leased from in this call. An acknowledged report thus
//   reaches its shard before its URL can be leased again.
//   Merge mode: round 0 peeks at each live shard for its share of the slots
//   (Coordinator::PeekSizes), later rounds for all of them, so that they
//   stay exact; Coordinator::MergeSlots assigns an exact prefix.
//   Split modes: round 0 deals by budget (Coordinator::DealSlots), later
//   rounds round-robin over the shards that answered.
//   Every shard that leased reports its values (Coordinator::RecordLeases).
//
// The shard calls are the caller's (LeaseShards); the rounds do no I/O.
#ifndef RECRAWL_COORDINATOR_LEASE_ROUNDS_H_
#define RECRAWL_COORDINATOR_LEASE_ROUNDS_H_

#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"

namespace recrawl {
namespace coordinator {

// The shard calls of one Lease, performed by the caller (services/ over
// gRPC, in parallel across shards; tests in memory). Each call may fail.
class LeaseShards {
 public:
  virtual ~LeaseShards() = default;
  // Delivers what the coordinator holds for `shard` (crawl reports, lease
  // releases). True when none of its reports is held any more.
  virtual bool DeliverHeld(int shard) = 0;
  // For each shard s with asked[s] > 0: its best asked[s] crawl values at
  // `time`, best first; nullopt for a shard whose call failed (and for one
  // not asked).
  virtual std::vector<std::optional<std::vector<double>>> Peek(double time,
                                                               const std::vector<int>& asked) = 0;
  // Leases slots[s] (slot times, ascending) on each shard s with some: the
  // crawl values of the leases it granted; nullopt for a shard whose call
  // failed, whose grants (if any) the caller releases.
  virtual std::vector<std::optional<std::vector<double>>> Lease(
      const std::vector<std::vector<double>>& slots) = 0;
};

struct LeaseRoundsResult {
  int rounds = 0;             // rounds that called shards
  size_t unfilled_slots = 0;  // slots no round filled (unused)
};

constexpr int kLeaseRounds = 3;

// Fills `slots` (ascending) from the shards marked in `live`, in mode
// `mode`. `core` is read and changed only with `*core_mu` held; `shards` is
// called without it. Thread-safe as far as `core_mu` makes `core`.
LeaseRoundsResult RunLeaseRounds(std::vector<double> slots, Mode mode, std::vector<bool> live,
                                 Coordinator* core, absl::Mutex* core_mu, LeaseShards* shards);

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_LEASE_ROUNDS_H_
