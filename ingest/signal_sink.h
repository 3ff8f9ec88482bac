// Where the gateway's signals go: the coordinator's StreamSignals, through
// client::PingClient, and a caller waits until its own signals are
// acknowledged (durably, with PingOptions::sync) before answering its HTTP
// request.
//
// Requests are committed in groups, on lanes: each lane is a PingClient
// (its own stream) and a thread that takes every request queued when it
// is free, adds all their signals to its client and flushes it, so that
// concurrent HTTP requests share batches and round trips, and while one
// lane waits for its acknowledgements the others send. PingClient::Flush
// covers exactly what was added since the previous one, and a lane's
// thread is its client's only user, so a group's acknowledgements,
// rejections and unknown URLs are the group's own; they are given back to
// each request by its signals.
//
// A lane may make its client afresh before a group (ClientRenewal): a
// client that sends straight to the shards reads the shard map only when
// it is made, so a shard that moved to another address, or was out then,
// is found again at the next renewal. The old client has nothing in flight
// then (each group ends with a Flush).
//
// Thread-safe: Deliver may be called from any number of threads.
#ifndef RECRAWL_INGEST_SIGNAL_SINK_H_
#define RECRAWL_INGEST_SIGNAL_SINK_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/ping_client.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace ingest {

// What became of one Deliver call's signals once acknowledged.
struct DeliveryReport {
  // Acknowledged by their shard (counted, registered, duplicate or stale).
  size_t accepted = 0;
  // Acknowledged and skipped: the cluster does not know the URL.
  size_t unknown = 0;
  // Not taken (malformed for the shard, or not delivered after the
  // client's retries); the first reason in `error`.
  size_t rejected = 0;
  absl::Status error;
};

class SignalSink {
 public:
  virtual ~SignalSink() = default;
  // Sends `signals` and blocks until each is acknowledged or rejected.
  // Not OK only when the stream itself failed (the coordinator unreachable
  // after the client's retries, or a refused token): then nothing is known
  // to be delivered.
  virtual absl::StatusOr<DeliveryReport> Deliver(std::vector<Signal> signals) = 0;
};

// When and how a lane makes its client afresh, before sending a group:
// when its previous group's delivery failed or had signals not delivered
// (UNAVAILABLE or DEADLINE_EXCEEDED: a shard unreachable at the address the
// client has), and when the client was made `period` ago or more (zero:
// before every group). A lane whose `create` fails keeps its client and
// tries again at the next such group. No `create`: clients are kept.
struct ClientRenewal {
  std::function<absl::StatusOr<std::unique_ptr<client::PingClient>>()> create;
  absl::Duration period = absl::InfiniteDuration();
};

// The SignalSink over PingClients (group commit on lanes, see the file
// comment).
class PingClientSink : public SignalSink {
 public:
  // One lane per client; `clients` must not be empty.
  explicit PingClientSink(std::vector<std::unique_ptr<client::PingClient>> clients,
                          ClientRenewal renewal = {});
  // Finishes the groups queued, then stops.
  ~PingClientSink() override;

  absl::StatusOr<DeliveryReport> Deliver(std::vector<Signal> signals) override;

 private:
  struct Request {
    std::vector<Signal> signals;
    absl::StatusOr<DeliveryReport> result;
    bool done = false;
  };
  // Lane `lane`'s thread, the only user of clients_[lane].
  void Run(size_t lane);
  // Sends one group through `client` and fills in each request's result.
  // False when the delivery failed or some signal was not delivered.
  static bool Commit(client::PingClient* client, const std::vector<Request*>& group);

  const ClientRenewal renewal_;
  std::vector<std::unique_ptr<client::PingClient>> clients_;
  absl::Mutex mu_;
  std::deque<Request*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> lanes_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_SIGNAL_SINK_H_
