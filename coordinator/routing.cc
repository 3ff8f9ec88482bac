#include "coordinator/routing.h"

#include <string>

#include "shard/url.h"

namespace recrawl {
namespace coordinator {

absl::StatusOr<int> ShardOfHostName(absl::string_view host, shard::Routing routing,
                                    int num_shards) {
  absl::StatusOr<std::string> normalized = shard::NormalizeHost(host);
  if (!normalized.ok()) return normalized.status();
  return shard::OwnerOfHost(*normalized, routing, num_shards);
}

absl::StatusOr<int> ShardOfUrl(absl::string_view url, shard::Routing routing, int num_shards) {
  absl::StatusOr<shard::NormalizedUrl> normalized = shard::NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  return shard::OwnerOfHost(normalized->host(), routing, num_shards);
}

}  // namespace coordinator
}  // namespace recrawl
