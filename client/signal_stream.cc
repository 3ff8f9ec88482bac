#include "client/signal_stream.h"

#include <utility>
#include <vector>

namespace recrawl {
namespace client {
namespace {

// Errors after which sending the same batches again can succeed: the server
// went away (UNAVAILABLE), or ended the stream without an error while
// batches were unacknowledged (a graceful shutdown).
bool Retryable(const grpc::Status& status) {
  return status.ok() || status.error_code() == grpc::StatusCode::UNAVAILABLE;
}

}  // namespace

SignalStream::SignalStream(const Rpc* rpc, OpenFn open, int max_in_flight, AckFn on_ack,
                           DropFn on_drop)
    : rpc_(rpc),
      open_(std::move(open)),
      max_in_flight_(max_in_flight < 1 ? 1 : max_in_flight),
      on_ack_(std::move(on_ack)),
      on_drop_(std::move(on_drop)) {
  broken_ = true;  // not connected yet: the first Send opens the stream
}

SignalStream::~SignalStream() {
  absl::MutexLock lock(&mu_);
  CloseStream(/*cancel=*/true);
}

uint64_t SignalStream::resent_batches() const {
  absl::MutexLock lock(&mu_);
  return resent_batches_;
}

uint64_t SignalStream::reconnects() const {
  absl::MutexLock lock(&mu_);
  return reconnects_;
}

bool SignalStream::HasRoom() const { return static_cast<int>(unacked_.size()) < max_in_flight_; }

bool SignalStream::AllAcked() const { return unacked_.empty(); }

absl::Status SignalStream::Send(const SignalBatch& batch) {
  absl::MutexLock lock(&mu_);
  absl::Status s = WaitUntil(&SignalStream::HasRoom, /*need_stream=*/true);
  if (!s.ok()) return s;
  SignalBatch numbered = batch;
  numbered.set_sequence(next_sequence_++);
  unacked_.push_back(numbered);
  Stream* stream = stream_.get();
  // Not under mu_: a Write can wait for flow control, which waits for the
  // reader thread to take acknowledgements, which needs mu_.
  mu_.Unlock();
  const bool written = stream->Write(numbered);
  mu_.Lock();
  if (!written) broken_ = true;  // the batch is resent on the next stream
  return absl::OkStatus();
}

absl::Status SignalStream::Drain() {
  absl::MutexLock lock(&mu_);
  return WaitUntil(&SignalStream::AllAcked, /*need_stream=*/false);
}

absl::Status SignalStream::WaitUntil(bool (SignalStream::*done)() const, bool need_stream) {
  BackoffDelays delays(rpc_->options().backoff);
  int attempts = 0;
  uint64_t acks_seen = acks_;
  for (;;) {
    auto done_or_broken = [&] { return (this->*done)() || broken_; };
    mu_.Await(absl::Condition(&done_or_broken));
    if ((this->*done)() && !(need_stream && broken_)) {
      return absl::OkStatus();
    }
    const bool was_open = stream_ != nullptr;
    const grpc::Status status = CloseStream(/*cancel=*/false);
    if (!Retryable(status)) {
      for (const SignalBatch& batch : unacked_) {
        on_drop_(batch, FromGrpcStatus(status));
      }
      unacked_.clear();
      return FromGrpcStatus(status);
    }
    if (acks_ != acks_seen) {
      acks_seen = acks_;
      attempts = 0;
      delays.Reset();
    }
    if (was_open && ++attempts >= rpc_->options().max_attempts) {
      return absl::UnavailableError("signal stream: server unreachable; " +
                                    std::to_string(unacked_.size()) +
                                    " batches kept to send again: " + status.error_message());
    }
    if (was_open) {
      const absl::Duration wait = delays.Next();
      mu_.Unlock();
      rpc_->Sleep(wait);
      mu_.Lock();
      ++reconnects_;
    }
    OpenStream();
  }
}

grpc::Status SignalStream::CloseStream(bool cancel) {
  if (stream_ == nullptr) return grpc::Status::OK;
  // A broken stream (a failed write, or the reader saw its end) is left to
  // end by itself: cancelling it could hide the server's status (e.g.
  // PERMISSION_DENIED) behind CANCELLED.
  if (cancel) context_->TryCancel();
  mu_.Unlock();  // the reader may be waiting for mu_
  reader_.join();
  grpc::Status status = stream_->Finish();
  mu_.Lock();
  stream_.reset();
  context_.reset();
  // CANCELLED: by us, or by a server shutting down; try again.
  if (status.error_code() == grpc::StatusCode::CANCELLED) {
    status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream broken");
  }
  return status;
}

void SignalStream::OpenStream() {
  context_ = std::make_unique<grpc::ClientContext>();
  rpc_->Prepare(context_.get());
  stream_ = open_(context_.get());
  broken_ = false;
  Stream* stream = stream_.get();
  reader_ = std::thread([this, stream] { ReadAcks(stream); });
  const std::vector<SignalBatch> resend(unacked_.begin(), unacked_.end());
  resent_batches_ += resend.size();
  mu_.Unlock();
  bool written = true;
  for (const SignalBatch& batch : resend) {
    if (!(written = stream->Write(batch))) break;
  }
  mu_.Lock();
  if (!written) broken_ = true;
}

void SignalStream::ReadAcks(Stream* stream) {
  SignalBatchAck ack;
  while (stream->Read(&ack)) {
    absl::MutexLock lock(&mu_);
    // Acknowledgements come in order, so this is the front batch; one for
    // no batch kept (a server bug) is ignored.
    for (auto it = unacked_.begin(); it != unacked_.end(); ++it) {
      if (it->sequence() == ack.sequence()) {
        on_ack_(*it, ack);
        unacked_.erase(it);
        ++acks_;
        break;
      }
    }
  }
  absl::MutexLock lock(&mu_);
  broken_ = true;
}

}  // namespace client
}  // namespace recrawl
