// Per-item rejections of a batch request (proto/common.proto BatchResult).
#ifndef RECRAWL_SHARD_BATCH_RESULT_H_
#define RECRAWL_SHARD_BATCH_RESULT_H_

#include "absl/status/status.h"
#include "proto/common.pb.h"

namespace recrawl {
namespace shard {

// Lists item `index` as rejected with `status` (not OK). absl and gRPC
// status codes have the same numbers.
inline void AddRejection(int index, const absl::Status& status,
                         BatchResult* result) {
  ItemStatus* item = result->add_rejected();
  item->set_index(static_cast<uint32_t>(index));
  item->set_code(static_cast<int32_t>(status.code()));
  item->set_message(std::string(status.message()));
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_BATCH_RESULT_H_
