#include "client/fetcher_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/batches.h"

namespace recrawl {
namespace client {

std::optional<double> SecondsUntilNextSlot(double now, double next_slot_time, double lookahead) {
  if (!(next_slot_time > now)) return std::nullopt;
  return std::max(0.0, next_slot_time - lookahead - now);
}

FetcherClient::FetcherClient(ClientOptions options, FetcherOptions fetcher)
    : rpc_(std::move(options)),
      fetcher_(std::move(fetcher)),
      stub_(CoordinatorService::NewStub(rpc_.channel())) {}

absl::StatusOr<FetchLeaseResponse> FetcherClient::LeaseOnce(int max_urls) {
  FetchLeaseRequest request;
  request.set_max_urls(static_cast<uint32_t>(std::max(max_urls, 0)));
  request.set_lookahead(fetcher_.lookahead);
  request.set_lease_duration(fetcher_.lease_duration);
  request.set_holder(fetcher_.holder);
  FetchLeaseResponse response;
  absl::Status status = rpc_.CallOnce(
      [&](grpc::ClientContext* context) { return stub_->Lease(context, request, &response); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<std::vector<CoordinatorLease>> FetcherClient::Lease(int max_urls) {
  BackoffDelays delays(rpc_.options().backoff);
  absl::Duration waited;
  int unreachable = 0;
  for (;;) {
    absl::StatusOr<FetchLeaseResponse> response = LeaseOnce(max_urls);
    absl::Duration wait;
    if (response.ok()) {
      unreachable = 0;
      if (response->leases_size() > 0) {
        return std::vector<CoordinatorLease>(response->leases().begin(), response->leases().end());
      }
      const std::optional<double> until =
          SecondsUntilNextSlot(rpc_.Now(), response->next_slot_time(), fetcher_.lookahead);
      if (until.has_value()) {
        delays.Reset();
        wait = absl::Seconds(*until / rpc_.options().time_scale);
      } else {
        wait = delays.Next();
      }
    } else if (absl::IsUnavailable(response.status())) {
      if (++unreachable >= rpc_.options().max_attempts) {
        return response.status();
      }
      wait = delays.Next();
    } else {
      return response.status();
    }
    if (waited + wait > fetcher_.max_wait) {
      return std::vector<CoordinatorLease>();
    }
    rpc_.Sleep(wait);
    waited += wait;
  }
}

absl::StatusOr<UrlState> FetcherClient::GetUrlState(const std::string& url) {
  GetUrlStateRequest request;
  request.set_url(url);
  UrlState state;
  absl::Status status = rpc_.CallIdempotent(
      [&](grpc::ClientContext* c) { return stub_->GetUrlState(c, request, &state); });
  if (!status.ok()) return status;
  return state;
}

absl::StatusOr<FetchReleaseResponse> FetcherClient::Release(
    const std::vector<uint64_t>& lease_ids) {
  FetchReleaseRequest request;
  for (uint64_t id : lease_ids) request.add_lease_ids(id);
  FetchReleaseResponse response;
  absl::Status status = rpc_.CallOnce(
      [&](grpc::ClientContext* c) { return stub_->ReleaseLeases(c, request, &response); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<FetchRenewResponse> FetcherClient::Renew(const std::vector<uint64_t>& lease_ids,
                                                        double lease_duration) {
  FetchRenewRequest request;
  for (uint64_t id : lease_ids) request.add_lease_ids(id);
  request.set_lease_duration(lease_duration);
  FetchRenewResponse response;
  absl::Status status = rpc_.CallIdempotent(
      [&](grpc::ClientContext* c) { return stub_->RenewLeases(c, request, &response); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<ReportCrawlsResponse> FetcherClient::Report(
    const std::vector<CrawlReport>& reports) {
  return SendInBatches<ReportCrawlsRequest, ReportCrawlsResponse>(
      rpc_, reports, /*sync=*/false, &ReportCrawlsRequest::mutable_reports,
      [this](grpc::ClientContext* c, const ReportCrawlsRequest& r, ReportCrawlsResponse* out) {
        return stub_->ReportCrawls(c, r, out);
      },
      [](const ReportCrawlsResponse& part, ReportCrawlsResponse* total) {
        total->set_changed(total->changed() + part.changed());
        total->set_unchanged(total->unchanged() + part.unchanged());
        total->set_failed(total->failed() + part.failed());
        total->set_gone(total->gone() + part.gone());
        total->set_undecided(total->undecided() + part.undecided());
      },
      [](const ReportCrawlsRequest& request) {
        for (const CrawlReport& r : request.reports()) {
          if (r.target_case() != CrawlReport::kLeaseId) return false;
        }
        return true;
      });
}

absl::Status FetcherClient::StreamLeases(
    const std::function<bool(const CoordinatorLease&)>& on_lease) {
  BackoffDelays delays(rpc_.options().backoff);
  StreamLeasesRequest request;
  request.set_holder(fetcher_.holder);
  request.set_lease_duration(fetcher_.lease_duration);
  int fruitless = 0;
  for (;;) {
    grpc::ClientContext context;
    rpc_.Prepare(&context);
    std::unique_ptr<grpc::ClientReader<CoordinatorLease>> reader =
        stub_->StreamLeases(&context, request);
    CoordinatorLease lease;
    bool got_any = false;
    while (reader->Read(&lease)) {
      got_any = true;
      if (!on_lease(lease)) {
        context.TryCancel();
        reader->Finish();  // CANCELLED, by us
        return absl::OkStatus();
      }
    }
    const grpc::Status status = reader->Finish();
    if (got_any) {
      fruitless = 0;
      delays.Reset();
    }
    if (!status.ok() && status.error_code() != grpc::StatusCode::UNAVAILABLE) {
      return FromGrpcStatus(status);
    }
    if (++fruitless >= rpc_.options().max_attempts) {
      return status.ok() ? absl::UnavailableError("the lease stream keeps ending without a URL")
                         : FromGrpcStatus(status);
    }
    rpc_.Sleep(delays.Next());
  }
}

}  // namespace client
}  // namespace recrawl
