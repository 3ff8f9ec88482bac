#include "services/coordinator_service.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "cluster/limits.h"
#include "cluster/routing.h"
#include "cluster/tokens.h"
#include "coordinator/lease_rounds.h"
#include "services/batch_scatter.h"
#include "services/coordinator_requests.h"
#include "services/grpc_status.h"
#include "services/lease_calls.h"
#include "services/parse_errors.h"
#include "services/signal_acks.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace services {
namespace {

using cluster::MergeResult;
using cluster::SortRejected;
using cluster::SplitByShard;
using coordinator::Mode;

// Lists item `index` as rejected with a gRPC status code.
void Reject(int index, grpc::StatusCode code, const std::string& message, BatchResult* result) {
  cluster::AddRejection(index, absl::Status(static_cast<absl::StatusCode>(code), message), result);
}

// Who may call what (services/auth.h). Operators may do what fetchers and
// pingers do (recrawlctl lease / report / ping); internal is the cluster's
// own role.
constexpr cluster::Roles kFetch{cluster::Role::kFetcher, cluster::Role::kOperator,
                                cluster::Role::kInternal};
constexpr cluster::Roles kPing{cluster::Role::kPinger, cluster::Role::kOperator,
                               cluster::Role::kInternal};
constexpr cluster::Roles kOperate{cluster::Role::kOperator, cluster::Role::kInternal};

}  // namespace

CoordinatorServiceImpl::CoordinatorServiceImpl(coordinator::Coordinator* core, const Clock* clock,
                                               ShardChannels* channels,
                                               const Authorizer* authorizer,
                                               CoordinatorMetrics* metrics,
                                               const CoordinatorServiceOptions& options)
    : core_(core),
      clock_(clock),
      channels_(channels),
      authorizer_(authorizer),
      metrics_(metrics),
      options_(options),
      num_shards_(core->directory().num_shards()),
      host_owners_(options.routing, num_shards_, options.routing_cache_hosts),
      signal_streams_(channels, num_shards_),
      health_(core, &mu_, clock, channels, options.probe_deadline),
      scatter_{channels, num_shards_, options.shard_batch_deadline,
               [this](int shard) { return LiveAddress(shard); },
               [this](int shard) { ShardFailed(shard); }},
      forwarding_(channels, [this](int shard) { return LiveAddress(shard); },
                  {num_shards_, options.max_held_reports,
                   static_cast<size_t>(options.max_batch_items), 10 * options.probe_deadline}),
      next_request_id_(std::random_device()() | uint64_t{1} << 63) {}

grpc::Status CoordinatorServiceImpl::CheckBatchSize(const char* field, int size) const {
  if (size <= options_.max_batch_items) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat(field, ": ", size, " items, at most ", options_.max_batch_items,
                                   " per request (--max_batch_items)"));
}

grpc::Status CoordinatorServiceImpl::CheckBatchCall(const grpc::ServerContext& context,
                                                    const char* method, const char* field,
                                                    int size) const {
  grpc::Status status = authorizer_->Check(context, method, kOperate);
  return status.ok() ? CheckBatchSize(field, size) : status;
}

absl::StatusOr<CoordinatorServiceImpl::Route> CoordinatorServiceImpl::LiveShard(int shard) {
  absl::MutexLock lock(&mu_);
  if (!core_->directory().IsLive(shard, clock_->Now())) {
    return absl::UnavailableError(
        absl::StrCat("shard ", shard, " is out (not answering); retry later"));
  }
  return Route{shard, core_->directory().shard(shard).address};
}

absl::StatusOr<std::string> CoordinatorServiceImpl::LiveAddress(int shard) {
  absl::StatusOr<Route> route = LiveShard(shard);
  if (!route.ok()) return route.status();
  return route->address;
}

void CoordinatorServiceImpl::ShardFailed(int shard) {
  absl::MutexLock lock(&mu_);
  core_->directory().RecordFailure(shard, clock_->Now());
}

// ---------------------------------------------------------------- fetchers

bool CoordinatorServiceImpl::CallOk(const char* method, int shard, const std::string& address,
                                    const grpc::Status& status) {
  if (status.ok()) return true;
  spdlog::warn("{} on shard {} at {}: {}", method, shard, address, status.error_message());
  // Out for every request if it did not answer; for this one only if it
  // answered with an error or late.
  if (ShardIsDown(status)) ShardFailed(shard);
  return false;
}

std::vector<CoordinatorLease> CoordinatorServiceImpl::LeaseSlots(int max_urls, double lookahead,
                                                                 const std::string& holder,
                                                                 double lease_duration,
                                                                 double* next_slot_time) {
  const double now = clock_->Now();
  std::vector<double> slots;
  Mode mode = Mode::kMerge;
  std::vector<std::string> addresses(num_shards_);
  std::vector<bool> live;
  {
    absl::MutexLock lock(&mu_);
    slots = core_->TakeSlots(now, lookahead, max_urls);
    mode = core_->mode();
    live = core_->directory().Live(now);
    for (int s = 0; s < num_shards_; ++s) addresses[s] = core_->directory().shard(s).address;
    *next_slot_time = core_->NextSlotTime(now);
  }
  ShardLeaseCalls calls(
      {channels_, &forwarding_, options_.shard_deadline, &next_request_id_,
       [this](const char* method, int shard, const std::string& address,
              const grpc::Status& status) { return CallOk(method, shard, address, status); }},
      std::move(addresses), holder,
      lease_duration > 0.0 ? lease_duration : options_.lease_duration);
  coordinator::RunLeaseRounds(std::move(slots), mode, std::move(live), core_, &mu_, &calls);
  return calls.TakeLeases();
}

grpc::Status CoordinatorServiceImpl::Lease(grpc::ServerContext* context,
                                           const FetchLeaseRequest* request,
                                           FetchLeaseResponse* response) {
  grpc::Status status = authorizer_->Check(*context, "Lease", kFetch);
  if (status.ok() && (request->max_urls() < 1 ||
                      request->max_urls() > static_cast<uint32_t>(options_.max_lease_batch))) {
    status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("max_urls: must be in [1, ", options_.max_lease_batch,
                                       "] (--max_lease_batch), got ", request->max_urls()));
  }
  if (status.ok()) status = ToGrpcStatus(CheckHolder(request->holder()));
  if (status.ok()) status = ToGrpcStatus(CheckLeaseDuration(request->lease_duration()));
  if (status.ok()) status = ToGrpcStatus(CheckLookahead(request->lookahead()));

  if (status.ok()) {
    double next = 0.0;
    std::vector<CoordinatorLease> leases =
        LeaseSlots(static_cast<int>(request->max_urls()), request->lookahead(), request->holder(),
                   request->lease_duration(), &next);
    if (context->IsCancelled()) {
      // The fetcher is gone (its deadline passed while the shards answered).
      forwarding_.Undelivered(leases);
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "the call ended before its leases were ready; they are released");
    }
    leases_delivered_ += leases.size();
    for (CoordinatorLease& lease : leases) *response->add_leases() = std::move(lease);
    response->set_next_slot_time(next);
  }
  return status;
}

grpc::Status CoordinatorServiceImpl::StreamLeases(grpc::ServerContext* context,
                                                  const StreamLeasesRequest* request,
                                                  grpc::ServerWriter<CoordinatorLease>* writer) {
  grpc::Status status = authorizer_->Check(*context, "StreamLeases", kFetch);
  if (status.ok()) status = ToGrpcStatus(CheckHolder(request->holder()));
  if (status.ok()) status = ToGrpcStatus(CheckLeaseDuration(request->lease_duration()));
  while (status.ok() && !context->IsCancelled()) {
    double next = 0.0;
    std::vector<CoordinatorLease> leases = LeaseSlots(
        options_.max_lease_batch, 0.0, request->holder(), request->lease_duration(), &next);
    size_t written = 0;
    while (written < leases.size() && writer->Write(leases[written])) ++written;
    leases_delivered_ += written;
    if (written < leases.size()) {
      // The stream broke: the rest never reached the fetcher.
      forwarding_.Undelivered(
          {leases.begin() + static_cast<std::ptrdiff_t>(written), leases.end()});
      break;
    }
    // Until the next slot, in real time, checking for cancellation now and
    // then.
    const double wait = std::clamp((next - clock_->Now()) / clock_->scale(), 2e-4, 0.05);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  return status;
}

grpc::Status CoordinatorServiceImpl::ReportCrawls(grpc::ServerContext* context,
                                                  const ReportCrawlsRequest* request,
                                                  ReportCrawlsResponse* response) {
  grpc::Status status = authorizer_->Check(*context, "ReportCrawls", kFetch);
  if (status.ok()) status = CheckBatchSize("reports", request->reports_size());
  if (!status.ok()) return status;
  BatchResult* result = response->mutable_result();
  cluster::ShardRouter router(&host_owners_);
  auto shard_of = [&](int i) -> absl::StatusOr<int> {
    const CrawlReport& report = request->reports(i);
    switch (report.target_case()) {
      case CrawlReport::kLeaseId:
        return ShardOfClusterLease(report.lease_id(), num_shards_, "lease_id");
      case CrawlReport::kUrl:
        return router.ShardOf(report.url());
      default:
        return absl::InvalidArgumentError("target: a lease_id or a url is required");
    }
  };

  // The reports of each shard, with the shard's own lease ids; those of a
  // shard that is out (or does not answer now) are held for its return (a
  // report applied twice is rejected the second time).
  auto hold = [&](int shard, const std::vector<int>& indexes, const ReportCrawlsRequest& part) {
    for (size_t k = 0; k < indexes.size(); ++k) {
      if (!forwarding_.Hold(shard, part.reports(static_cast<int>(k)))) {
        Reject(
            indexes[k], grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("shard ", shard, " is out and the coordinator already holds ",
                         options_.max_held_reports, " reports (--max_held_reports); retry later"),
            result);
        continue;
      }
      result->set_applied(result->applied() + 1);
    }
  };
  ReportCrawlsRequest base;
  base.set_sync(request->sync());
  const auto calls = scatter_.Run<ReportCrawlsRequest, ReportCrawlsResponse>(
      request->reports_size(), shard_of, base,
      [&](int i, ReportCrawlsRequest* part) {
        CrawlReport* report = part->add_reports();
        *report = request->reports(i);
        if (report->target_case() == CrawlReport::kLeaseId) {
          report->set_lease_id(coordinator::ShardLeaseId(report->lease_id()));
        }
      },
      &ShardAsync::ReportCrawls, result, hold);
  for (const auto& call : calls) {
    if (!call->status.ok()) continue;
    response->set_changed(response->changed() + call->response.changed());
    response->set_unchanged(response->unchanged() + call->response.unchanged());
    response->set_failed(response->failed() + call->response.failed());
    response->set_gone(response->gone() + call->response.gone());
    response->set_undecided(response->undecided() + call->response.undecided());
  }
  return grpc::Status::OK;
}

// ---------------------------------------------------------------- pingers

grpc::Status CoordinatorServiceImpl::StreamSignals(
    grpc::ServerContext* context, grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) {
  grpc::Status status = authorizer_->Check(*context, "StreamSignals", kPing);
  if (!status.ok()) return status;
  // The acks outlive this call only in callbacks that ran before
  // AwaitDrained returned.
  auto acks = std::make_shared<OrderedSignalAcks>(
      [stream](const SignalBatchAck& ack) { return stream->Write(ack); });
  cluster::ShardRouter router(&host_owners_);
  SignalBatch batch;
  // Each shard's part, reused: the signals moved into it are swapped with
  // the cleared ones it kept, which the next batch is read into, so that
  // forwarding allocates no signal.
  std::vector<SignalBatch> shard_parts(num_shards_);
  while (stream->Read(&batch)) {
    status = CheckBatchSize("signals", batch.signals_size());
    if (!status.ok()) break;
    SignalBatchAck ack;
    ack.set_sequence(batch.sequence());
    BatchResult* result = ack.mutable_result();
    const std::vector<std::vector<int>> items = SplitByShard(
        batch.signals_size(), num_shards_,
        [&](int i) { return router.ShardOf(batch.signals(i).url()); }, result);
    std::vector<std::pair<Route, std::vector<int>>> parts;
    for (int s = 0; s < num_shards_; ++s) {
      if (items[s].empty()) continue;
      absl::StatusOr<Route> route = LiveShard(s);
      if (!route.ok()) {
        for (int i : items[s]) cluster::AddRejection(i, route.status(), result);
        continue;
      }
      parts.emplace_back(*route, items[s]);
    }
    std::shared_ptr<OrderedSignalAcks::Batch> pending =
        acks->Add(std::move(ack), static_cast<int>(parts.size()));
    for (auto& [route, indexes] : parts) {
      SignalBatch& part = shard_parts[route.shard];
      part.Clear();
      part.set_sync(batch.sync());
      // Swapped: `batch` is read into afresh.
      for (int i : indexes) part.add_signals()->Swap(batch.mutable_signals(i));
      signal_streams_.Send(route.shard, route.address, &part,
                           [acks, pending, indexes = indexes, shard = route.shard](
                               const grpc::Status& s, const SignalBatchAck& part_ack) {
                             acks->PartDone(pending, shard, indexes, s, part_ack);
                           });
    }
  }
  // Every batch read gets its ack before the stream ends.
  acks->AwaitDrained();
  // A batch that did not parse ended the stream: say why.
  if (status.ok()) {
    if (std::optional<grpc::Status> error = TakeParseError()) return *error;
  }
  return status;
}

grpc::Status CoordinatorServiceImpl::GetShardMap(grpc::ServerContext* context,
                                                 const GetShardMapRequest*, ShardMap* response) {
  grpc::Status status = authorizer_->Check(*context, "GetShardMap", cluster::Roles::All());
  if (!status.ok()) return status;
  absl::MutexLock lock(&mu_);
  const double now = clock_->Now();
  response->set_num_shards(static_cast<uint32_t>(num_shards_));
  for (int s = 0; s < num_shards_; ++s) {
    response->add_addresses(core_->directory().shard(s).address);
    response->add_live(core_->directory().IsLive(s, now));
  }
  response->set_hash(std::string(cluster::RoutingHashName(options_.routing)));
  return grpc::Status::OK;
}

// ---------------------------------------------------------------- operators

grpc::Status CoordinatorServiceImpl::SetBandwidth(grpc::ServerContext* context,
                                                  const SetBandwidthRequest* request,
                                                  BandwidthState* response) {
  grpc::Status status = authorizer_->Check(*context, "SetBandwidth", kOperate);
  if (!status.ok()) return status;
  absl::StatusOr<Mode> mode = ModeFromProto(request->mode());
  if (!mode.ok()) return ToGrpcStatus(mode.status());
  absl::MutexLock lock(&mu_);
  const double now = clock_->Now();
  if (request->has_bandwidth()) {
    if (absl::Status s = core_->SetBandwidth(request->bandwidth(), now); !s.ok()) {
      return ToGrpcStatus(s);
    }
    spdlog::info("bandwidth set to {} crawls/s", request->bandwidth());
  }
  if (request->mode() != COORDINATOR_MODE_UNSPECIFIED) {
    core_->SetMode(*mode, now);
    spdlog::info("mode set to {}", CoordinatorMode_Name(request->mode()));
  }
  response->set_bandwidth(core_->bandwidth());
  response->set_mode(ToProto(core_->mode()));
  for (double b : core_->budgets()) response->add_shard_budgets(b);
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::GetBandwidth(grpc::ServerContext* context,
                                                  const GetBandwidthRequest*,
                                                  BandwidthState* response) {
  grpc::Status status = authorizer_->Check(*context, "GetBandwidth", kOperate);
  if (!status.ok()) return status;
  absl::MutexLock lock(&mu_);
  response->set_bandwidth(core_->bandwidth());
  response->set_mode(ToProto(core_->mode()));
  for (double b : core_->budgets()) response->add_shard_budgets(b);
  return grpc::Status::OK;
}

ClusterStats CoordinatorServiceImpl::Stats() {
  ClusterStats stats;
  std::vector<bool> live;
  {
    absl::MutexLock lock(&mu_);
    const double now = clock_->Now();
    stats.set_time(now);
    stats.set_bandwidth(core_->bandwidth());
    stats.set_mode(ToProto(core_->mode()));
    stats.set_num_shards(static_cast<uint32_t>(num_shards_));
    stats.set_slots_handed_out(core_->slot_stats().handed_out);
    stats.set_slots_dropped(core_->slot_stats().dropped);
    live = core_->directory().Live(now);
  }
  health_.AddShardFigures(live, stats.time(), &stats);
  stats.set_leases_delivered(leases_delivered_);
  // Reports on their way to a shard are not applied yet either: a client
  // that waits for 0 must find them in the shard's state.
  stats.set_pending_reports(forwarding_.pending_reports());
  const coordinator::LeaseReleases::Stats r = forwarding_.release_stats();
  stats.set_lease_requests_abandoned(r.abandoned_requests);
  stats.set_leases_undelivered(r.undelivered_leases);
  stats.set_leases_released(r.released);
  stats.set_pending_lease_releases(r.pending);
  stats.set_routing_hosts_computed(host_owners_.computed());
  return stats;
}

grpc::Status CoordinatorServiceImpl::GetClusterStats(grpc::ServerContext* context,
                                                     const GetClusterStatsRequest*,
                                                     ClusterStats* response) {
  grpc::Status status = authorizer_->Check(*context, "GetClusterStats", kOperate);
  if (!status.ok()) return status;
  health_.Refresh();
  *response = Stats();
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::UpsertUrls(grpc::ServerContext* context,
                                                const UpsertUrlsRequest* request,
                                                UpsertUrlsResponse* response) {
  grpc::Status status = CheckBatchCall(*context, "UpsertUrls", "urls", request->urls_size());
  if (!status.ok()) return status;
  UpsertUrlsRequest base;
  base.set_sync(request->sync());
  cluster::ShardRouter router(&host_owners_);
  const auto calls = scatter_.Run<UpsertUrlsRequest, UpsertUrlsResponse>(
      request->urls_size(),
      [&](int i) {
        // The URL alone decides its shard; the shard checks that a
        // politeness host goes with it.
        return router.ShardOf(request->urls(i).url());
      },
      base, [&](int i, UpsertUrlsRequest* part) { *part->add_urls() = request->urls(i); },
      &ShardAsync::UpsertUrls, response->mutable_result());
  for (const auto& call : calls) {
    if (call->status.ok()) response->set_created(response->created() + call->response.created());
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::ReleaseLeases(grpc::ServerContext* context,
                                                   const FetchReleaseRequest* request,
                                                   FetchReleaseResponse* response) {
  grpc::Status status = authorizer_->Check(*context, "ReleaseLeases", kFetch);
  if (status.ok()) status = CheckBatchSize("lease_ids", request->lease_ids_size());
  if (!status.ok()) return status;
  const auto calls = scatter_.Run<ReleaseLeasesRequest, ReleaseLeasesResponse>(
      request->lease_ids_size(),
      [&](int i) { return ShardOfClusterLease(request->lease_ids(i), num_shards_, "lease_ids"); },
      ReleaseLeasesRequest(),
      [&](int i, ReleaseLeasesRequest* part) {
        part->add_lease_ids(coordinator::ShardLeaseId(request->lease_ids(i)));
      },
      &ShardAsync::ReleaseLeases, response->mutable_result());
  for (const auto& call : calls) {
    if (call->status.ok()) response->set_released(response->released() + call->response.released());
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::RenewLeases(grpc::ServerContext* context,
                                                 const FetchRenewRequest* request,
                                                 FetchRenewResponse* response) {
  grpc::Status status = authorizer_->Check(*context, "RenewLeases", kFetch);
  if (status.ok()) status = CheckBatchSize("lease_ids", request->lease_ids_size());
  if (status.ok()) status = ToGrpcStatus(CheckLeaseDuration(request->lease_duration()));
  if (!status.ok()) return status;
  RenewLeasesRequest base;
  base.set_lease_duration(request->lease_duration());
  const auto calls = scatter_.Run<RenewLeasesRequest, RenewLeasesResponse>(
      request->lease_ids_size(),
      [&](int i) { return ShardOfClusterLease(request->lease_ids(i), num_shards_, "lease_ids"); },
      base,
      [&](int i, RenewLeasesRequest* part) {
        part->add_lease_ids(coordinator::ShardLeaseId(request->lease_ids(i)));
      },
      &ShardAsync::RenewLeases, response->mutable_result());
  response->mutable_deadlines()->Resize(request->lease_ids_size(), 0.0);
  for (const auto& call : calls) {
    if (!call->status.ok()) continue;
    for (int k = 0;
         k < call->response.deadlines_size() && k < static_cast<int>(call->indexes.size()); ++k) {
      response->set_deadlines(call->indexes[k], call->response.deadlines(k));
    }
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::DeleteUrls(grpc::ServerContext* context,
                                                const DeleteUrlsRequest* request,
                                                DeleteUrlsResponse* response) {
  grpc::Status status = CheckBatchCall(*context, "DeleteUrls", "urls", request->urls_size());
  if (!status.ok()) return status;
  DeleteUrlsRequest base;
  base.set_sync(request->sync());
  cluster::ShardRouter router(&host_owners_);
  scatter_.Run<DeleteUrlsRequest, DeleteUrlsResponse>(
      request->urls_size(), [&](int i) { return router.ShardOf(request->urls(i)); }, base,
      [&](int i, DeleteUrlsRequest* part) { part->add_urls(request->urls(i)); },
      &ShardAsync::DeleteUrls, response->mutable_result());
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::SetHostPoliteness(grpc::ServerContext* context,
                                                       const SetHostPolitenessRequest* request,
                                                       SetHostPolitenessResponse* response) {
  grpc::Status status =
      CheckBatchCall(*context, "SetHostPoliteness", "hosts", request->hosts_size());
  if (!status.ok()) return status;
  SetHostPolitenessRequest base;
  base.set_sync(request->sync());
  scatter_.Run<SetHostPolitenessRequest, SetHostPolitenessResponse>(
      request->hosts_size(),
      [&](int i) {
        return cluster::ShardOfHostName(request->hosts(i).host(), options_.routing, num_shards_);
      },
      base, [&](int i, SetHostPolitenessRequest* part) { *part->add_hosts() = request->hosts(i); },
      &ShardAsync::SetHostPoliteness, response->mutable_result());
  return grpc::Status::OK;
}

grpc::Status CoordinatorServiceImpl::GetUrlState(grpc::ServerContext* context,
                                                 const GetUrlStateRequest* request,
                                                 UrlState* response) {
  grpc::Status status = authorizer_->Check(*context, "GetUrlState", kFetch);
  if (!status.ok()) return status;
  absl::StatusOr<int> shard = cluster::ShardOfUrl(request->url(), options_.routing, num_shards_);
  if (!shard.ok()) return ToGrpcStatus(shard.status());
  absl::StatusOr<Route> route = LiveShard(*shard);
  if (!route.ok()) return ToGrpcStatus(route.status());
  grpc::ClientContext call;
  channels_->Prepare(&call, options_.shard_deadline);
  status = channels_->Stub(route->address)->GetUrlState(&call, *request, response);
  if (ShardIsDown(status)) ShardFailed(*shard);
  // The lease id a fetcher holds is the cluster's (it names the shard);
  // show that one, so that an operator can match the two.
  if (status.ok() && response->has_lease()) {
    response->mutable_lease()->set_lease_id(
        coordinator::ClusterLeaseId(*shard, response->lease().lease_id()));
  }
  return status;
}

grpc::Status CoordinatorServiceImpl::SetPolicy(grpc::ServerContext* context,
                                               const SetPolicyRequest* request,
                                               SetPolicyResponse* response) {
  grpc::Status status = authorizer_->Check(*context, "SetPolicy", kOperate);
  if (!status.ok()) return status;
  ShardCalls<SetPolicyRequest, SetPolicyResponse> calls;
  std::vector<int> out;
  for (int s = 0; s < num_shards_; ++s) {
    absl::StatusOr<Route> route = LiveShard(s);
    if (!route.ok()) {
      out.push_back(s);
      continue;
    }
    AddShardCall(&calls, s, route->address)->request = *request;
  }
  if (!out.empty()) {
    // A policy must be the same on every shard (values are compared across
    // shards in merge mode): refuse rather than set it on some.
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat(out.size(), " shard(s) out, e.g. shard ", out.front(),
                                     "; the policy is set on all shards or none, retry later"));
  }
  CallInParallel(channels_, options_.shard_batch_deadline, &ShardAsync::SetPolicy, &calls);
  for (const auto& call : calls) {
    if (!call->status.ok()) {
      return grpc::Status(call->status.error_code(),
                          absl::StrCat("shard ", call->shard, ": ", call->status.error_message(),
                                       " (shards before it may have the new policy; retry)"));
    }
  }
  *response = calls.front()->response;
  return grpc::Status::OK;
}

// ---------------------------------------------------------------- health

int CoordinatorServiceImpl::Probe(const std::vector<std::string>& addresses) {
  const ShardHealth::Probed probed = health_.Probe(addresses);
  for (const auto& change : probed.changes) {
    if (change.live) {
      spdlog::info("shard {} is live", change.shard_index);
    } else {
      spdlog::warn("shard {} is out", change.shard_index);
      signal_streams_.Reset(change.shard_index);
    }
  }
  // Held reports go to every live shard that has some, not only to one
  // that comes back: a report call that timed out holds its reports and
  // marks the shard failed, and when the next probe finds it answering,
  // no tick ever saw it out.
  int live = 0;
  for (int s = 0; s < num_shards_; ++s) {
    if (!probed.live[s]) continue;
    ++live;
    forwarding_.DeliverAll(s);
  }
  metrics_->Update(Stats());
  return live;
}

}  // namespace services
}  // namespace recrawl
