#include "services/authorized_shard_service.h"

namespace recrawl {
namespace services {

grpc::Status AuthorizedShardService::UpsertUrls(grpc::ServerContext* context,
                                                const UpsertUrlsRequest* request,
                                                UpsertUrlsResponse* response) {
  if (grpc::Status s = Check(context, "UpsertUrls"); !s.ok()) return s;
  return inner_->UpsertUrls(context, request, response);
}

grpc::Status AuthorizedShardService::DeleteUrls(grpc::ServerContext* context,
                                                const DeleteUrlsRequest* request,
                                                DeleteUrlsResponse* response) {
  if (grpc::Status s = Check(context, "DeleteUrls"); !s.ok()) return s;
  return inner_->DeleteUrls(context, request, response);
}

grpc::Status AuthorizedShardService::PeekTop(grpc::ServerContext* context,
                                             const PeekTopRequest* request,
                                             PeekTopResponse* response) {
  if (grpc::Status s = Check(context, "PeekTop"); !s.ok()) return s;
  return inner_->PeekTop(context, request, response);
}

grpc::Status AuthorizedShardService::Lease(grpc::ServerContext* context,
                                           const LeaseRequest* request, LeaseResponse* response) {
  if (grpc::Status s = Check(context, "Lease"); !s.ok()) return s;
  return inner_->Lease(context, request, response);
}

grpc::Status AuthorizedShardService::ReleaseLeases(grpc::ServerContext* context,
                                                   const ReleaseLeasesRequest* request,
                                                   ReleaseLeasesResponse* response) {
  if (grpc::Status s = Check(context, "ReleaseLeases"); !s.ok()) return s;
  return inner_->ReleaseLeases(context, request, response);
}

grpc::Status AuthorizedShardService::RenewLeases(grpc::ServerContext* context,
                                                 const RenewLeasesRequest* request,
                                                 RenewLeasesResponse* response) {
  if (grpc::Status s = Check(context, "RenewLeases"); !s.ok()) return s;
  return inner_->RenewLeases(context, request, response);
}

grpc::Status AuthorizedShardService::ReportCrawls(grpc::ServerContext* context,
                                                  const ReportCrawlsRequest* request,
                                                  ReportCrawlsResponse* response) {
  if (grpc::Status s = Check(context, "ReportCrawls"); !s.ok()) return s;
  return inner_->ReportCrawls(context, request, response);
}

grpc::Status AuthorizedShardService::GetUrlState(grpc::ServerContext* context,
                                                 const GetUrlStateRequest* request,
                                                 UrlState* response) {
  if (grpc::Status s = Check(context, "GetUrlState"); !s.ok()) return s;
  return inner_->GetUrlState(context, request, response);
}

grpc::Status AuthorizedShardService::GetStats(grpc::ServerContext* context,
                                              const GetStatsRequest* request,
                                              ShardStats* response) {
  if (grpc::Status s = Check(context, "GetStats"); !s.ok()) return s;
  return inner_->GetStats(context, request, response);
}

grpc::Status AuthorizedShardService::SetHostPoliteness(grpc::ServerContext* context,
                                                       const SetHostPolitenessRequest* request,
                                                       SetHostPolitenessResponse* response) {
  if (grpc::Status s = Check(context, "SetHostPoliteness"); !s.ok()) return s;
  return inner_->SetHostPoliteness(context, request, response);
}

grpc::Status AuthorizedShardService::SetPolicy(grpc::ServerContext* context,
                                               const SetPolicyRequest* request,
                                               SetPolicyResponse* response) {
  if (grpc::Status s = Check(context, "SetPolicy"); !s.ok()) return s;
  return inner_->SetPolicy(context, request, response);
}

grpc::Status AuthorizedShardService::StreamSignals(
    grpc::ServerContext* context, grpc::ServerReaderWriter<SignalBatchAck, SignalBatch>* stream) {
  if (grpc::Status s = Check(context, "StreamSignals"); !s.ok()) return s;
  return inner_->StreamSignals(context, stream);
}

}  // namespace services
}  // namespace recrawl
