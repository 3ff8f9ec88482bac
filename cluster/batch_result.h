// Per-item results of a batch request (proto/common.proto BatchResult):
// rejections by the item's index in the client's request, and the merge of
// the parts a request was split into (one per shard).
#ifndef RECRAWL_CLUSTER_BATCH_RESULT_H_
#define RECRAWL_CLUSTER_BATCH_RESULT_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/common.pb.h"

namespace recrawl {
namespace cluster {

// Lists item `index` as rejected with `status` (not OK). absl and gRPC
// status codes have the same numbers.
void AddRejection(int index, const absl::Status& status, BatchResult* result);

// Adds the result of a part whose item k was item indexes[k] of the
// client's request.
void MergeResult(const BatchResult& part, const std::vector<int>& indexes, BatchResult* result);

// Orders the rejections by index (the parts answer in any order).
void SortRejected(BatchResult* result);

// The items 0..size-1 of a batch by shard, shard_of(i) naming item i's; an
// item whose shard_of fails is rejected with INVALID_ARGUMENT and its
// message.
template <typename ShardOf>
std::vector<std::vector<int>> SplitByShard(int size, int num_shards, ShardOf shard_of,
                                           BatchResult* result) {
  std::vector<std::vector<int>> items(num_shards);
  for (int i = 0; i < size; ++i) {
    absl::StatusOr<int> shard = shard_of(i);
    if (shard.ok()) {
      items[*shard].push_back(i);
    } else {
      AddRejection(i, absl::InvalidArgumentError(shard.status().message()), result);
    }
  }
  return items;
}

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_BATCH_RESULT_H_
