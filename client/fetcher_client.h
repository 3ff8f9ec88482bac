// A crawler fetcher's side of the coordinator: lease URLs at their slot
// times, report what the crawls found.
//
//   FetcherClient fetcher(options, "fetcher-7");
//   for (;;) {
//     absl::StatusOr<std::vector<CoordinatorLease>> urls = fetcher.Lease(64);
//     ... crawl each at its slot_time ...
//     fetcher.Report(reports);
//   }
//
// Retries. Reports by lease id and the operator's idempotent calls are
// retried after UNAVAILABLE (a shard refuses a second report of a lease as
// NOT_FOUND, so a retry cannot count a crawl twice). A Lease is not resent
// as such: if its answer is lost, the URLs it leased stay leased, and so
// uncrawled, until their lease deadline (the shard's --lease_duration,
// 600 s by default), and their slots of the bandwidth are spent. Resending
// every lease whose answer was lost would double that cost on each flaky
// hop. So Lease() waits for the next slot and asks for new slots only after
// UNAVAILABLE (mostly "not connected": the call never reached the
// coordinator), never after a deadline or a reset mid-call.
#ifndef RECRAWL_CLIENT_FETCHER_CLIENT_H_
#define RECRAWL_CLIENT_FETCHER_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client_options.h"
#include "client/rpc.h"
#include "proto/coordinator.grpc.pb.h"

namespace recrawl {
namespace client {

// After a Lease that returned no URL: coordinator seconds until the next
// slot comes within `lookahead` of now (>= 0), or nullopt when that slot is
// already due, i.e. the shards had no eligible URL for it (back off then:
// next_slot_time says nothing about when URLs come due).
std::optional<double> SecondsUntilNextSlot(double now, double next_slot_time, double lookahead);

struct FetcherOptions {
  // The fetcher's name, shown in the URLs' lease state.
  std::string holder;
  // How far ahead of now slots may be taken (coordinator seconds; the
  // coordinator caps it).
  double lookahead = 0.0;
  // Lease() returns an empty list after waiting this long for a URL (real
  // time, counted as the waits it made). Infinite: waits until one comes.
  absl::Duration max_wait = absl::InfiniteDuration();
  // Seconds after its slot time a lease expires (0: the cluster's default).
  double lease_duration = 0.0;
};

class FetcherClient {
 public:
  FetcherClient(ClientOptions options, FetcherOptions fetcher);

  // One Lease call, no retry: up to `max_urls` URLs and the next slot time.
  absl::StatusOr<FetchLeaseResponse> LeaseOnce(int max_urls);

  // Between 1 and `max_urls` URLs for the next slots: when none is due,
  // waits until next_slot_time; when the shards have none, or the
  // coordinator is unreachable (UNAVAILABLE), backs off (options.backoff)
  // and asks again. Other errors are returned at once. Empty after
  // FetcherOptions::max_wait. UNAVAILABLE after options.max_attempts
  // unreachable attempts in a row.
  absl::StatusOr<std::vector<CoordinatorLease>> Lease(int max_urls);

  // Reports, split into batches of options.max_batch_items; rejected items
  // carry their index in `reports`. Batches whose reports all name a lease
  // id are retried after UNAVAILABLE (a report that the lost attempt
  // applied then comes back NOT_FOUND "already reported"); batches with
  // reports by URL are not (a second report by URL is a second crawl).
  absl::StatusOr<ReportCrawlsResponse> Report(const std::vector<CrawlReport>& reports);

  // A URL's state (to see a lease's deadline, a page's signals); retried
  // after UNAVAILABLE.
  absl::StatusOr<UrlState> GetUrlState(const std::string& url);
  // Gives leases back unfetched (their URLs are eligible again at once);
  // `released` in the answer counts the ones that were still active. One
  // call, no retry.
  absl::StatusOr<FetchReleaseResponse> Release(const std::vector<uint64_t>& lease_ids);
  // Extends leases to now + `lease_duration` seconds (0: the default);
  // per-item NOT_FOUND for leases no longer active. Retried after
  // UNAVAILABLE (a renewal applied twice is the same renewal).
  absl::StatusOr<FetchRenewResponse> Renew(const std::vector<uint64_t>& lease_ids,
                                           double lease_duration);

  // Reads the coordinator's lease stream, calling `on_lease` for each URL as
  // its slot comes, until `on_lease` returns false (then OK). A stream that
  // breaks or ends is opened again after a backoff; UNAVAILABLE after
  // options.max_attempts openings in a row without a URL, other errors at
  // once.
  absl::Status StreamLeases(const std::function<bool(const CoordinatorLease&)>& on_lease);

 private:
  Rpc rpc_;
  FetcherOptions fetcher_;
  std::unique_ptr<CoordinatorService::Stub> stub_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_FETCHER_CLIENT_H_
