#include "services/coordinator_requests.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "cluster/limits.h"

namespace recrawl {
namespace services {

using coordinator::Mode;

absl::Status CheckHolder(const std::string& holder) {
  if (holder.size() <= cluster::kMaxHolderBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("holder: ", holder.size(), " bytes, more than ", cluster::kMaxHolderBytes));
}

absl::Status CheckLeaseDuration(double seconds) {
  if (std::isfinite(seconds) && seconds >= 0.0 && seconds <= cluster::kMaxLeaseDuration) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("lease_duration: must be in [0, ",
                                                 cluster::kMaxLeaseDuration,
                                                 "] seconds (0: the default), got ", seconds));
}

absl::Status CheckLookahead(double seconds) {
  if (std::isfinite(seconds) && seconds >= 0.0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("lookahead: must be finite seconds >= 0, got ", seconds));
}

absl::StatusOr<int> ShardOfClusterLease(uint64_t lease_id, int num_shards, const char* field) {
  const int shard = coordinator::ShardOfLeaseId(lease_id);
  if (shard < num_shards) return shard;
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", lease_id, " names shard ", shard,
                                                 " of a cluster of ", num_shards,
                                                 "; not a lease of this coordinator"));
}

CoordinatorMode ToProto(Mode mode) {
  switch (mode) {
    case Mode::kMerge:
      return COORDINATOR_MODE_MERGE;
    case Mode::kSplitEqual:
      return COORDINATOR_MODE_SPLIT_EQUAL;
    case Mode::kSplitAdaptive:
      return COORDINATOR_MODE_SPLIT_ADAPTIVE;
  }
  return COORDINATOR_MODE_UNSPECIFIED;
}

absl::StatusOr<Mode> ModeFromProto(CoordinatorMode mode) {
  switch (mode) {
    case COORDINATOR_MODE_UNSPECIFIED:
    case COORDINATOR_MODE_MERGE:
      return Mode::kMerge;
    case COORDINATOR_MODE_SPLIT_EQUAL:
      return Mode::kSplitEqual;
    case COORDINATOR_MODE_SPLIT_ADAPTIVE:
      return Mode::kSplitAdaptive;
    default:
      return absl::InvalidArgumentError(absl::StrCat("mode: unknown value ", mode));
  }
}

}  // namespace services
}  // namespace recrawl
