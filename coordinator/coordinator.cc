#include "coordinator/coordinator.h"

#include <cstddef>

#include "absl/strings/str_cat.h"
#include "coordinator/merge.h"

namespace recrawl {
namespace coordinator {
namespace {

constexpr int kShardBits = 8;
constexpr int kLeaseBits = 64 - kShardBits;
constexpr uint64_t kLeaseMask = (uint64_t{1} << kLeaseBits) - 1;

// PeekSizes: a shard is asked for kPeekMargin times its share of the slots
// plus kPeekExtra; each merge moves the shares kShareStep toward its own.
constexpr double kPeekMargin = 1.5;
constexpr int kPeekExtra = 8;
constexpr double kShareStep = 0.25;

}  // namespace

uint64_t ClusterLeaseId(int shard_index, uint64_t shard_lease_id) {
  return (static_cast<uint64_t>(shard_index) << kLeaseBits) | (shard_lease_id & kLeaseMask);
}
int ShardOfLeaseId(uint64_t cluster_lease_id) {
  return static_cast<int>(cluster_lease_id >> kLeaseBits);
}
uint64_t ShardLeaseId(uint64_t cluster_lease_id) { return cluster_lease_id & kLeaseMask; }

absl::Status Coordinator::Validate(const CoordinatorOptions& options) {
  if (options.num_shards < 1 || options.num_shards > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_shards: must be in [1, ", kMaxShards, "], got ", options.num_shards));
  }
  if (absl::Status s = SlotPacer::ValidateBandwidth(options.bandwidth); !s.ok()) return s;
  if (!(options.pacer.grace >= 0.0) || !(options.pacer.max_lookahead >= 0.0)) {
    return absl::InvalidArgumentError("grace, max_lookahead: must be >= 0 seconds");
  }
  if (!(options.directory.failure_timeout > 0.0)) {
    return absl::InvalidArgumentError("failure_timeout: must be > 0 seconds");
  }
  if (!(options.rebalance_period > 0.0)) {
    return absl::InvalidArgumentError("rebalance_period: must be > 0 seconds");
  }
  return absl::OkStatus();
}

Coordinator::Coordinator(const CoordinatorOptions& options, double now)
    : options_(options),
      mode_(options.mode),
      pacer_(options.bandwidth, now, options.pacer),
      directory_(options.num_shards, options.directory),
      dealer_(options.num_shards),
      budgets_(options.num_shards, 0.0),
      value_sum_(options.num_shards, 0.0),
      value_count_(options.num_shards, 0),
      levels_(options.num_shards, 0.0),
      merge_share_(options.num_shards, 1.0 / options.num_shards),
      next_rebalance_(now + options.rebalance_period) {}

absl::Status Coordinator::SetBandwidth(double bandwidth, double now) {
  if (absl::Status s = pacer_.SetBandwidth(bandwidth, now); !s.ok()) return s;
  // Budgets are shares of R: keep the shares.
  double total = 0.0;
  for (double b : budgets_) total += b;
  for (double& b : budgets_) b = total > 0.0 ? b * bandwidth / total : 0.0;
  dealer_.SetBudgets(budgets_);
  return absl::OkStatus();
}

void Coordinator::SetMode(Mode mode, double now) {
  if (mode == mode_) return;
  mode_ = mode;
  ResetBudgets(now);
}

void Coordinator::ResetBudgets(double now) {
  // Equal over the live shards; adaptive starts there too.
  budgets_ = EqualSplit(bandwidth(), directory_.Live(now));
  dealer_.SetBudgets(budgets_);
}

std::vector<double> Coordinator::TakeSlots(double now, double lookahead, int max_slots) {
  return pacer_.Take(now, now + lookahead, max_slots);
}

std::vector<std::vector<double>> Coordinator::DealSlots(const std::vector<double>& slots) {
  std::vector<std::vector<double>> by_shard(options_.num_shards);
  for (double t : slots) {
    const int s = dealer_.Deal();
    if (s < 0) break;  // no live shard: the slots go unused
    by_shard[s].push_back(t);
  }
  return by_shard;
}

std::vector<int> Coordinator::PeekSizes(int num_slots, const std::vector<bool>& live) const {
  double live_share = 0.0;
  for (int s = 0; s < options_.num_shards; ++s) {
    if (live[s]) live_share += merge_share_[s];
  }
  std::vector<int> sizes(options_.num_shards, 0);
  for (int s = 0; s < options_.num_shards; ++s) {
    if (!live[s]) continue;
    const double share = live_share > 0.0 ? merge_share_[s] / live_share : 1.0;
    const double want = kPeekMargin * share * num_slots + kPeekExtra;
    sizes[s] = want >= num_slots ? num_slots : static_cast<int>(want);
  }
  return sizes;
}

std::vector<std::vector<double>> Coordinator::MergeSlots(
    const std::vector<double>& slots, const std::vector<std::vector<double>>& peeked,
    const std::vector<int>& asked, size_t* assigned) {
  const int n = static_cast<int>(slots.size());
  std::vector<bool> truncated(options_.num_shards, false);
  for (int s = 0; s < options_.num_shards; ++s) {
    // A shard that sent all it was asked for, fewer than n, may have more.
    truncated[s] = asked[s] < n && static_cast<int>(peeked[s].size()) >= asked[s];
  }
  std::vector<std::vector<double>> by_shard(options_.num_shards);
  const std::vector<int> winners = AssignSlotsByMerge(peeked, n, truncated);
  for (size_t j = 0; j < winners.size(); ++j) by_shard[winners[j]].push_back(slots[j]);
  *assigned = winners.size();
  if (!winners.empty()) {
    for (int s = 0; s < options_.num_shards; ++s) {
      const double won = static_cast<double>(by_shard[s].size()) / winners.size();
      merge_share_[s] += kShareStep * (won - merge_share_[s]);
    }
  }
  return by_shard;
}

void Coordinator::RecordLeases(int shard_index, const std::vector<double>& values) {
  for (double v : values) value_sum_[shard_index] += v;
  value_count_[shard_index] += static_cast<int64_t>(values.size());
}

std::vector<ShardDirectory::Transition> Coordinator::Tick(double now) {
  std::vector<ShardDirectory::Transition> changes = directory_.TakeTransitions(now);
  const bool period_over = now >= next_rebalance_;
  if (period_over) {
    for (int s = 0; s < options_.num_shards; ++s) {
      levels_[s] = value_count_[s] > 0 ? value_sum_[s] / value_count_[s] : 0.0;  // 0: unknown
      value_sum_[s] = 0.0;
      value_count_[s] = 0;
    }
    while (next_rebalance_ <= now) next_rebalance_ += options_.rebalance_period;
  }
  if (mode_ == Mode::kSplitAdaptive) {
    if (period_over || !changes.empty()) {
      budgets_ =
          AdaptiveStep(bandwidth(), budgets_, levels_, directory_.Live(now), options_.adaptive);
      dealer_.SetBudgets(budgets_);
    }
  } else if (!changes.empty()) {
    ResetBudgets(now);
  }
  return changes;
}

}  // namespace coordinator
}  // namespace recrawl
