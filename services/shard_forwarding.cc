#include "services/shard_forwarding.h"

#include <utility>

#include "coordinator/coordinator.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace services {

ShardForwarding::ShardForwarding(ShardChannels* channels, LiveAddress live_address,
                                 const Options& options)
    : channels_(channels),
      live_address_(std::move(live_address)),
      options_(options),
      held_(options.num_shards, options.max_held_reports),
      releases_(options.num_shards) {}

bool ShardForwarding::Hold(int shard, const CrawlReport& report) {
  absl::MutexLock lock(&mu_);
  return held_.Hold(shard, report);
}

void ShardForwarding::Abandon(int shard, uint64_t request_id) {
  absl::MutexLock lock(&mu_);
  releases_.Abandon(shard, request_id);
}

void ShardForwarding::Undelivered(const std::vector<CoordinatorLease>& leases) {
  std::vector<std::vector<uint64_t>> by_shard(static_cast<size_t>(options_.num_shards));
  for (const CoordinatorLease& lease : leases) {
    const int shard = coordinator::ShardOfLeaseId(lease.lease_id());
    if (shard < options_.num_shards) {
      by_shard[shard].push_back(coordinator::ShardLeaseId(lease.lease_id()));
    }
  }
  absl::MutexLock lock(&mu_);
  for (int s = 0; s < options_.num_shards; ++s) {
    if (!by_shard[s].empty()) releases_.Undelivered(s, by_shard[s]);
  }
}

bool ShardForwarding::DeliverBeforeLeasing(int shard) {
  bool reports = false, releases = false;
  {
    absl::MutexLock lock(&mu_);
    // A batch on its way may be another caller's delivery to this shard:
    // DeliverReports waits for it.
    reports = held_.pending() > 0;
    releases = releases_.Pending(shard);
  }
  if (releases) DeliverReleases(shard);
  if (!reports) return true;
  DeliverReports(shard);
  absl::MutexLock lock(&mu_);
  return !held_.Holds(shard);
}

void ShardForwarding::DeliverAll(int shard) {
  DeliverReports(shard);
  DeliverReleases(shard);
}

size_t ShardForwarding::pending_reports() const {
  absl::MutexLock lock(&mu_);
  return held_.pending();
}

coordinator::LeaseReleases::Stats ShardForwarding::release_stats() const {
  absl::MutexLock lock(&mu_);
  return releases_.stats();
}

void ShardForwarding::DeliverReports(int shard) {
  absl::MutexLock deliver(&deliver_mu_);
  absl::StatusOr<std::string> address = live_address_(shard);
  if (!address.ok()) return;
  size_t delivered = 0, rejected = 0;
  while (true) {
    ReportCrawlsRequest batch;
    {
      absl::MutexLock lock(&mu_);
      held_.Take(shard, options_.max_batch_items, &batch);
    }
    if (batch.reports_size() == 0) break;
    grpc::ClientContext context;
    channels_->Prepare(&context, options_.call_deadline);
    ReportCrawlsResponse response;
    const grpc::Status status = channels_->Stub(*address)->ReportCrawls(&context, batch, &response);
    const int count = batch.reports_size();
    {
      absl::MutexLock lock(&mu_);
      if (status.ok()) {
        held_.Delivered(static_cast<size_t>(count));
      } else {
        held_.Return(shard, &batch);
      }
    }
    if (!status.ok()) {
      spdlog::warn("delivering held reports to shard {}: {}; keeping {}", shard,
                   status.error_message(), count);
      break;
    }
    delivered += response.result().applied();
    rejected += static_cast<size_t>(response.result().rejected_size());
  }
  if (delivered + rejected > 0) {
    spdlog::info("delivered {} held reports to shard {} ({} rejected by it)", delivered, shard,
                 rejected);
  }
}

void ShardForwarding::DeliverReleases(int shard) {
  absl::StatusOr<std::string> address = live_address_(shard);
  if (!address.ok()) return;
  while (true) {
    coordinator::LeaseReleases::Batch batch;
    {
      absl::MutexLock lock(&mu_);
      batch = releases_.Take(shard, options_.max_batch_items);
    }
    if (batch.empty()) return;
    ReleaseLeasesRequest request;
    for (uint64_t id : batch.request_ids) request.add_request_ids(id);
    for (uint64_t id : batch.lease_ids) request.add_lease_ids(id);
    grpc::ClientContext context;
    channels_->Prepare(&context, options_.call_deadline);
    ReleaseLeasesResponse response;
    const grpc::Status status =
        channels_->Stub(*address)->ReleaseLeases(&context, request, &response);
    absl::MutexLock lock(&mu_);
    if (!status.ok()) {
      spdlog::warn("releasing {} leases and lease requests at shard {}: {}; keeping them",
                   batch.size(), shard, status.error_message());
      releases_.Return(shard, std::move(batch));
      return;
    }
    releases_.Released(response.released());
  }
}

}  // namespace services
}  // namespace recrawl
