// An operator's side of the coordinator: bandwidth and mode, cluster stats,
// URLs, politeness, policy. What recrawlctl calls.
//
// Every call here is retried after UNAVAILABLE (a restarting coordinator),
// because applying it twice leaves the same state: settings are absolute
// values, an upsert sets the same fields again. What a retry can change is
// the answer: a retried upsert counts URLs the lost attempt created as not
// created, a retried delete rejects URLs the lost attempt removed as
// NOT_FOUND.
#ifndef RECRAWL_CLIENT_ADMIN_CLIENT_H_
#define RECRAWL_CLIENT_ADMIN_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "client/rpc.h"
#include "proto/coordinator.grpc.pb.h"

namespace recrawl {
namespace client {

class AdminClient {
 public:
  explicit AdminClient(ClientOptions options);

  absl::StatusOr<BandwidthState> GetBandwidth();
  // Unset `bandwidth` / COORDINATOR_MODE_UNSPECIFIED leave it unchanged.
  absl::StatusOr<BandwidthState> SetBandwidth(std::optional<double> bandwidth,
                                              CoordinatorMode mode);
  absl::StatusOr<ClusterStats> GetClusterStats();
  absl::StatusOr<ShardMap> GetShardMap();

  // Batch calls, split into requests of ClientOptions::max_batch_items;
  // rejected items carry their index in the caller's list. An error stops
  // at the failing request (the earlier ones were applied); its message
  // names the items it covered.
  absl::StatusOr<UpsertUrlsResponse> UpsertUrls(const std::vector<UrlSpec>& urls,
                                                bool sync = false);
  absl::StatusOr<DeleteUrlsResponse> DeleteUrls(const std::vector<std::string>& urls,
                                                bool sync = false);
  absl::StatusOr<SetHostPolitenessResponse> SetHostPoliteness(
      const std::vector<HostPoliteness>& hosts, bool sync = false);

  absl::StatusOr<UrlState> GetUrlState(const std::string& url);
  absl::StatusOr<SetPolicyResponse> SetPolicy(const SetPolicyRequest& request);

 private:
  Rpc rpc_;
  std::unique_ptr<CoordinatorService::Stub> stub_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_ADMIN_CLIENT_H_
