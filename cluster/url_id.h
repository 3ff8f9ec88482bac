// Stable 64-bit keys for URLs and hosts, and the host -> shard assignment.
//
// A URL's key is its id in the shard's store and the key of its signals;
// a host's key picks the shard that owns its URLs (jump consistent hash, so
// adding a shard moves only 1/n of the hosts). Both must be the same in
// every process and every build, forever: they are persisted and they route
// requests. So they are FNV-1a 64 (a fixed, published function) followed by
// the MurmurHash3 64-bit finaliser, which spreads FNV's weak low-order mixing
// over all bits; not absl::Hash, which is seeded per process.
//
// Keys are not secret: a client can construct two URLs with the same key.
// Collisions are therefore detected where a key is bound to a URL (the store
// keeps the URL in its record), not assumed impossible; between honest URLs
// their probability is about n²/2^65 (3e-8 for a million URLs).
#ifndef RECRAWL_CLUSTER_URL_ID_H_
#define RECRAWL_CLUSTER_URL_ID_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace recrawl {
namespace cluster {

using UrlId = uint64_t;

// The stable 64-bit fingerprint of `text`.
uint64_t Fingerprint64(absl::string_view text);

// The id of a URL in normal form (NormalizedUrl::spec()).
inline UrlId UrlIdOf(absl::string_view normalized_url) { return Fingerprint64(normalized_url); }

// Lamping & Veach's jump consistent hash: a bucket in [0, num_buckets) for
// `key`, num_buckets >= 1. Growing num_buckets by one moves a key only to the
// new bucket, and each key with probability 1/(num_buckets).
int32_t JumpConsistentHash(uint64_t key, int32_t num_buckets);

// The shard that owns the URLs of politeness host `host` (normalised).
inline int32_t ShardOfHost(absl::string_view host, int32_t num_shards) {
  return JumpConsistentHash(Fingerprint64(host), num_shards);
}

namespace internal {
// The parts, exposed for tests against published vectors.
uint64_t Fnv1a64(absl::string_view text);
uint64_t MurmurFinalize64(uint64_t x);
}  // namespace internal

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_URL_ID_H_
