// How a client reaches the coordinator, and how patiently: the options every
// client of client/ (FetcherClient, PingClient, AdminClient) takes.
#ifndef RECRAWL_CLIENT_CLIENT_OPTIONS_H_
#define RECRAWL_CLIENT_CLIENT_OPTIONS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"

namespace recrawl {
namespace client {

// Exponential backoff with jitter, for retries and for reconnecting.
struct Backoff {
  absl::Duration initial = absl::Milliseconds(50);
  absl::Duration max = absl::Seconds(2);
  double multiplier = 2.0;
  // Each delay is scaled by a factor drawn uniformly from
  // [1 - jitter, 1 + jitter], so that many clients that lost the same
  // server do not come back in step.
  double jitter = 0.2;
};

struct ClientOptions {
  // "host:port" (or any gRPC target, e.g. "dns:///coordinator:50050").
  std::string target;
  // The role token, sent with every call as "authorization: Bearer <token>".
  // Empty: none sent.
  std::string token;
  // Null: an insecure (plain-text) channel. TLS credentials come from
  // client::ChannelCredentialsFor (client/credentials.h).
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // The name to verify in the server's certificate instead of the target's
  // host (e.g. when connecting to an IP address). Empty: the target's.
  std::string tls_server_name;
  // Deadline of each unary call attempt.
  absl::Duration deadline = absl::Seconds(10);
  Backoff backoff;
  // Attempts of an idempotent call that fails with UNAVAILABLE (the server
  // is restarting or unreachable) before the error is returned.
  int max_attempts = 8;
  // Items per batch request (upserts, deletes, reports); the coordinator
  // rejects larger batches as a whole.
  int max_batch_items = 1000;
  // Seconds on the coordinator's clock now: stamps signals and reports and
  // converts next_slot_time into a wait. Unset: Unix time (a coordinator
  // running in real time).
  std::function<double()> clock;
  // Coordinator seconds per real second (the coordinator's --time_scale).
  double time_scale = 1.0;
  // How the clients wait (backoff, lease pacing). Unset: absl::SleepFor.
  // Tests record the waits instead of spending them.
  std::function<void(absl::Duration)> sleep;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_CLIENT_OPTIONS_H_
