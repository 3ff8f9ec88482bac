// The coordinator's connections to its shards: one channel per address
// (TLS and the internal token as configured), and parallel unary calls with
// a deadline, so that one slow shard costs a request the deadline, not the
// sum over shards.
#ifndef RECRAWL_SERVICES_COORDINATOR_SHARDS_H_
#define RECRAWL_SERVICES_COORDINATOR_SHARDS_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "client/credentials.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/auth.h"

namespace recrawl {
namespace services {

class ShardChannels {
 public:
  // `token` (role internal) goes with every call; "" when the shards run
  // without tokens.
  ShardChannels(std::shared_ptr<grpc::ChannelCredentials> credentials, client::ClientTlsOptions tls,
                std::string token)
      : credentials_(std::move(credentials)), tls_(std::move(tls)), token_(std::move(token)) {}

  // The stub for `address`, made at first use and kept.
  ShardService::Stub* Stub(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);

  // Token and deadline (seconds of real time from now) on a call.
  void Prepare(grpc::ClientContext* context, double deadline_seconds) const;

 private:
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const client::ClientTlsOptions tls_;
  const std::string token_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<ShardService::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

// A call that failed because the shard did not answer (as opposed to one
// it answered with an error): what it sent may or may not have applied.
inline bool ShardDidNotAnswer(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::CANCELLED;
}

// A call that failed because the shard is down (no connection), which takes
// it out for every request at once. A call that only ran out of time is a
// slow answer under load, not death: its items fail for this request, and
// the health probes decide whether the shard is out.
inline bool ShardIsDown(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE;
}

// One unary call to one shard, for a batch of them in parallel. `indexes`
// are the positions in the client's request of the items sent to the
// shard, to map its per-item statuses back.
template <typename Request, typename Response>
struct ShardCall {
  int shard = -1;
  std::string address;
  std::vector<int> indexes;
  Request request;
  Response response;
  grpc::ClientContext context;
  grpc::Status status;
};

template <typename Request, typename Response>
using ShardCalls = std::vector<std::unique_ptr<ShardCall<Request, Response>>>;

// Adds a call to `shard` at `address` and returns it, for its request.
template <typename Request, typename Response>
ShardCall<Request, Response>* AddShardCall(ShardCalls<Request, Response>* calls, int shard,
                                           std::string address) {
  auto call = std::make_unique<ShardCall<Request, Response>>();
  call->shard = shard;
  call->address = std::move(address);
  calls->push_back(std::move(call));
  return calls->back().get();
}

// A ShardService method in the stub's callback form, e.g.
// &ShardAsync::Lease.
using ShardAsync = ShardService::StubInterface::async_interface;
template <typename Request, typename Response>
using ShardMethod = void (ShardAsync::*)(grpc::ClientContext*, const Request*, Response*,
                                         std::function<void(grpc::Status)>);

// Starts every call of `calls` with `method`, each with the token and a
// deadline `deadline_seconds` of real time from now, and waits for all.
// Each call's status says how it ended.
template <typename Request, typename Response>
void CallInParallel(ShardChannels* channels, double deadline_seconds,
                    ShardMethod<Request, Response> method, ShardCalls<Request, Response>* calls) {
  if (calls->empty()) return;
  absl::BlockingCounter pending(static_cast<int>(calls->size()));
  for (auto& call : *calls) {
    ShardCall<Request, Response>* c = call.get();
    channels->Prepare(&c->context, deadline_seconds);
    (channels->Stub(c->address)->async()->*method)(&c->context, &c->request, &c->response,
                                                   [c, &pending](grpc::Status status) {
                                                     c->status = std::move(status);
                                                     pending.DecrementCount();
                                                   });
  }
  pending.Wait();
}

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_COORDINATOR_SHARDS_H_
