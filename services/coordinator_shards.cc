#include "services/coordinator_shards.h"

#include <utility>

#include "client/credentials.h"

namespace recrawl {
namespace services {

ShardService::Stub* ShardChannels::Stub(const std::string& address) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<ShardService::Stub>& stub = stubs_[address];
  if (stub == nullptr) {
    // A shard that comes back is seen at the next probe: reconnect at
    // least every 0.5 s (gRPC's default backoff grows to two minutes).
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    stub = ShardService::NewStub(
        client::CreateChannelFor(address, credentials_, tls_, std::move(args)));
  }
  return stub.get();
}

void ShardChannels::Prepare(grpc::ClientContext* context, double deadline_seconds) const {
  client::AttachToken(context, token_);
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(deadline_seconds)));
}

}  // namespace services
}  // namespace recrawl
