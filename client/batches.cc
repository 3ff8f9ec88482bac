#include "client/batches.h"

#include <algorithm>

namespace recrawl {
namespace client {

std::vector<std::pair<int, int>> ChunkRanges(int n, int max_items) {
  std::vector<std::pair<int, int>> ranges;
  for (int begin = 0; begin < n; begin += max_items) {
    ranges.emplace_back(begin, std::min(n, begin + max_items));
  }
  return ranges;
}

void AppendBatchResult(const BatchResult& part, uint32_t offset, BatchResult* total) {
  total->set_applied(total->applied() + part.applied());
  for (const ItemStatus& item : part.rejected()) {
    ItemStatus* out = total->add_rejected();
    *out = item;
    out->set_index(item.index() + offset);
  }
}

}  // namespace client
}  // namespace recrawl
