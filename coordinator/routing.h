// Which shard owns a URL or a host, for the coordinator's routing of
// upserts, signals, reports by URL and operator requests: the cluster's rule
// (shard/routing.h) applied to a URL or host as a client gave it.
#ifndef RECRAWL_COORDINATOR_ROUTING_H_
#define RECRAWL_COORDINATOR_ROUTING_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "shard/routing.h"

namespace recrawl {
namespace coordinator {

// The shard of `url`. INVALID_ARGUMENT naming the field for a malformed
// URL.
absl::StatusOr<int> ShardOfUrl(absl::string_view url, shard::Routing routing, int num_shards);
// The shard of a host's URLs (a politeness setting's host).
absl::StatusOr<int> ShardOfHostName(absl::string_view host, shard::Routing routing,
                                    int num_shards);

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_ROUTING_H_
