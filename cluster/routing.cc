#include "cluster/routing.h"

#include <libpsl.h>

#include <algorithm>
#include <optional>

#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cluster/url.h"
#include "cluster/url_id.h"

namespace recrawl {
namespace cluster {
namespace {

constexpr char kHostHash[] = "fnv1a64-murmur-jump";
constexpr char kSiteHash[] = "psl-site-fnv1a64-murmur-jump";

// An IPv4 literal (digits and dots) or an IPv6 one ("[...]"): no domain.
bool IsIpLiteral(absl::string_view host) {
  if (!host.empty() && host.front() == '[') return true;
  for (char c : host) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return !host.empty();
}

}  // namespace

absl::string_view RoutingName(Routing routing) {
  return routing == Routing::kSite ? "site" : "host";
}

absl::StatusOr<Routing> ParseRouting(absl::string_view name) {
  if (name == "site") return Routing::kSite;
  if (name == "host") return Routing::kHost;
  return absl::InvalidArgumentError(
      absl::StrCat("routing: must be site or host, got \"", name.substr(0, 32), "\""));
}

absl::string_view RoutingHashName(Routing routing) {
  return routing == Routing::kSite ? kSiteHash : kHostHash;
}

absl::StatusOr<Routing> RoutingOfHashName(absl::string_view hash) {
  if (hash == kSiteHash) return Routing::kSite;
  if (hash == kHostHash) return Routing::kHost;
  return absl::InvalidArgumentError(
      absl::StrCat("hash: unknown routing \"", hash.substr(0, 64), "\""));
}

std::string RoutingKey(absl::string_view host, Routing routing) {
  std::string key(host);
  if (routing == Routing::kHost || IsIpLiteral(host)) return key;
  // psl_builtin() is the list compiled into libpsl: the same for every
  // process of the build, unlike a list read from the system.
  const char* site = psl_registrable_domain(psl_builtin(), key.c_str());
  if (site != nullptr) key.erase(0, static_cast<size_t>(site - key.c_str()));
  return key;
}

int32_t OwnerOfHost(absl::string_view host, Routing routing, int32_t num_shards) {
  if (num_shards <= 1) return 0;  // no key to look up
  return ShardOfHost(RoutingKey(host, routing), num_shards);
}

absl::StatusOr<int> ShardOfHostName(absl::string_view host, Routing routing, int num_shards) {
  absl::StatusOr<std::string> normalized = NormalizeHost(host);
  if (!normalized.ok()) return normalized.status();
  return OwnerOfHost(*normalized, routing, num_shards);
}

absl::StatusOr<int> ShardOfUrl(absl::string_view url, Routing routing, int num_shards) {
  absl::StatusOr<NormalizedUrl> normalized = NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  return OwnerOfHost(normalized->host(), routing, num_shards);
}

HostOwnerCache::HostOwnerCache(Routing routing, int num_shards, size_t max_hosts)
    : routing_(routing),
      num_shards_(num_shards),
      max_per_stripe_(std::max<size_t>(1, max_hosts / kStripes)),
      stripes_(new Stripe[kStripes]) {}

int32_t HostOwnerCache::OwnerOf(absl::string_view host) {
  if (num_shards_ <= 1) return 0;
  // One hash: its top bits pick the stripe, whose table uses its low ones.
  const size_t hash = absl::Hash<absl::string_view>{}(host);
  Stripe& stripe = stripes_[hash >> 58];
  {
    absl::MutexLock lock(&stripe.mu);
    if (auto it = stripe.owners.find(host, hash); it != stripe.owners.end()) return it->second;
  }
  computed_.fetch_add(1, std::memory_order_relaxed);
  const int32_t owner = OwnerOfHost(host, routing_, num_shards_);
  absl::MutexLock lock(&stripe.mu);
  if (stripe.owners.size() >= max_per_stripe_) stripe.owners.clear();
  stripe.owners.emplace(host, owner);
  return owner;
}

ShardRouter::ShardRouter(Routing routing, int num_shards, size_t max_hosts)
    : own_(std::make_unique<HostOwnerCache>(routing, num_shards, max_hosts)), owners_(own_.get()) {}

absl::StatusOr<int> ShardRouter::ShardOf(absl::string_view url) {
  // Most URLs come in normal form, and their host is found without
  // normalising them.
  if (std::optional<absl::string_view> host = NormalFormHost(url)) {
    return owners_->OwnerOf(*host);
  }
  absl::StatusOr<NormalizedUrl> normalized = NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  return owners_->OwnerOf(normalized->host());
}

}  // namespace cluster
}  // namespace recrawl
