#include "client/rpc.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "client/credentials.h"

namespace recrawl {
namespace client {
namespace {

int Millis(absl::Duration d) {
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, 1 << 30));
}

std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& options) {
  grpc::ChannelArguments args;
  // gRPC's own reconnect backoff starts at 1 s and grows to 120 s; a
  // coordinator restarted after a minute would then be seen up to two
  // minutes late. Tie it to the client's backoff instead.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, Millis(options.backoff.initial));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, Millis(options.backoff.initial));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, Millis(options.backoff.max));
  // Batches of up to 10,000 URLs of up to 2 KiB each, as the servers take
  // (CreateChannelFor sets the receive limit).
  args.SetMaxSendMessageSize(64 << 20);
  client::ClientTlsOptions tls;
  tls.server_name = options.tls_server_name;
  return client::CreateChannelFor(
      options.target,
      options.credentials != nullptr ? options.credentials : grpc::InsecureChannelCredentials(),
      tls, args);
}

}  // namespace

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::Duration BackoffDelays::Next(double uniform) {
  absl::Duration d = backoff_.initial;
  for (int i = 0; i < attempt_ && d < backoff_.max; ++i) {
    d = d * backoff_.multiplier;
  }
  ++attempt_;
  d = std::min(d, backoff_.max);
  return d * (1.0 + backoff_.jitter * (2.0 * uniform - 1.0));
}

Rpc::Rpc(ClientOptions options) : options_(std::move(options)), channel_(MakeChannel(options_)) {
  if (!options_.token.empty()) token_status_ = cluster::ValidateToken(options_.token);
}

void Rpc::Prepare(grpc::ClientContext* context, absl::Duration deadline) const {
  if (token_status_.ok()) client::AttachToken(context, options_.token);
  if (deadline != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  }
}

double Rpc::Now() const {
  if (options_.clock) return options_.clock();
  return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
}

void Rpc::WaitCoordinatorSeconds(double coordinator_seconds) const {
  Sleep(absl::Seconds(std::max(coordinator_seconds, 0.0) / options_.time_scale));
}

void Rpc::Sleep(absl::Duration d) const {
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    absl::SleepFor(d);
  }
}

}  // namespace client
}  // namespace recrawl
