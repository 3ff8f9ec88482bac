#include "cluster/batch_result.h"

#include <algorithm>
#include <string>

namespace recrawl {
namespace cluster {

void AddRejection(int index, const absl::Status& status, BatchResult* result) {
  ItemStatus* item = result->add_rejected();
  item->set_index(static_cast<uint32_t>(index));
  item->set_code(static_cast<int32_t>(status.code()));
  item->set_message(std::string(status.message()));
}

void MergeResult(const BatchResult& part, const std::vector<int>& indexes, BatchResult* result) {
  result->set_applied(result->applied() + part.applied());
  for (const ItemStatus& item : part.rejected()) {
    ItemStatus* out = result->add_rejected();
    *out = item;
    out->set_index(item.index() < indexes.size() ? static_cast<uint32_t>(indexes[item.index()])
                                                 : 0);
  }
}

void SortRejected(BatchResult* result) {
  std::sort(result->mutable_rejected()->begin(), result->mutable_rejected()->end(),
            [](const ItemStatus& a, const ItemStatus& b) { return a.index() < b.index(); });
}

}  // namespace cluster
}  // namespace recrawl
