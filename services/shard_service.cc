#include "services/shard_service.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "services/parse_errors.h"

namespace recrawl {
namespace services {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Only the cluster's own processes (the coordinator, a PingClient that
// routes to shards) call shards.
constexpr cluster::Roles kShardRoles{cluster::Role::kInternal};

}  // namespace

template <typename Response, typename Fn>
grpc::Status ShardServiceImpl::Run(const grpc::ServerContext* context, const char* method, Fn fn,
                                   Response* response) {
  const auto start = std::chrono::steady_clock::now();
  if (context != nullptr) {
    grpc::Status allowed = authorizer_->Check(*context, method, kShardRoles);
    if (!allowed.ok()) {
      metrics_->Rpc(method, allowed.error_code(), SecondsSince(start));
      return allowed;
    }
  }
  absl::StatusOr<Response> result;
  {
    absl::MutexLock lock(&mu_);
    result = fn(clock_->Now());
  }
  const grpc::Status status = ToGrpcStatus(result.status());
  if (result.ok()) *response = *std::move(result);
  metrics_->Rpc(method, status.error_code(), SecondsSince(start));
  return status;
}

void ShardServiceImpl::CountRejected(const char* kind, const BatchResult& result) {
  metrics_->Items(kind, "applied", result.applied());
  metrics_->Items(kind, "rejected", result.rejected_size());
}

grpc::Status ShardServiceImpl::UpsertUrls(grpc::ServerContext* context,
                                          const UpsertUrlsRequest* request,
                                          UpsertUrlsResponse* response) {
  grpc::Status s = Run(
      context, "UpsertUrls", [&](double now) { return shard_->UpsertUrls(*request, now); },
      response);
  if (s.ok()) CountRejected("upserts", response->result());
  return s;
}

grpc::Status ShardServiceImpl::DeleteUrls(grpc::ServerContext* context,
                                          const DeleteUrlsRequest* request,
                                          DeleteUrlsResponse* response) {
  grpc::Status s = Run(
      context, "DeleteUrls", [&](double now) { return shard_->DeleteUrls(*request, now); },
      response);
  if (s.ok()) CountRejected("deletes", response->result());
  return s;
}

// One acknowledgement per batch, in order, each after its batch is durable.
// A failed batch ends the stream with its status; the client resends what
// was not acknowledged (duplicates count once).
grpc::Status ShardServiceImpl::StreamSignals(
    grpc::ServerContext* context, grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) {
  // Checked once for the stream, not per batch.
  if (grpc::Status allowed = authorizer_->Check(*context, "StreamSignals", kShardRoles);
      !allowed.ok()) {
    return allowed;
  }
  SignalBatch batch;
  while (stream->Read(&batch)) {
    SignalBatchAck ack;
    grpc::Status s = Run(
        nullptr, "StreamSignals.batch",
        [&](double now) { return shard_->IngestSignals(batch, now); }, &ack);
    if (!s.ok()) return s;
    metrics_->Items("signals", "counted", ack.counted());
    metrics_->Items("signals", "registered", ack.registered());
    metrics_->Items("signals", "duplicate", ack.duplicate());
    metrics_->Items("signals", "stale", ack.stale());
    metrics_->Items("signals", "unknown", ack.unknown());
    metrics_->Items("signals", "rejected", ack.result().rejected_size());
    if (!stream->Write(ack)) break;  // the client went away
  }
  // A batch that did not parse ends the stream too: say why.
  if (std::optional<grpc::Status> error = TakeParseError()) return *error;
  return grpc::Status::OK;
}

grpc::Status ShardServiceImpl::PeekTop(grpc::ServerContext* context, const PeekTopRequest* request,
                                       PeekTopResponse* response) {
  return Run(
      context, "PeekTop", [&](double now) { return shard_->PeekTop(*request, now); }, response);
}

grpc::Status ShardServiceImpl::Lease(grpc::ServerContext* context, const LeaseRequest* request,
                                     LeaseResponse* response) {
  grpc::Status s = Run(
      context, "Lease",
      [&](double now) -> absl::StatusOr<LeaseResponse> {
        // A caller that gave up (its deadline passed while the request
        // waited its turn) would never see the leases.
        if (context->IsCancelled()) {
          return absl::CancelledError("the caller gave up; nothing leased");
        }
        return shard_->Lease(*request, now);
      },
      response);
  if (s.ok()) metrics_->Items("leases", "granted", response->leases_size());
  return s;
}

grpc::Status ShardServiceImpl::ReleaseLeases(grpc::ServerContext* context,
                                             const ReleaseLeasesRequest* request,
                                             ReleaseLeasesResponse* response) {
  grpc::Status s = Run(
      context, "ReleaseLeases", [&](double now) { return shard_->ReleaseLeases(*request, now); },
      response);
  if (s.ok()) metrics_->Items("leases", "released", response->released());
  return s;
}

grpc::Status ShardServiceImpl::RenewLeases(grpc::ServerContext* context,
                                           const RenewLeasesRequest* request,
                                           RenewLeasesResponse* response) {
  grpc::Status s = Run(
      context, "RenewLeases", [&](double now) { return shard_->RenewLeases(*request, now); },
      response);
  if (s.ok()) CountRejected("renewals", response->result());
  return s;
}

grpc::Status ShardServiceImpl::ReportCrawls(grpc::ServerContext* context,
                                            const ReportCrawlsRequest* request,
                                            ReportCrawlsResponse* response) {
  grpc::Status s = Run(
      context, "ReportCrawls", [&](double now) { return shard_->ReportCrawls(*request, now); },
      response);
  if (s.ok()) {
    metrics_->Items("reports", "changed", response->changed());
    metrics_->Items("reports", "unchanged", response->unchanged());
    metrics_->Items("reports", "undecided", response->undecided());
    metrics_->Items("reports", "failed", response->failed());
    metrics_->Items("reports", "gone", response->gone());
    metrics_->Items("reports", "rejected", response->result().rejected_size());
  }
  return s;
}

grpc::Status ShardServiceImpl::GetUrlState(grpc::ServerContext* context,
                                           const GetUrlStateRequest* request, UrlState* response) {
  return Run(
      context, "GetUrlState", [&](double now) { return shard_->GetUrlState(*request, now); },
      response);
}

ShardStats ShardServiceImpl::TakeStats(double now) {
  ShardStats stats = shard_->GetStats(now);
  absl::MutexLock lock(&last_stats_mu_);
  last_stats_ = stats;
  return stats;
}

bool ShardServiceImpl::LastStats(ShardStats* stats) {
  absl::MutexLock lock(&last_stats_mu_);
  if (!last_stats_.has_value()) return false;
  *stats = *last_stats_;
  return true;
}

grpc::Status ShardServiceImpl::GetStats(grpc::ServerContext* context, const GetStatsRequest*,
                                        ShardStats* response) {
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = authorizer_->Check(*context, "GetStats", kShardRoles);
  if (status.ok()) {
    if (mu_.TryLock()) {
      *response = TakeStats(clock_->Now());
      mu_.Unlock();
    } else if (!LastStats(response)) {
      absl::MutexLock lock(&mu_);
      *response = TakeStats(clock_->Now());
    }
  }
  metrics_->Rpc("GetStats", status.error_code(), SecondsSince(start));
  return status;
}

grpc::Status ShardServiceImpl::SetHostPoliteness(grpc::ServerContext* context,
                                                 const SetHostPolitenessRequest* request,
                                                 SetHostPolitenessResponse* response) {
  grpc::Status s = Run(
      context, "SetHostPoliteness",
      [&](double now) { return shard_->SetHostPoliteness(*request, now); }, response);
  if (s.ok()) CountRejected("hosts", response->result());
  return s;
}

grpc::Status ShardServiceImpl::SetPolicy(grpc::ServerContext* context,
                                         const SetPolicyRequest* request,
                                         SetPolicyResponse* response) {
  return Run(
      context, "SetPolicy", [&](double now) { return shard_->SetPolicy(*request, now); }, response);
}

void ShardServiceImpl::RefreshMetrics() {
  ShardStats stats;
  uint64_t memory;
  {
    absl::MutexLock lock(&mu_);
    stats = TakeStats(clock_->Now());
    memory = shard_->MemoryBytes();
  }
  metrics_->Update(stats, memory);
}

absl::Status ShardServiceImpl::Flush() {
  absl::MutexLock lock(&mu_);
  return shard_->Flush();
}

}  // namespace services
}  // namespace recrawl
