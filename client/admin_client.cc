#include "client/admin_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/batches.h"

namespace recrawl {
namespace client {

AdminClient::AdminClient(ClientOptions options)
    : rpc_(std::move(options)), stub_(CoordinatorService::NewStub(rpc_.channel())) {}

namespace {

// One idempotent unary call: `method` of the stub with `request`.
template <typename Response, typename Request, typename Method>
absl::StatusOr<Response> Call(const Rpc& rpc, CoordinatorService::Stub* stub, Method method,
                              const Request& request) {
  Response response;
  absl::Status status = rpc.CallIdempotent([&](grpc::ClientContext* context) {
    response.Clear();
    return (stub->*method)(context, request, &response);
  });
  if (!status.ok()) return status;
  return response;
}

}  // namespace

absl::StatusOr<BandwidthState> AdminClient::GetBandwidth() {
  return Call<BandwidthState>(rpc_, stub_.get(), &CoordinatorService::Stub::GetBandwidth,
                              GetBandwidthRequest());
}

absl::StatusOr<BandwidthState> AdminClient::SetBandwidth(std::optional<double> bandwidth,
                                                         CoordinatorMode mode) {
  SetBandwidthRequest request;
  if (bandwidth.has_value()) request.set_bandwidth(*bandwidth);
  request.set_mode(mode);
  return Call<BandwidthState>(rpc_, stub_.get(), &CoordinatorService::Stub::SetBandwidth, request);
}

absl::StatusOr<ClusterStats> AdminClient::GetClusterStats() {
  return Call<ClusterStats>(rpc_, stub_.get(), &CoordinatorService::Stub::GetClusterStats,
                            GetClusterStatsRequest());
}

absl::StatusOr<ShardMap> AdminClient::GetShardMap() {
  return Call<ShardMap>(rpc_, stub_.get(), &CoordinatorService::Stub::GetShardMap,
                        GetShardMapRequest());
}

absl::StatusOr<UrlState> AdminClient::GetUrlState(const std::string& url) {
  GetUrlStateRequest request;
  request.set_url(url);
  return Call<UrlState>(rpc_, stub_.get(), &CoordinatorService::Stub::GetUrlState, request);
}

absl::StatusOr<SetPolicyResponse> AdminClient::SetPolicy(const SetPolicyRequest& request) {
  return Call<SetPolicyResponse>(rpc_, stub_.get(), &CoordinatorService::Stub::SetPolicy, request);
}

absl::StatusOr<UpsertUrlsResponse> AdminClient::UpsertUrls(const std::vector<UrlSpec>& urls,
                                                           bool sync) {
  return SendInBatches<UpsertUrlsRequest, UpsertUrlsResponse>(
      rpc_, urls, sync, &UpsertUrlsRequest::mutable_urls,
      [this](grpc::ClientContext* c, const UpsertUrlsRequest& r, UpsertUrlsResponse* out) {
        return stub_->UpsertUrls(c, r, out);
      },
      [](const UpsertUrlsResponse& part, UpsertUrlsResponse* total) {
        total->set_created(total->created() + part.created());
      });
}

absl::StatusOr<DeleteUrlsResponse> AdminClient::DeleteUrls(const std::vector<std::string>& urls,
                                                           bool sync) {
  return SendInBatches<DeleteUrlsRequest, DeleteUrlsResponse>(
      rpc_, urls, sync, &DeleteUrlsRequest::mutable_urls,
      [this](grpc::ClientContext* c, const DeleteUrlsRequest& r, DeleteUrlsResponse* out) {
        return stub_->DeleteUrls(c, r, out);
      });
}

absl::StatusOr<SetHostPolitenessResponse> AdminClient::SetHostPoliteness(
    const std::vector<HostPoliteness>& hosts, bool sync) {
  return SendInBatches<SetHostPolitenessRequest, SetHostPolitenessResponse>(
      rpc_, hosts, sync, &SetHostPolitenessRequest::mutable_hosts,
      [this](grpc::ClientContext* c, const SetHostPolitenessRequest& r,
             SetHostPolitenessResponse* out) { return stub_->SetHostPoliteness(c, r, out); });
}

}  // namespace client
}  // namespace recrawl
