#include "client/ping_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/shard.grpc.pb.h"

namespace recrawl {
namespace client {

// A stream and the batch being filled for it.
struct PingClient::Destination {
  std::unique_ptr<Rpc> rpc;  // null: the coordinator's (PingClient::rpc_)
  std::unique_ptr<CoordinatorService::Stub> coordinator;
  std::unique_ptr<ShardService::Stub> shard;
  std::unique_ptr<SignalStream> stream;
  SignalBatch pending;
};

absl::StatusOr<std::unique_ptr<PingClient>> PingClient::Create(ClientOptions options,
                                                               PingOptions ping) {
  std::unique_ptr<PingClient> client(new PingClient(std::move(options), std::move(ping)));
  if (client->ping_.route_to_shards) {
    auto stub = CoordinatorService::NewStub(client->rpc_.channel());
    ShardMap map;
    absl::Status status = client->rpc_.CallIdempotent([&](grpc::ClientContext* context) {
      return stub->GetShardMap(context, GetShardMapRequest(), &map);
    });
    if (!status.ok()) return status;
    if (status = client->Route(map); !status.ok()) return status;
  }
  return client;
}

PingClient::PingClient(ClientOptions options, PingOptions ping)
    : rpc_(std::move(options)), ping_(std::move(ping)) {
  coordinator_ = std::make_unique<Destination>();
  coordinator_->coordinator = CoordinatorService::NewStub(rpc_.channel());
  CoordinatorService::Stub* stub = coordinator_->coordinator.get();
  coordinator_->stream = std::make_unique<SignalStream>(
      &rpc_, [stub](grpc::ClientContext* context) { return stub->StreamSignals(context); },
      ping_.max_in_flight, [this](const SignalBatch& b, const SignalBatchAck& a) { OnAck(b, a); },
      [this](const SignalBatch& b, const absl::Status& e) { OnDrop(b, e); });
}

PingClient::~PingClient() {
  // The streams' reader threads call back into this object: end them first.
  shards_.clear();
  coordinator_.reset();
}

absl::Status PingClient::Route(const ShardMap& map) {
  if (map.num_shards() < 1 || map.addresses_size() > map.num_shards()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "shard map: ", map.num_shards(), " shards but ", map.addresses_size(), " addresses"));
  }
  absl::StatusOr<cluster::Routing> routing = cluster::RoutingOfHashName(map.hash());
  if (!routing.ok()) {
    // A rule this client does not know: everything goes through the
    // coordinator, which routes it.
    return absl::OkStatus();
  }
  const int num_shards = static_cast<int>(map.num_shards());
  router_.emplace(*routing, num_shards);
  shards_.resize(num_shards);
  // The client's backoff and clock, the shards' token and channels.
  ClientOptions shard_options = rpc_.options();
  if (!ping_.shard_token.empty()) shard_options.token = ping_.shard_token;
  if (ping_.shard_credentials != nullptr) {
    shard_options.credentials = ping_.shard_credentials;
    shard_options.tls_server_name = ping_.shard_tls_server_name;
  }
  for (int s = 0; s < map.addresses_size(); ++s) {
    const bool live = s < map.live_size() && map.live(s);
    if (map.addresses(s).empty() || !live) continue;
    auto d = std::make_unique<Destination>();
    shard_options.target = map.addresses(s);
    d->rpc = std::make_unique<Rpc>(shard_options);
    d->shard = ShardService::NewStub(d->rpc->channel());
    ShardService::Stub* stub = d->shard.get();
    d->stream = std::make_unique<SignalStream>(
        d->rpc.get(), [stub](grpc::ClientContext* context) { return stub->StreamSignals(context); },
        ping_.max_in_flight, [this](const SignalBatch& b, const SignalBatchAck& a) { OnAck(b, a); },
        [this](const SignalBatch& b, const absl::Status& e) { OnDrop(b, e); });
    shards_[s] = std::move(d);
  }
  return absl::OkStatus();
}

int PingClient::routed_shards() const {
  int n = 0;
  for (const auto& d : shards_) n += d != nullptr;
  return n;
}

PingClient::Destination& PingClient::DestinationOf(const Signal& signal, absl::Status* error) {
  if (!router_.has_value()) return *coordinator_;
  absl::StatusOr<int> s = router_->ShardOf(signal.url());
  if (!s.ok()) {
    *error = s.status();
    return *coordinator_;
  }
  return shards_[*s] != nullptr ? *shards_[*s] : *coordinator_;
}

absl::Status PingClient::Add(Signal signal) {
  if (signal.time() == 0.0) signal.set_time(rpc_.Now());
  absl::Status error;
  Destination& d = DestinationOf(signal, &error);
  if (!error.ok()) {
    absl::MutexLock lock(&mu_);
    ++stats_.rejected;
    rejected_.push_back({std::move(signal), error});
    return absl::OkStatus();
  }
  *d.pending.add_signals() = std::move(signal);
  if (d.pending.signals_size() < ping_.batch_size) return absl::OkStatus();
  return Ship(d);
}

absl::Status PingClient::Ship(Destination& d) {
  d.pending.set_sync(ping_.sync);
  absl::Status status = d.stream->Send(d.pending);
  // UNAVAILABLE: kept for the next call. Other errors would come again.
  if (!status.ok() && !absl::IsUnavailable(status)) OnDrop(d.pending, status);
  if (status.ok() || !absl::IsUnavailable(status)) d.pending.Clear();
  return status;
}

absl::Status PingClient::ShipAndDrain() {
  std::vector<Destination*> all;
  for (auto& d : shards_) {
    if (d != nullptr) all.push_back(d.get());
  }
  all.push_back(coordinator_.get());
  absl::Status first_error;
  for (Destination* d : all) {
    if (d->pending.signals_size() > 0) first_error.Update(Ship(*d));
  }
  for (Destination* d : all) first_error.Update(d->stream->Drain());
  return first_error;
}

absl::Status PingClient::Flush() {
  BackoffDelays delays(rpc_.options().backoff);
  for (int round = 1;; ++round) {
    if (absl::Status s = ShipAndDrain(); !s.ok()) return s;
    std::vector<Signal> again;
    {
      absl::MutexLock lock(&mu_);
      again.swap(retry_);
      if (!again.empty() && round >= rpc_.options().max_attempts) {
        for (Signal& signal : again) {
          ++stats_.rejected;
          rejected_.push_back(
              {std::move(signal), absl::UnavailableError(absl::StrCat("not delivered in ", round,
                                                                      " attempts: its shard is out "
                                                                      "or unreachable"))});
        }
        again.clear();
      }
      stats_.retried += again.size();
    }
    if (again.empty()) return absl::OkStatus();
    rpc_.Sleep(delays.Next());
    for (Signal& signal : again) {
      if (absl::Status s = Add(std::move(signal)); !s.ok()) return s;
    }
  }
}

void PingClient::OnAck(const SignalBatch& batch, const SignalBatchAck& ack) {
  absl::MutexLock lock(&mu_);
  ++stats_.acknowledged;
  stats_.counted += ack.counted();
  stats_.registered += ack.registered();
  stats_.duplicate += ack.duplicate();
  stats_.stale += ack.stale();
  stats_.unknown += ack.unknown();
  for (uint32_t k : ack.unknown_indexes()) {
    if (k < static_cast<uint32_t>(batch.signals_size())) {
      unknown_.push_back(batch.signals(static_cast<int>(k)));
    }
  }
  for (const ItemStatus& item : ack.result().rejected()) {
    Signal signal;
    if (item.index() < static_cast<uint32_t>(batch.signals_size())) {
      signal = batch.signals(static_cast<int>(item.index()));
    }
    if (item.code() == static_cast<int>(absl::StatusCode::kUnavailable) && !signal.url().empty()) {
      retry_.push_back(std::move(signal));  // Flush sends it again
      continue;
    }
    ++stats_.rejected;
    rejected_.push_back({std::move(signal),
                         absl::Status(static_cast<absl::StatusCode>(item.code()), item.message())});
  }
}

void PingClient::OnDrop(const SignalBatch& batch, const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  for (const Signal& signal : batch.signals()) {
    ++stats_.rejected;
    rejected_.push_back({signal, error});
  }
}

PingStats PingClient::stats() const {
  PingStats stats;
  {
    absl::MutexLock lock(&mu_);
    stats = stats_;
  }
  auto add_stream = [&](const Destination* d) {
    if (d == nullptr) return;
    stats.resent_batches += d->stream->resent_batches();
    stats.reconnects += d->stream->reconnects();
  };
  for (const auto& d : shards_) add_stream(d.get());
  add_stream(coordinator_.get());
  return stats;
}

std::vector<RejectedSignal> PingClient::TakeRejected() {
  absl::MutexLock lock(&mu_);
  return std::exchange(rejected_, {});
}

std::vector<Signal> PingClient::TakeUnknown() {
  absl::MutexLock lock(&mu_);
  return std::exchange(unknown_, {});
}

}  // namespace client
}  // namespace recrawl
