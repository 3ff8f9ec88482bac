// `split` mode: deals the cluster's slots (coordinator/slot_pacer.h) to
// shards in proportion to their budgets R_s. Each slot adds R_s/R to shard
// s's credit and goes to the largest credit, which then pays 1: shard s
// gets R_s/R of the slots, evenly spread (its slots are ~R/R_s slots
// apart), and the cluster as a whole still never exceeds R — budgets are
// shares of one slot grid rather than grids of their own, which would add
// up to N slots of burst.
#ifndef RECRAWL_COORDINATOR_SLOT_DEALER_H_
#define RECRAWL_COORDINATOR_SLOT_DEALER_H_

#include <vector>

namespace recrawl {
namespace coordinator {

class SlotDealer {
 public:
  explicit SlotDealer(int num_shards) : credit_(num_shards, 0.0) {}

  // Sets the budgets (one per shard, ≥ 0, 0 for shards that are out). A
  // shard whose budget drops to 0 loses its credit, so it gets no slot
  // after it comes back before its fair turn.
  void SetBudgets(const std::vector<double>& budgets);

  // The shard for the next slot; -1 when every budget is 0.
  int Deal();

 private:
  std::vector<double> credit_;
  std::vector<double> share_;  // R_s / R
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_SLOT_DEALER_H_
