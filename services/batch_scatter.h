// A batch request's items scattered to their shards and the per-item
// results gathered: each shard gets one call with its items (in parallel,
// with a deadline), and the client's BatchResult lists every rejection by
// the item's index in the client's request, in index order.
//
// An item whose shard cannot be found is rejected INVALID_ARGUMENT. The
// items of a shard that is out, or whose call got no answer, are rejected
// UNAVAILABLE, unless the caller keeps them (`keep`: the coordinator holds
// crawl reports for such a shard). A call the shard answered with an error
// rejects its items with that status.
//
// Thread-safe as far as the callbacks are.
#ifndef RECRAWL_SERVICES_BATCH_SCATTER_H_
#define RECRAWL_SERVICES_BATCH_SCATTER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "services/coordinator_shards.h"

namespace recrawl {
namespace services {

struct BatchScatter {
  ShardChannels* channels = nullptr;
  int num_shards = 1;
  // Real seconds each shard call may take.
  double deadline = 5.0;
  // The address of a live shard, or the error saying it is out.
  std::function<absl::StatusOr<std::string>(int shard)> live_address;
  // A call found its shard down (no connection).
  std::function<void(int shard)> shard_down;

  // Scatters items 0..size-1: shard_of(i) is item i's shard, add_item(i,
  // &part) copies item i into its shard's copy of `base`, `method` is the
  // shard's RPC. `keep(shard, indexes, part)`, if set, takes the items of a
  // shard that is out or did not answer instead of rejecting them. Returns
  // the calls made, for the responses' other fields.
  template <typename Request, typename Response, typename ShardOf, typename AddItem>
  ShardCalls<Request, Response> Run(
      int size, ShardOf shard_of, const Request& base, AddItem add_item,
      ShardMethod<Request, Response> method, BatchResult* result,
      const std::function<void(int shard, const std::vector<int>& indexes, const Request& part)>&
          keep = nullptr) const {
    const std::vector<std::vector<int>> items =
        cluster::SplitByShard(size, num_shards, shard_of, result);
    ShardCalls<Request, Response> calls;
    for (int s = 0; s < num_shards; ++s) {
      if (items[s].empty()) continue;
      absl::StatusOr<std::string> address = live_address(s);
      if (!address.ok() && !keep) {
        for (int i : items[s]) cluster::AddRejection(i, address.status(), result);
        continue;
      }
      ShardCall<Request, Response>* call =
          AddShardCall(&calls, s, address.ok() ? *address : std::string());
      call->indexes = items[s];
      call->request = base;
      for (int i : items[s]) add_item(i, &call->request);
      if (!address.ok()) {
        keep(s, call->indexes, call->request);
        calls.pop_back();
      }
    }
    CallInParallel(channels, deadline, method, &calls);
    for (const auto& call : calls) {
      if (call->status.ok()) {
        cluster::MergeResult(call->response.result(), call->indexes, result);
        continue;
      }
      if (ShardIsDown(call->status)) shard_down(call->shard);
      if (keep && ShardDidNotAnswer(call->status)) {
        // Maybe applied, maybe not: kept and sent again.
        keep(call->shard, call->indexes, call->request);
        continue;
      }
      const absl::Status failed(
          static_cast<absl::StatusCode>(call->status.error_code()),
          absl::StrCat("shard ", call->shard, ": ", call->status.error_message()));
      for (int i : call->indexes) cluster::AddRejection(i, failed, result);
    }
    cluster::SortRejected(result);
    return calls;
  }
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_BATCH_SCATTER_H_
