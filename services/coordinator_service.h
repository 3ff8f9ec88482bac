// The gRPC CoordinatorService: a thin adapter between the wire and
// coordinator::Coordinator (pacing, split/merge, liveness), which decides
// without I/O. Each handler checks its caller and the request, then hands
// the work to a helper: the lease rounds (coordinator/lease_rounds.h over
// lease_calls.h), the batch scatter by shard (batch_scatter.h, routing by
// cluster/routing.h), what the shards are owed (shard_forwarding.h), the
// signal acks (signal_acks.h) and the health probes (shard_health.h).
#ifndef RECRAWL_SERVICES_COORDINATOR_SERVICE_H_
#define RECRAWL_SERVICES_COORDINATOR_SERVICE_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/routing.h"
#include "coordinator/coordinator.h"
#include "grpcpp/grpcpp.h"
#include "proto/coordinator.grpc.pb.h"
#include "services/auth.h"
#include "services/batch_scatter.h"
#include "services/clock.h"
#include "services/coordinator_metrics.h"
#include "services/coordinator_shards.h"
#include "services/coordinator_signals.h"
#include "services/shard_forwarding.h"
#include "services/shard_health.h"

namespace recrawl {
namespace services {

struct CoordinatorServiceOptions {
  int max_lease_batch = 1000;
  // Items per batch request (larger ones: RESOURCE_EXHAUSTED), as the
  // shards' --max_batch_items.
  int max_batch_items = 10000;
  // Real seconds a shard has to answer a call on a request's path; a call
  // that runs out of time fails for that request only, a failed connection
  // takes the shard out until its next successful probe.
  double shard_deadline = 0.25;
  // The same for the batch writes that are no fetcher's wait: reports,
  // upserts, deletes, politeness, policy. A shard under load may take a
  // while to write a large batch; a shorter deadline would hold its reports
  // (or reject the items) for nothing.
  double shard_batch_deadline = 5.0;
  // Real seconds a probe may take.
  double probe_deadline = 0.5;
  // Lease duration the shards give (0: theirs).
  double lease_duration = 0.0;
  // Crawl reports held for shards that are out, in all.
  size_t max_held_reports = 1000000;
  // How URLs are routed to shards (the shards' stores must agree).
  cluster::Routing routing = cluster::Routing::kSite;
  // Hosts whose owning shard the routing remembers (cluster::HostOwnerCache,
  // ~60 bytes each plus the name).
  size_t routing_cache_hosts = size_t{1} << 18;
};

class CoordinatorServiceImpl final : public CoordinatorService::Service {
 public:
  // Every pointer must outlive the service.
  CoordinatorServiceImpl(coordinator::Coordinator* core, const Clock* clock,
                         ShardChannels* channels, const Authorizer* authorizer,
                         CoordinatorMetrics* metrics, const CoordinatorServiceOptions& options);

  grpc::Status Lease(grpc::ServerContext* context, const FetchLeaseRequest* request,
                     FetchLeaseResponse* response) override;
  grpc::Status StreamLeases(grpc::ServerContext* context, const StreamLeasesRequest* request,
                            grpc::ServerWriter<CoordinatorLease>* writer) override;
  grpc::Status ReportCrawls(grpc::ServerContext* context, const ReportCrawlsRequest* request,
                            ReportCrawlsResponse* response) override;
  grpc::Status ReleaseLeases(grpc::ServerContext* context, const FetchReleaseRequest* request,
                             FetchReleaseResponse* response) override;
  grpc::Status RenewLeases(grpc::ServerContext* context, const FetchRenewRequest* request,
                           FetchRenewResponse* response) override;
  grpc::Status StreamSignals(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) override;
  grpc::Status GetShardMap(grpc::ServerContext* context, const GetShardMapRequest* request,
                           ShardMap* response) override;
  grpc::Status SetBandwidth(grpc::ServerContext* context, const SetBandwidthRequest* request,
                            BandwidthState* response) override;
  grpc::Status GetBandwidth(grpc::ServerContext* context, const GetBandwidthRequest* request,
                            BandwidthState* response) override;
  grpc::Status GetClusterStats(grpc::ServerContext* context, const GetClusterStatsRequest* request,
                               ClusterStats* response) override;
  grpc::Status UpsertUrls(grpc::ServerContext* context, const UpsertUrlsRequest* request,
                          UpsertUrlsResponse* response) override;
  grpc::Status DeleteUrls(grpc::ServerContext* context, const DeleteUrlsRequest* request,
                          DeleteUrlsResponse* response) override;
  grpc::Status GetUrlState(grpc::ServerContext* context, const GetUrlStateRequest* request,
                           UrlState* response) override;
  grpc::Status SetHostPoliteness(grpc::ServerContext* context,
                                 const SetHostPolitenessRequest* request,
                                 SetHostPolitenessResponse* response) override;
  grpc::Status SetPolicy(grpc::ServerContext* context, const SetPolicyRequest* request,
                         SetPolicyResponse* response) override;

  // Probes every address (GetStats), feeds the directory, applies the
  // liveness changes (delivering held reports to shards that came back).
  // Returns the number of live shards. Called by the server on a timer.
  int Probe(const std::vector<std::string>& addresses);

  // The cluster's state, with each shard's figures from its last answer
  // (a live shard's at most one health period old).
  ClusterStats Stats();

 private:
  struct Route {
    int shard;
    std::string address;
  };
  // Leases up to max_urls slots in [now − grace, now + lookahead].
  // `lease_duration` 0: the coordinator's --lease_duration, or the shards'
  // default.
  std::vector<CoordinatorLease> LeaseSlots(int max_urls, double lookahead,
                                           const std::string& holder, double lease_duration,
                                           double* next_slot_time);
  // The live shard owning `shard`, or UNAVAILABLE naming it.
  absl::StatusOr<Route> LiveShard(int shard);
  // Its address alone.
  absl::StatusOr<std::string> LiveAddress(int shard);
  void ShardFailed(int shard);
  // Logs a failed shard call and takes the shard out when it did not
  // answer; true when `status` is OK.
  bool CallOk(const char* method, int shard, const std::string& address,
              const grpc::Status& status);
  grpc::Status CheckBatchSize(const char* field, int size) const;
  // The role check of an operator's batch RPC, then its size.
  grpc::Status CheckBatchCall(const grpc::ServerContext& context, const char* method,
                              const char* field, int size) const;

  coordinator::Coordinator* const core_ ABSL_PT_GUARDED_BY(mu_);
  const Clock* const clock_;
  ShardChannels* const channels_;
  const Authorizer* const authorizer_;
  CoordinatorMetrics* const metrics_;
  const CoordinatorServiceOptions options_;
  const int num_shards_;
  // The hosts' owners, for every stream's and call's ShardRouter.
  cluster::HostOwnerCache host_owners_;
  ShardSignalStreams signal_streams_;

  absl::Mutex mu_;
  // Probes, liveness and the shards' figures.
  ShardHealth health_;

  // Batch writes by shard.
  const BatchScatter scatter_;
  // Held reports and lease releases owed to the shards.
  ShardForwarding forwarding_;
  // Lease requests' ids (LeaseRequest.request_id), from a random start so
  // that a restarted coordinator does not reuse its predecessor's.
  std::atomic<uint64_t> next_request_id_;
  // Leases handed to fetchers.
  std::atomic<uint64_t> leases_delivered_{0};
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_COORDINATOR_SERVICE_H_
