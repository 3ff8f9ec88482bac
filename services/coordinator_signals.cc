#include "services/coordinator_signals.h"

#include <utility>

namespace recrawl {
namespace services {

struct ShardSignalStreams::Connection {
  std::string address;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<SignalBatch, SignalBatchAck>> stream;
  std::thread reader;

  absl::Mutex mu;
  uint64_t next_sequence ABSL_GUARDED_BY(mu) = 1;
  std::map<uint64_t, Done> pending ABSL_GUARDED_BY(mu);
  bool broken ABSL_GUARDED_BY(mu) = false;
};

ShardSignalStreams::ShardSignalStreams(ShardChannels* channels, int num_shards)
    : channels_(channels), streams_(num_shards) {}

ShardSignalStreams::~ShardSignalStreams() {
  std::vector<std::shared_ptr<Connection>> all;
  {
    absl::MutexLock lock(&mu_);
    all = retired_;
    for (auto& c : streams_) {
      if (c != nullptr) all.push_back(c);
    }
  }
  for (auto& c : all) c->context.TryCancel();
  for (auto& c : all) {
    if (c->reader.joinable()) c->reader.join();
  }
}

std::shared_ptr<ShardSignalStreams::Connection> ShardSignalStreams::Open(
    const std::string& address) {
  auto connection = std::make_shared<Connection>();
  connection->address = address;
  // No deadline: the stream lives as long as the shard answers.
  channels_->Prepare(&connection->context, 365.0 * 86400);
  connection->stream = channels_->Stub(address)->StreamSignals(&connection->context);
  connection->reader = std::thread(&ShardSignalStreams::ReadAcks, connection.get());
  return connection;
}

void ShardSignalStreams::ReadAcks(Connection* connection) {
  SignalBatchAck ack;
  while (connection->stream->Read(&ack)) {
    Done done;
    {
      absl::MutexLock lock(&connection->mu);
      auto it = connection->pending.find(ack.sequence());
      if (it == connection->pending.end()) continue;
      done = std::move(it->second);
      connection->pending.erase(it);
    }
    done(grpc::Status::OK, ack);
  }
  std::map<uint64_t, Done> lost;
  grpc::Status status;
  {
    absl::MutexLock lock(&connection->mu);
    connection->broken = true;
    // Writes hold the lock, so none is in progress while the stream ends.
    status = connection->stream->Finish();
    lost.swap(connection->pending);
  }
  const grpc::Status failure(grpc::StatusCode::UNAVAILABLE,
                             "signal stream to shard at " + connection->address +
                                 " ended: " + status.error_message() + "; resend the batch");
  for (auto& [sequence, done] : lost) done(failure, SignalBatchAck());
}

void ShardSignalStreams::Send(int shard, const std::string& address, SignalBatch* part, Done done) {
  std::shared_ptr<Connection> connection;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<Connection>& current = streams_[shard];
    bool usable = current != nullptr && current->address == address;
    if (usable) {
      absl::MutexLock connection_lock(&current->mu);
      usable = !current->broken;
    }
    if (!usable) {
      if (current != nullptr) {
        current->context.TryCancel();
        retired_.push_back(current);
      }
      current = Open(address);
    }
    connection = current;
  }
  absl::ReleasableMutexLock lock(&connection->mu);
  if (connection->broken) {
    lock.Release();
    done(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "signal stream to shard at " + address + " broke; resend the batch"),
         SignalBatchAck());
    return;
  }
  const uint64_t sequence = connection->next_sequence++;
  part->set_sequence(sequence);
  connection->pending.emplace(sequence, std::move(done));
  if (!connection->stream->Write(*part)) {
    // The reader sees the end of the stream and fails the pending parts,
    // this one included.
    connection->context.TryCancel();
  }
}

void ShardSignalStreams::Reset(int shard) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Connection>& current = streams_[shard];
  if (current == nullptr) return;
  current->context.TryCancel();
  retired_.push_back(current);
  current = nullptr;
}

}  // namespace services
}  // namespace recrawl
