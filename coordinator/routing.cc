#include "coordinator/routing.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "shard/url.h"
#include "shard/url_id.h"

namespace recrawl {
namespace coordinator {

absl::StatusOr<int> ShardOfHostName(absl::string_view host, int num_shards) {
  absl::StatusOr<std::string> normalized = shard::NormalizeHost(host);
  if (!normalized.ok()) return normalized.status();
  return shard::ShardOfHost(*normalized, num_shards);
}

absl::StatusOr<int> ShardOfUrl(absl::string_view url, absl::string_view politeness_host,
                               int num_shards) {
  absl::StatusOr<shard::NormalizedUrl> normalized = shard::NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  if (!politeness_host.empty()) {
    absl::StatusOr<int> shard = ShardOfHostName(politeness_host, num_shards);
    if (!shard.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("politeness_host: ", shard.status().message()));
    }
    return shard;
  }
  return shard::ShardOfHost(normalized->host(), num_shards);
}

}  // namespace coordinator
}  // namespace recrawl
