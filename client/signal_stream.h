// One StreamSignals stream to one server (the coordinator or a shard) that
// survives the server: batches are numbered, kept until their
// acknowledgement, and sent again, in order and with their numbers, on a
// new stream when the old one breaks. A batch whose acknowledgement was
// lost is thus delivered twice; the server counts a (URL, time, source)
// once, so the second delivery only shows up in SignalBatchAck.duplicate
// (PingClient gives every signal an explicit time for that reason).
#ifndef RECRAWL_CLIENT_SIGNAL_STREAM_H_
#define RECRAWL_CLIENT_SIGNAL_STREAM_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "client/rpc.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"

namespace recrawl {
namespace client {

class SignalStream {
 public:
  using Stream = grpc::ClientReaderWriter<SignalBatch, SignalBatchAck>;
  // Opens a StreamSignals call (CoordinatorService's or ShardService's).
  using OpenFn = std::function<std::unique_ptr<Stream>(grpc::ClientContext* context)>;
  // Called for each acknowledged batch, on the stream's reader thread.
  using AckFn = std::function<void(const SignalBatch& batch, const SignalBatchAck& ack)>;
  // Called for each batch that is given up after an error the server will
  // keep giving (e.g. PERMISSION_DENIED), with that error.
  using DropFn = std::function<void(const SignalBatch& batch, const absl::Status& error)>;

  // `rpc` must outlive the stream. Keeps at most `max_in_flight` batches
  // unacknowledged.
  SignalStream(const Rpc* rpc, OpenFn open, int max_in_flight, AckFn on_ack, DropFn on_drop);
  // Cancels the stream; unacknowledged batches are lost (Drain first).
  ~SignalStream();
  SignalStream(const SignalStream&) = delete;
  SignalStream& operator=(const SignalStream&) = delete;

  // Sends a numbered copy of `batch`, first waiting while max_in_flight batches
  // are unacknowledged. Not thread-safe against other Send/Drain calls.
  absl::Status Send(const SignalBatch& batch);
  // Waits until every batch sent is acknowledged.
  absl::Status Drain();
  // Both return UNAVAILABLE when the server stays unreachable (the batches
  // are kept and sent again by the next call), or the error that ended the
  // stream when sending again cannot help (PERMISSION_DENIED, ...; the
  // unacknowledged batches then go to the DropFn).

  // Batches sent again on a new stream, and streams opened again.
  uint64_t resent_batches() const;
  uint64_t reconnects() const;

 private:
  // Waits (mu_ held) until `done` (and, with `need_stream`, a stream is
  // open); on a broken stream reconnects (with backoff, up to
  // options.max_attempts times without an acknowledgement in between) and
  // waits again.
  absl::Status WaitUntil(bool (SignalStream::*done)() const, bool need_stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasRoom() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool AllAcked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Ends the current stream (if any; cancelling it first if `cancel`) and
  // returns its status.
  grpc::Status CloseStream(bool cancel) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Opens a new stream and writes every unacknowledged batch to it.
  void OpenStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReadAcks(Stream* stream);

  const Rpc* const rpc_;
  const OpenFn open_;
  const int max_in_flight_;
  const AckFn on_ack_;
  const DropFn on_drop_;

  mutable absl::Mutex mu_;
  std::deque<SignalBatch> unacked_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t acks_ ABSL_GUARDED_BY(mu_) = 0;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t resent_batches_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  // Replaced only by the sending thread; read by the reader thread it
  // starts.
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<Stream> stream_;
  std::thread reader_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_SIGNAL_STREAM_H_
