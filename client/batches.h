// Splitting a batch request into requests the server takes, and joining
// their per-item results back into one, indexed by the caller's items.
#ifndef RECRAWL_CLIENT_BATCHES_H_
#define RECRAWL_CLIENT_BATCHES_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "client/rpc.h"
#include "google/protobuf/repeated_field.h"
#include "grpcpp/grpcpp.h"
#include "proto/common.pb.h"

namespace recrawl {
namespace client {

// [begin, end) ranges of at most `max_items` (>= 1) covering [0, n).
std::vector<std::pair<int, int>> ChunkRanges(int n, int max_items);

// Adds `part`, the result of the caller's items from `offset` on, to
// `total`: applied counts add up, rejected indices shift by `offset`.
void AppendBatchResult(const BatchResult& part, uint32_t offset, BatchResult* total);

// A batch call split into requests of ClientOptions::max_batch_items: each
// gets its items through the request's repeated `field`, goes out with
// `send`, and its result joins the total with the caller's indices; `also`
// adds a response's other counters. A request is retried after
// UNAVAILABLE when `idempotent(request)` (unset: always). An error stops
// at the failing request, whose items the message names.
template <typename Request, typename Response, typename Item>
absl::StatusOr<Response> SendInBatches(
    const Rpc& rpc, const std::vector<Item>& items, bool sync,
    google::protobuf::RepeatedPtrField<Item>* (Request::*field)(),
    const std::function<grpc::Status(grpc::ClientContext*, const Request&, Response*)>& send,
    const std::function<void(const Response& part, Response* total)>& also = nullptr,
    const std::function<bool(const Request&)>& idempotent = nullptr) {
  Response total;
  total.mutable_result();
  for (const auto& [begin, end] :
       ChunkRanges(static_cast<int>(items.size()), rpc.options().max_batch_items)) {
    Request request;
    request.set_sync(sync);
    (request.*field)()->Reserve(end - begin);
    for (int i = begin; i < end; ++i) *(request.*field)()->Add() = items[i];
    Response part;
    auto call = [&](grpc::ClientContext* context) {
      part.Clear();
      return send(context, request, &part);
    };
    const absl::Status status =
        !idempotent || idempotent(request) ? rpc.CallIdempotent(call) : rpc.CallOnce(call);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("items ", begin, " to ", end - 1, ": ", status.message(),
                                       begin > 0 ? " (the earlier ones were applied)" : ""));
    }
    AppendBatchResult(part.result(), static_cast<uint32_t>(begin), total.mutable_result());
    if (also) also(part, &total);
  }
  return total;
}

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_BATCHES_H_
