// The gRPC ShardService over a shard core: a thin adapter that checks the
// caller's role (internal only, services/auth.h, as the coordinator checks
// its callers'), serialises calls into the core (which is not thread-safe),
// gives it the clock's time, maps absl::Status to grpc::Status and counts
// what happened.
//
// GetStats is also the coordinator's health probe, so it never waits behind
// the core's work: when another call holds the core, it answers with the last
// figures taken (ShardStats.time says when; they are at most a metrics
// refresh old), and waits only before the first figures exist.
#ifndef RECRAWL_SERVICES_SHARD_SERVICE_H_
#define RECRAWL_SERVICES_SHARD_SERVICE_H_

#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/auth.h"
#include "services/clock.h"
#include "services/grpc_status.h"
#include "services/shard_metrics.h"
#include "shard/shard.h"

namespace recrawl {
namespace services {

class ShardServiceImpl final : public ShardService::Service {
 public:
  // Every pointer must outlive the service. Every method needs a token of
  // role internal (`authorizer`; a default Authorizer checks nothing).
  ShardServiceImpl(shard::Shard* shard, const Clock* clock, const Authorizer* authorizer,
                   ShardMetrics* metrics)
      : shard_(shard), clock_(clock), authorizer_(authorizer), metrics_(metrics) {}

  grpc::Status UpsertUrls(grpc::ServerContext* context, const UpsertUrlsRequest* request,
                          UpsertUrlsResponse* response) override;
  grpc::Status DeleteUrls(grpc::ServerContext* context, const DeleteUrlsRequest* request,
                          DeleteUrlsResponse* response) override;
  grpc::Status StreamSignals(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) override;
  grpc::Status PeekTop(grpc::ServerContext* context, const PeekTopRequest* request,
                       PeekTopResponse* response) override;
  grpc::Status Lease(grpc::ServerContext* context, const LeaseRequest* request,
                     LeaseResponse* response) override;
  grpc::Status ReleaseLeases(grpc::ServerContext* context, const ReleaseLeasesRequest* request,
                             ReleaseLeasesResponse* response) override;
  grpc::Status RenewLeases(grpc::ServerContext* context, const RenewLeasesRequest* request,
                           RenewLeasesResponse* response) override;
  grpc::Status ReportCrawls(grpc::ServerContext* context, const ReportCrawlsRequest* request,
                            ReportCrawlsResponse* response) override;
  grpc::Status GetUrlState(grpc::ServerContext* context, const GetUrlStateRequest* request,
                           UrlState* response) override;
  grpc::Status GetStats(grpc::ServerContext* context, const GetStatsRequest* request,
                        ShardStats* response) override;
  grpc::Status SetHostPoliteness(grpc::ServerContext* context,
                                 const SetHostPolitenessRequest* request,
                                 SetHostPolitenessResponse* response) override;
  grpc::Status SetPolicy(grpc::ServerContext* context, const SetPolicyRequest* request,
                         SetPolicyResponse* response) override;

  // Refreshes the metrics' gauges from the core's stats (and the figures
  // GetStats answers with while the core is busy).
  void RefreshMetrics();
  // Flushes the store (graceful shutdown, after the server has drained).
  absl::Status Flush();

 private:
  template <typename Response, typename Fn>
  // Checks the caller's role (unless `context` is null: the caller did),
  // then runs fn(now) under the lock and counts the call.
  grpc::Status Run(const grpc::ServerContext* context, const char* method, Fn fn,
                   Response* response);
  void CountRejected(const char* kind, const BatchResult& result);
  // The core's stats at `now`, kept as the last figures.
  ShardStats TakeStats(double now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The last figures taken into *stats; false before the first.
  bool LastStats(ShardStats* stats) ABSL_LOCKS_EXCLUDED(last_stats_mu_);

  absl::Mutex mu_;
  shard::Shard* const shard_ ABSL_PT_GUARDED_BY(mu_);
  absl::Mutex last_stats_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::optional<ShardStats> last_stats_ ABSL_GUARDED_BY(last_stats_mu_);
  const Clock* const clock_;
  const Authorizer* const authorizer_;
  ShardMetrics* const metrics_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_SERVICE_H_
