// The coordinator's checks and conversions of request fields, beside what
// the shards check again: each error is INVALID_ARGUMENT naming the field,
// so that a client's error is its own and not a shard's. Thread-safe.
#ifndef RECRAWL_SERVICES_COORDINATOR_REQUESTS_H_
#define RECRAWL_SERVICES_COORDINATOR_REQUESTS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "proto/coordinator.pb.h"

namespace recrawl {
namespace services {

// The holder's length against cluster::kMaxHolderBytes.
absl::Status CheckHolder(const std::string& holder);
// A lease duration in [0, cluster::kMaxLeaseDuration] (0: the default).
absl::Status CheckLeaseDuration(double seconds);
// A lookahead: finite seconds >= 0.
absl::Status CheckLookahead(double seconds);

// The shard of a cluster lease id (coordinator::ClusterLeaseId), or an
// error naming `field` when the id names no shard of `num_shards`.
absl::StatusOr<int> ShardOfClusterLease(uint64_t lease_id, int num_shards, const char* field);

CoordinatorMode ToProto(coordinator::Mode mode);
// `mode` of a SetBandwidth request; UNSPECIFIED reads as merge (the caller
// decides whether to set it).
absl::StatusOr<coordinator::Mode> ModeFromProto(CoordinatorMode mode);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_COORDINATOR_REQUESTS_H_
