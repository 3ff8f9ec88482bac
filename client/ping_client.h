// A ping source's side of recrawl: change-indicating signals, batched and
// streamed to the coordinator (or, with routing, straight to the shards
// that own them), resent after a broken stream without being counted twice.
//
//   auto pinger = PingClient::Create(options, {});
//   for (...) (*pinger)->Add(signal);
//   (*pinger)->Flush();                 // every signal acknowledged
//   for (auto& r : (*pinger)->TakeRejected()) ...;
//
// Exactly once: batches carry sequence numbers and are kept until their
// acknowledgement (SignalStream); a batch whose acknowledgement a broken
// stream lost is sent again, and the shard counts a (URL, time, source)
// only once. A signal without a time would get the shard's receive time,
// which differs between deliveries, so Add gives it the client's time
// (ClientOptions::clock) first.
#ifndef RECRAWL_CLIENT_PING_CLIENT_H_
#define RECRAWL_CLIENT_PING_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/client_options.h"
#include "client/rpc.h"
#include "client/signal_stream.h"
#include "cluster/routing.h"
#include "proto/coordinator.grpc.pb.h"

namespace recrawl {
namespace client {

struct PingOptions {
  // Signals per batch.
  int batch_size = 1000;
  // Batches sent and not yet acknowledged, per stream.
  int max_in_flight = 8;
  // Fetch the shard map at Create and send each signal straight to the
  // shard that owns its URL (cluster/routing.h, by the map's rule); signals
  // of shards that are out, or all of them when the map's rule is one this
  // client does not know, go through the coordinator. The map is read only
  // at Create: to follow a shard that moved to another address or came
  // back, make a new client (ingest::ClientRenewal does so for the
  // gateway's streams).
  bool route_to_shards = false;
  // The token the shards accept (the internal role). Empty: the client's.
  std::string shard_token;
  // The channels to the shards: their credentials (client::
  // ChannelCredentialsFor; with a client certificate where the shards ask
  // for one) and the name to verify in their certificates (the shard map
  // gives addresses, often IPs). Null credentials: the client's own
  // (ClientOptions::credentials and tls_server_name).
  std::shared_ptr<grpc::ChannelCredentials> shard_credentials;
  std::string shard_tls_server_name;
  // Ask for an fsync before each acknowledgement.
  bool sync = false;
};

// Totals over the acknowledged batches (SignalBatchAck's counters). A
// batch sent again after its acknowledgement was lost has its signals
// counted by the first delivery and shown here as duplicates.
struct PingStats {
  uint64_t acknowledged = 0;
  uint64_t counted = 0;
  uint64_t registered = 0;
  uint64_t duplicate = 0;
  uint64_t stale = 0;
  uint64_t unknown = 0;
  // Rejected by a server or before sending (malformed URL when routing).
  uint64_t rejected = 0;
  // Sent again because a server answered UNAVAILABLE for them (the
  // coordinator does for a shard that is out or whose stream broke).
  uint64_t retried = 0;
  uint64_t resent_batches = 0;
  uint64_t reconnects = 0;
};

struct RejectedSignal {
  Signal signal;
  absl::Status status;
};

class PingClient {
 public:
  static absl::StatusOr<std::unique_ptr<PingClient>> Create(ClientOptions options,
                                                            PingOptions ping = {});
  PingClient(const PingClient&) = delete;
  PingClient& operator=(const PingClient&) = delete;
  // Signals not flushed are lost.
  ~PingClient();

  // Queues `signal` (with the client's time if it has none) and sends its
  // batch once full. UNAVAILABLE: the server could not be reached after
  // ClientOptions::max_attempts tries; everything queued is kept and goes
  // with the next call. Another error (e.g. PERMISSION_DENIED) ended the
  // stream: the signals not acknowledged are rejected with it
  // (TakeRejected). Not thread-safe: one thread adds and flushes.
  absl::Status Add(Signal signal);
  // Sends the partial batches and waits until every batch is acknowledged.
  // Signals the server answered UNAVAILABLE for (per item) are sent again
  // after a backoff, up to ClientOptions::max_attempts rounds; then they
  // are rejected with that status.
  absl::Status Flush();

  PingStats stats() const;
  // The rejected signals since the last call, with the reason.
  std::vector<RejectedSignal> TakeRejected();
  // The signals since the last call whose URL the cluster does not know
  // (acknowledged and skipped, PingStats::unknown).
  std::vector<Signal> TakeUnknown();
  // Shards with a direct stream (0 without routing).
  int routed_shards() const;

 private:
  struct Destination;
  PingClient(ClientOptions options, PingOptions ping);
  absl::Status Route(const ShardMap& map);
  Destination& DestinationOf(const Signal& signal, absl::Status* error);
  absl::Status Ship(Destination& destination);
  // Ships every partial batch and drains every stream.
  absl::Status ShipAndDrain();
  void OnAck(const SignalBatch& batch, const SignalBatchAck& ack);
  void OnDrop(const SignalBatch& batch, const absl::Status& error);

  Rpc rpc_;
  const PingOptions ping_;
  // The shard map's routing; none: everything goes through the coordinator.
  std::optional<cluster::ShardRouter> router_;
  // By shard index (null: through the coordinator), then the coordinator.
  std::vector<std::unique_ptr<Destination>> shards_;
  std::unique_ptr<Destination> coordinator_;

  mutable absl::Mutex mu_;
  PingStats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<RejectedSignal> rejected_ ABSL_GUARDED_BY(mu_);
  std::vector<Signal> unknown_ ABSL_GUARDED_BY(mu_);
  std::vector<Signal> retry_ ABSL_GUARDED_BY(mu_);
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_PING_CLIENT_H_
