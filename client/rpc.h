// What every client of client/ does around a call: the channel (with the
// token, credentials and a reconnect backoff short enough that a restarted
// coordinator is found again within the client's own backoff), the call's
// context (token, deadline), the clock and the waits, and the retry of
// idempotent calls.
#ifndef RECRAWL_CLIENT_RPC_H_
#define RECRAWL_CLIENT_RPC_H_

#include <memory>
#include <utility>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/client_options.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace client {

// The same code and message as an absl::Status.
absl::Status FromGrpcStatus(const grpc::Status& status);

// Delays of an exponential backoff: initial, initial·multiplier, ... capped
// at max, each with its jitter.
class BackoffDelays {
 public:
  explicit BackoffDelays(const Backoff& backoff) : backoff_(backoff) {}
  // The next delay; `uniform` in [0, 1) picks the jitter.
  absl::Duration Next(double uniform);
  absl::Duration Next() { return Next(absl::Uniform(bitgen_, 0.0, 1.0)); }
  void Reset() { attempt_ = 0; }

 private:
  Backoff backoff_;
  int attempt_ = 0;
  absl::BitGen bitgen_;
};

// A channel to options.target and what calls on it need.
class Rpc {
 public:
  explicit Rpc(ClientOptions options);

  const ClientOptions& options() const { return options_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Token (unless it is invalid) and, when `deadline` is not infinite, the
  // deadline.
  void Prepare(grpc::ClientContext* context,
               absl::Duration deadline = absl::InfiniteDuration()) const;
  // Coordinator seconds now (options.clock, else Unix time).
  double Now() const;
  // Waits `coordinator_seconds` of coordinator time (options.time_scale).
  void WaitCoordinatorSeconds(double coordinator_seconds) const;
  void Sleep(absl::Duration d) const;

  // Runs `call(context)` with a fresh context (token, options.deadline)
  // until it returns anything but UNAVAILABLE, or options.max_attempts
  // attempts, with backoff between them. Only for calls that may be applied
  // twice: an UNAVAILABLE call may have reached the server.
  template <typename Call>
  absl::Status CallIdempotent(Call call) const {
    if (!token_status_.ok()) return token_status_;
    BackoffDelays delays(options_.backoff);
    grpc::Status status;
    for (int attempt = 1;; ++attempt) {
      grpc::ClientContext context;
      Prepare(&context, options_.deadline);
      status = call(&context);
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE ||
          attempt >= options_.max_attempts) {
        break;
      }
      Sleep(delays.Next());
    }
    return FromGrpcStatus(status);
  }

  // One attempt, for calls that must not be repeated blindly.
  template <typename Call>
  absl::Status CallOnce(Call call) const {
    if (!token_status_.ok()) return token_status_;
    grpc::ClientContext context;
    Prepare(&context, options_.deadline);
    return FromGrpcStatus(call(&context));
  }

 private:
  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  // cluster::ValidateToken of the token: a token that cannot travel in a
  // header fails every call with this, instead of reaching gRPC (which
  // aborts on it).
  absl::Status token_status_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_RPC_H_
