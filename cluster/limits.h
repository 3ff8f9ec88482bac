// Limits of the wire API that shards and the coordinator check alike, so
// that a client gets the same answer from either.
#ifndef RECRAWL_CLUSTER_LIMITS_H_
#define RECRAWL_CLUSTER_LIMITS_H_

#include <cstddef>

namespace recrawl {
namespace cluster {

// Longest lease holder name (bytes).
constexpr size_t kMaxHolderBytes = 256;
// Longest lease a fetcher may ask for (seconds).
constexpr double kMaxLeaseDuration = 7 * 86400.0;

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_LIMITS_H_
