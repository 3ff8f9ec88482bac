// Algorithm 1 across shards, as the coordinator runs it (issue 5): pages are
// split over N shards, each with its own scheduling index, and R is shared
// by one of the coordinator's modes:
//   * merge: every slot goes to the shards' best page — the global argmax,
//     the same picks as one unsharded index;
//   * equal: each shard gets R/N of the slots (main paper Sec. 5.2) and
//     crawls its own argmax in them;
//   * adaptive: as equal, with the budgets moved every `rebalance_period`
//     toward the shards whose picks had the higher crawl value
//     (coordinator/bandwidth_split.h).
// Slots are dealt to shards in proportion to their budgets as the
// coordinator deals them (coordinator/slot_dealer.h).
#ifndef RECRAWL_SIM_SHARDED_SCHEDULER_H_
#define RECRAWL_SIM_SHARDED_SCHEDULER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/bandwidth_split.h"
#include "coordinator/slot_dealer.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "sim/scheduler.h"
#include "sim/value_scheduler.h"

namespace recrawl {
namespace sim {

struct ShardedOptions {
  enum class Mode { kMerge, kEqual, kAdaptive };
  Mode mode = Mode::kMerge;
  int num_shards = 4;
  // Time between adaptive steps, in the world's time unit; the levels are
  // the mean crawl value of each shard's picks since the last step.
  double rebalance_period = 1.0;
  coordinator::AdaptiveSplitOptions adaptive;
};

class ShardedScheduler : public Scheduler {
 public:
  // Page i lives on shard shard_of[i] (0 ≤ shard_of[i] < num_shards).
  // `pages` are the policy's beliefs with importance already normalised over
  // all shards, so that values are comparable across shards.
  static absl::StatusOr<std::unique_ptr<ShardedScheduler>> Create(
      const std::vector<policy::PageParams>& pages, const std::vector<int>& shard_of,
      const policy::CrawlPolicy& policy, double bandwidth, const ShardedOptions& options);

  void OnSignal(int page, double t) override;
  int Next(double t) override;
  void OnCrawl(int page, double t, bool changed) override;

  // Current budgets R_s (R/N each in merge mode, where they are unused).
  const std::vector<double>& budgets() const { return budgets_; }
  // Split modes: the shards' levels Λ_s over the last full period (mean
  // crawl value of their picks; 0 before the first period ends).
  const std::vector<double>& levels() const { return levels_; }

 private:
  struct Shard {
    std::unique_ptr<ValueScheduler> scheduler;
    std::vector<int> global;  // local page id → global page id
    double value_sum = 0.0;   // crawl values picked since the last step
    int picks = 0;
  };

  ShardedScheduler(std::vector<Shard> shards, std::vector<int> shard_of,
                   std::vector<int> local, double bandwidth, const ShardedOptions& options);
  int NextMerged(double t);
  int NextSplit(double t);
  // Closes a period: levels, and in adaptive mode new budgets.
  void EndPeriod(double t);

  std::vector<Shard> shards_;
  std::vector<int> shard_of_;
  std::vector<int> local_;  // global page id → id on its shard
  double bandwidth_;
  ShardedOptions options_;
  std::vector<double> budgets_;
  coordinator::SlotDealer dealer_;
  std::vector<double> levels_;
  double next_rebalance_;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_SHARDED_SCHEDULER_H_
