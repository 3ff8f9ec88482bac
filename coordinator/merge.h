// `merge` mode: the exact global argmax over shards (main paper Algorithm 1
// on the union of the shards' pages). For a run of slots the coordinator
// peeks at each shard's best candidates, and the k-th best value overall
// takes the k-th slot; each shard then leases as many URLs as it won, at
// the slot times it won. Values are comparable across shards because V is
// linear in the raw importance μ (shards do not normalise it).
#ifndef RECRAWL_COORDINATOR_MERGE_H_
#define RECRAWL_COORDINATOR_MERGE_H_

#include <vector>

namespace recrawl {
namespace coordinator {

// shard_values[s]: shard s's candidates' values, best first. Returns, for
// each of up to `num_slots` slots in order, the shard whose candidate has
// the next best value (ties to the lower shard index); shorter when the
// shards have fewer candidates in all. truncated[s] (may be empty: none)
// says shard s has more candidates than it sent: once its list runs out the
// next slot could be its, so the assignment stops there (an exact prefix;
// the caller peeks again for the rest).
std::vector<int> AssignSlotsByMerge(const std::vector<std::vector<double>>& shard_values,
                                    int num_slots, const std::vector<bool>& truncated = {});

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_MERGE_H_
