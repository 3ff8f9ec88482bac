// ShardService behind the role check: every call needs a token of role
// internal (only the coordinator and other cluster components talk to
// shards), then goes to the wrapped service. An RPC added to ShardService
// but not here answers UNIMPLEMENTED, so a new method is never open by
// mistake.
#ifndef RECRAWL_SERVICES_AUTHORIZED_SHARD_SERVICE_H_
#define RECRAWL_SERVICES_AUTHORIZED_SHARD_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/auth.h"

namespace recrawl {
namespace services {

class AuthorizedShardService final : public ShardService::Service {
 public:
  // `inner` and `authorizer` must outlive the service.
  AuthorizedShardService(ShardService::Service* inner, const Authorizer* authorizer)
      : inner_(inner), authorizer_(authorizer) {}

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

 private:
  grpc::Status Check(const grpc::ServerContext* context, const char* method) const {
    return authorizer_->Check(*context, method, {cluster::Role::kInternal});
  }

  ShardService::Service* const inner_;
  const Authorizer* const authorizer_;
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_AUTHORIZED_SHARD_SERVICE_H_
