#include "coordinator/merge.h"

#include <cstddef>
#include <queue>
#include <utility>

namespace recrawl {
namespace coordinator {

std::vector<int> AssignSlotsByMerge(const std::vector<std::vector<double>>& shard_values,
                                    int num_slots, const std::vector<bool>& truncated) {
  // (value, shard) of each shard's best unassigned candidate; the heap's top
  // is the largest value, then the lowest shard index.
  struct Head {
    double value;
    int shard;
    bool operator<(const Head& o) const {
      return value != o.value ? value < o.value : shard > o.shard;
    }
  };
  std::priority_queue<Head> heads;
  std::vector<size_t> taken(shard_values.size(), 0);
  for (size_t s = 0; s < shard_values.size(); ++s) {
    if (!shard_values[s].empty()) heads.push({shard_values[s][0], static_cast<int>(s)});
  }
  std::vector<int> slots;
  while (static_cast<int>(slots.size()) < num_slots && !heads.empty()) {
    const int s = heads.top().shard;
    heads.pop();
    slots.push_back(s);
    if (++taken[s] < shard_values[s].size()) {
      heads.push({shard_values[s][taken[s]], s});
    } else if (s < static_cast<int>(truncated.size()) && truncated[s]) {
      break;  // its next value is unknown
    }
  }
  return slots;
}

}  // namespace coordinator
}  // namespace recrawl
