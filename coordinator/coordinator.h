// The coordinator's state and decisions, without I/O: the server
// (services/coordinator_server.cc) asks it which slots to fill and on which
// shards, performs the shard RPCs, and tells it what came back. Every call
// takes `now` (seconds on the cluster clock).
//
// A fetch goes: TakeSlots (the pacer's due slots) → in split mode
// DealSlots, in merge mode MergeSlots over the shards' peeked values → one
// Lease RPC per shard with its slot times → RecordLeases (the values feed
// the shards' levels Λ_s). Tick, on a timer, applies the directory's
// liveness changes and in adaptive mode moves the budgets.
#ifndef RECRAWL_COORDINATOR_COORDINATOR_H_
#define RECRAWL_COORDINATOR_COORDINATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/bandwidth_split.h"
#include "coordinator/shard_directory.h"
#include "coordinator/slot_dealer.h"
#include "coordinator/slot_pacer.h"

namespace recrawl {
namespace coordinator {

enum class Mode { kMerge, kSplitEqual, kSplitAdaptive };

struct CoordinatorOptions {
  int num_shards = 1;
  double bandwidth = 1.0;
  Mode mode = Mode::kMerge;
  SlotPacer::Options pacer;
  ShardDirectory::Options directory;
  AdaptiveSplitOptions adaptive;
  // Time between adaptive steps; the levels are the mean crawl value of
  // each shard's leases since the previous step.
  double rebalance_period = 1.0;
};

// Lease ids across the cluster: the shard index in the top 8 bits.
constexpr int kMaxShards = 256;
uint64_t ClusterLeaseId(int shard_index, uint64_t shard_lease_id);
int ShardOfLeaseId(uint64_t cluster_lease_id);
uint64_t ShardLeaseId(uint64_t cluster_lease_id);

class Coordinator {
 public:
  // INVALID_ARGUMENT naming the field for a bad option.
  static absl::Status Validate(const CoordinatorOptions& options);
  Coordinator(const CoordinatorOptions& options, double now);

  absl::Status SetBandwidth(double bandwidth, double now);
  double bandwidth() const { return pacer_.bandwidth(); }
  void SetMode(Mode mode, double now);
  Mode mode() const { return mode_; }
  // Per shard; 0 for shards that are out. In merge mode R/N of the live.
  const std::vector<double>& budgets() const { return budgets_; }

  // The shards' levels Λ_s: the mean crawl value of their leases over the
  // last full rebalance period (0: unknown).
  const std::vector<double>& levels() const { return levels_; }

  ShardDirectory& directory() { return directory_; }
  const SlotPacer::Stats& slot_stats() const { return pacer_.stats(); }

  // Up to `max_slots` slot times in [now − grace, now + lookahead].
  std::vector<double> TakeSlots(double now, double lookahead, int max_slots);
  double NextSlotTime(double now) { return pacer_.NextSlotTime(now); }

  // Split modes: the slots of each shard (by shard index), by budget.
  std::vector<std::vector<double>> DealSlots(const std::vector<double>& slots);
  // Merge mode: how many candidates to peek at on each shard for
  // `num_slots` slots (0 for a shard that is out). A shard is asked for its
  // recent share of the merged slots with a margin, not for all of them:
  // with N alike shards that is ~1/N of the peeking. When a shard wins more
  // than it sent, MergeSlots stops there and the caller peeks again.
  std::vector<int> PeekSizes(int num_slots, const std::vector<bool>& live) const;
  // Merge mode: peeked[s] are shard s's best values (best first; empty for
  // a shard that is out or did not answer), of the asked[s] asked for;
  // slot j goes to the j-th best. Assigns an exact prefix of `slots`
  // (coordinator/merge.h), *assigned of them, and updates the shares.
  std::vector<std::vector<double>> MergeSlots(const std::vector<double>& slots,
                                              const std::vector<std::vector<double>>& peeked,
                                              const std::vector<int>& asked, size_t* assigned);

  // The values of the URLs shard s leased, for its level Λ_s.
  void RecordLeases(int shard_index, const std::vector<double>& values);
  // Applies liveness changes (returned, for the log and for returning a
  // shard's held reports), closes the level period when due and, in
  // adaptive mode, steps the budgets.
  std::vector<ShardDirectory::Transition> Tick(double now);

 private:
  void ResetBudgets(double now);

  CoordinatorOptions options_;
  Mode mode_;
  SlotPacer pacer_;
  ShardDirectory directory_;
  SlotDealer dealer_;
  std::vector<double> budgets_;
  std::vector<double> value_sum_;
  std::vector<int64_t> value_count_;
  std::vector<double> levels_;
  // Each shard's share of recently merged slots (an exponential average).
  std::vector<double> merge_share_;
  double next_rebalance_;
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_COORDINATOR_H_
