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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

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

// The owners of the hosts met so far (OwnerOfHost), shared by every stream
// and call of a process: the rule's public-suffix lookup and hash cost ten
// times a remembered answer, and a stream over many sites (a gateway's, a
// sitemap poller's) meets more hosts than one stream could keep for itself.
// Holds up to about `max_hosts` hosts (~60 bytes each plus the name) in 64
// stripes, each forgetting its hosts when it is full. Thread-safe: a lookup
// locks one stripe.
class HostOwnerCache {
 public:
  HostOwnerCache(Routing routing, int num_shards, size_t max_hosts = size_t{1} << 18);
  HostOwnerCache(const HostOwnerCache&) = delete;
  HostOwnerCache& operator=(const HostOwnerCache&) = delete;

  // OwnerOfHost(host, routing, num_shards).
  int32_t OwnerOf(absl::string_view host);
  Routing routing() const { return routing_; }
  int num_shards() const { return num_shards_; }
  // Hosts whose owner was computed rather than remembered.
  uint64_t computed() const { return computed_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kStripes = 64;  // the hash's top 6 bits
  struct Stripe {
    absl::Mutex mu;
    absl::flat_hash_map<std::string, int32_t> owners ABSL_GUARDED_BY(mu);
  };
  const Routing routing_;
  const int num_shards_;
  const size_t max_per_stripe_;
  std::atomic<uint64_t> computed_{0};
  std::unique_ptr<Stripe[]> stripes_;
};

// ShardOfUrl with the hosts' owners from a HostOwnerCache: a URL in normal
// form (NormalFormHost) is routed without normalising it. Routes exactly as
// ShardOfUrl. Thread-safe, as its cache is.
class ShardRouter {
 public:
  // Uses `owners`, which must outlive the router.
  explicit ShardRouter(HostOwnerCache* owners) : owners_(owners) {}
  // With a cache of its own of up to `max_hosts` hosts.
  ShardRouter(Routing routing, int num_shards, size_t max_hosts = size_t{1} << 14);
  // ShardOfUrl(url, routing, num_shards).
  absl::StatusOr<int> ShardOf(absl::string_view url);
  // Hosts whose owner its cache computed rather than remembered (for tests).
  uint64_t lookups() const { return owners_->computed(); }

 private:
  std::unique_ptr<HostOwnerCache> own_;
  HostOwnerCache* owners_;
};

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_ROUTING_H_
