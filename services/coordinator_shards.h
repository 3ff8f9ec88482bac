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
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/auth.h"

namespace recrawl {
namespace services {

class ShardChannels {
 public:
  // `token` (role internal) goes with every call; "" when the shards run
  // without tokens.
  ShardChannels(std::shared_ptr<grpc::ChannelCredentials> credentials, ClientTlsOptions tls,
                std::string token)
      : credentials_(std::move(credentials)), tls_(std::move(tls)), token_(std::move(token)) {}

  // The stub for `address`, made at first use and kept.
  ShardService::Stub* Stub(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);

  // Token and deadline (seconds of real time from now) on a call.
  void Prepare(grpc::ClientContext* context, double deadline_seconds) const;

 private:
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const ClientTlsOptions tls_;
  const std::string token_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<ShardService::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

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

// Starts every call with `start(stub, context, request, response, done)`,
// which calls the stub's callback API, e.g.
//   stub->async()->Lease(context, request, response, std::move(done)),
// and waits for all.
template <typename Request, typename Response, typename Start>
void CallInParallel(ShardChannels* channels, double deadline_seconds, Start start,
                    ShardCalls<Request, Response>* calls) {
  if (calls->empty()) return;
  absl::BlockingCounter pending(static_cast<int>(calls->size()));
  for (auto& call : *calls) {
    ShardCall<Request, Response>* c = call.get();
    channels->Prepare(&c->context, deadline_seconds);
    start(channels->Stub(c->address), &c->context, &c->request, &c->response,
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
