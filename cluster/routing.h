// Which shard owns a URL: the cluster's routing rule, which every process
// that routes (shards checking what they own, the coordinator, clients
// sending straight to shards) computes the same way from the URL alone.
//
// A URL is owned by the shard of its routing key under url_id.h's
// consistent hash (ShardOfHost). The key is, by the cluster's routing:
//
//  * kSite: the registrable domain of the URL's host ("www.example.co.uk"
//    → "example.co.uk"), from the public suffix list built into libpsl, so
//    that a site's hosts share a shard and may share a politeness group.
//    Hosts without one (IP literals, "localhost", a public suffix itself)
//    are their own key. Every process of a cluster must link the same
//    libpsl (the same build), or they would disagree for the domains whose
//    suffixes changed in between.
//  * kHost: the host itself. Stores made before site routing route so,
//    and keep doing so (ShardMeta.routing).
//
// A URL's politeness host, when given, must be owned by the same shard as
// the URL (a host of the same site, under site routing).
#ifndef RECRAWL_CLUSTER_ROUTING_H_
#define RECRAWL_CLUSTER_ROUTING_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace cluster {

enum class Routing { kHost, kSite };

// "host" or "site".
absl::string_view RoutingName(Routing routing);
// INVALID_ARGUMENT naming "routing" for another name.
absl::StatusOr<Routing> ParseRouting(absl::string_view name);
// The name of the whole rule in the coordinator's shard map
// (ShardMap.hash), for clients that route themselves.
absl::string_view RoutingHashName(Routing routing);
// The routing of a ShardMap.hash; INVALID_ARGUMENT for an unknown one.
absl::StatusOr<Routing> RoutingOfHashName(absl::string_view hash);

// The shard of `url` as a client gave it (normalised first).
// INVALID_ARGUMENT naming the field for a malformed URL. Thread-safe.
absl::StatusOr<int> ShardOfUrl(absl::string_view url, Routing routing, int num_shards);
// The shard of a host's URLs (a politeness setting's host), as a client
// gave it. Thread-safe.
absl::StatusOr<int> ShardOfHostName(absl::string_view host, Routing routing, int num_shards);

// The routing key of a normalised host (NormalizedUrl::host or
// NormalizeHost's result). Thread-safe.
std::string RoutingKey(absl::string_view host, Routing routing);
// The shard owning `host`'s URLs, in [0, num_shards). Thread-safe.
int32_t OwnerOfHost(absl::string_view host, Routing routing, int32_t num_shards);

// ShardOfUrl with the owners of the hosts it met last remembered: a stream
// of signals or a batch of reports meets the same hosts again and again,
// and the rule's public-suffix lookup and hash cost more than normalising
// the URL. Routes exactly as ShardOfUrl. Holds up to `max_hosts` hosts
// (~50 bytes each plus the name), forgetting them all when full. Not
// thread-safe: one per stream or call.
class ShardRouter {
 public:
  ShardRouter(Routing routing, int num_shards, size_t max_hosts = size_t{1} << 14);
  // ShardOfUrl(url, routing, num_shards).
  absl::StatusOr<int> ShardOf(absl::string_view url);
  // Hosts whose owner was computed rather than remembered (for tests).
  uint64_t lookups() const { return lookups_; }

 private:
  Routing routing_;
  int num_shards_;
  size_t max_hosts_;
  uint64_t lookups_ = 0;
  absl::flat_hash_map<std::string, int32_t> owner_of_host_;
};

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_ROUTING_H_
