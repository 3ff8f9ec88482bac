// The acknowledgements of one client's StreamSignals on the coordinator.
// A client batch is split by shard; it is acknowledged once every part's
// shard has acknowledged its part (durably) or failed it, and the client's
// acks go out in the order of its batches. The ack of a batch counts what
// its parts' acks count and lists rejected and unknown items by their
// index in the client's batch.
//
// Thread-safe: parts complete on the shard streams' threads; whichever
// completes the batch at the head writes the acks now due.
#ifndef RECRAWL_SERVICES_SIGNAL_ACKS_H_
#define RECRAWL_SERVICES_SIGNAL_ACKS_H_

#include <deque>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace services {

class OrderedSignalAcks {
 public:
  // Writes one ack to the client; false once the stream is broken (no
  // more writes then).
  using Write = std::function<bool(const SignalBatchAck& ack)>;
  struct Batch;

  explicit OrderedSignalAcks(Write write) : write_(std::move(write)) {}

  // A client batch whose `ack` has its sequence and the items rejected so
  // far; `parts` parts of it are on their way to shards.
  std::shared_ptr<Batch> Add(SignalBatchAck ack, int parts) ABSL_LOCKS_EXCLUDED(mu_);
  // `shard` answered for a part of `batch` whose item k was item
  // indexes[k] of the client's batch: with its ack, or with the error that
  // lost the part (its items rejected with that status).
  void PartDone(const std::shared_ptr<Batch>& batch, int shard, const std::vector<int>& indexes,
                const grpc::Status& status, const SignalBatchAck& part_ack)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until every batch added is acknowledged (or the stream broke).
  void AwaitDrained() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool Drained() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return order_.empty(); }
  // Writes the acks of the completed batches at the head.
  void Flush() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Write write_;
  absl::Mutex mu_;
  std::deque<std::shared_ptr<Batch>> order_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = true;
};

struct OrderedSignalAcks::Batch {
  SignalBatchAck ack;
  int outstanding = 0;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SIGNAL_ACKS_H_
