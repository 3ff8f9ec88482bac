// Which shard owns a URL or a host: the shard of the URL's politeness host
// under shard/url_id.h's consistent hash, so that all URLs of a host (and
// its politeness state) live on one shard. The coordinator routes
// upserts, signals, reports by URL and operator requests with it; clients
// that fetch the shard map compute the same.
#ifndef RECRAWL_COORDINATOR_ROUTING_H_
#define RECRAWL_COORDINATOR_ROUTING_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace coordinator {

// The hash's name in the shard map (proto/coordinator.proto ShardMap.hash).
inline constexpr char kShardHashName[] = "fnv1a64-murmur-jump";

// The shard of `url`'s host, or of `politeness_host` when not empty.
// INVALID_ARGUMENT naming the field for a malformed URL or host.
absl::StatusOr<int> ShardOfUrl(absl::string_view url, absl::string_view politeness_host,
                               int num_shards);
absl::StatusOr<int> ShardOfHostName(absl::string_view host, int num_shards);

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_ROUTING_H_
