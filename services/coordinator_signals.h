// One long-lived StreamSignals stream per shard, shared by every client
// stream of the coordinator: a client batch is split by shard, each part
// goes on its shard's stream under a sequence number of the coordinator's,
// and the part's acknowledgement comes back to a callback. A long-lived
// stream keeps several parts in flight per shard (the shard acks in order
// once durable) instead of one round trip per part.
//
// A stream that breaks fails its unacknowledged parts (the client then
// resends; the shard counts duplicates once) and is reopened at the next
// part.
#ifndef RECRAWL_SERVICES_COORDINATOR_SIGNALS_H_
#define RECRAWL_SERVICES_COORDINATOR_SIGNALS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/coordinator_shards.h"

namespace recrawl {
namespace services {

class ShardSignalStreams {
 public:
  // Runs once per part: with the shard's ack, or with the error that lost
  // the part.
  using Done = std::function<void(const grpc::Status& status, const SignalBatchAck& ack)>;

  ShardSignalStreams(ShardChannels* channels, int num_shards);
  ~ShardSignalStreams();

  // Sends `*part` (its sequence is replaced) to shard `shard` at `address`.
  // `*part` is free for reuse when Send returns.
  void Send(int shard, const std::string& address, SignalBatch* part, Done done);

  // Ends shard `shard`'s stream (it went out), failing its pending parts.
  void Reset(int shard);

 private:
  struct Connection;
  std::shared_ptr<Connection> Open(const std::string& address);
  static void ReadAcks(Connection* connection);

  ShardChannels* const channels_;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<Connection>> streams_ ABSL_GUARDED_BY(mu_);
  // Replaced connections, joined at destruction.
  std::vector<std::shared_ptr<Connection>> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_COORDINATOR_SIGNALS_H_
