// Algorithm 1 across shards, decided by the coordinator's own code
// (coordinator/coordinator.h): pages are split over N shards, each
// with its own scheduling index, and R is shared by one of the
// coordinator's modes:
//   * merge: every slot goes to the shards' best page — the global argmax,
//     the same picks as one unsharded index;
//   * equal: each shard gets R/N of the slots (main paper Sec. 5.2) and
//     crawls its own argmax in them;
//   * adaptive: as equal, with the budgets moved every rebalance period
//     toward the shards whose picks had the higher crawl value
//     (coordinator/bandwidth_split.h).
// The simulator's slots stand in for the pacer's; every shard is live.
#ifndef RECRAWL_SIM_SHARDED_SCHEDULER_H_
#define RECRAWL_SIM_SHARDED_SCHEDULER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "sim/scheduler.h"
#include "sim/value_scheduler.h"

namespace recrawl {
namespace sim {

struct ShardedOptions {
  coordinator::Mode mode = coordinator::Mode::kMerge;
  int num_shards = 4;
  // Time between adaptive steps, in the world's time unit.
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

  const std::vector<double>& budgets() const { return coordinator_.budgets(); }
  const std::vector<double>& levels() const { return coordinator_.levels(); }

 private:
  struct Shard {
    std::unique_ptr<ValueScheduler> scheduler;
    std::vector<int> global;  // local page id → global page id
  };

  ShardedScheduler(std::vector<Shard> shards, std::vector<int> shard_of, std::vector<int> local,
                   const coordinator::CoordinatorOptions& options);

  std::vector<Shard> shards_;
  std::vector<int> shard_of_;
  std::vector<int> local_;  // global page id → id on its shard
  coordinator::Coordinator coordinator_;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_SHARDED_SCHEDULER_H_
