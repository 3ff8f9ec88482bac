#include "coordinator/shard_directory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace coordinator {

ShardDirectory::ShardDirectory(int num_shards, const Options& options)
    : options_(options), shards_(num_shards), reported_live_(num_shards, false) {}

absl::Status ShardDirectory::Record(const Probe& probe, double now) {
  if (!probe.ok) {
    // A failed probe only matters through the missing success: the shard at
    // that address goes out when its last success is too old.
    return absl::OkStatus();
  }
  if (probe.num_shards != num_shards()) {
    return absl::FailedPreconditionError(
        absl::StrCat("shard at ", probe.address, " belongs to a cluster of ", probe.num_shards,
                     " shards, this coordinator routes over ", num_shards(),
                     "; refusing it (start both with the same shard count)"));
  }
  if (probe.routing != options_.routing) {
    return absl::FailedPreconditionError(
        absl::StrCat("shard at ", probe.address, " routes URLs by ",
                     probe.routing.empty() ? "host (a build before site routing)" : probe.routing,
                     ", this coordinator by ", options_.routing,
                     "; refusing it (run the coordinator with the routing of the shards' stores)"));
  }
  if (probe.shard_index < 0 || probe.shard_index >= num_shards()) {
    return absl::FailedPreconditionError(absl::StrCat("shard at ", probe.address, " reports index ",
                                                      probe.shard_index, ", outside [0, ",
                                                      num_shards(), "); refusing it"));
  }
  Shard& shard = shards_[probe.shard_index];
  if (shard.address != probe.address && IsLive(probe.shard_index, now)) {
    return absl::FailedPreconditionError(
        absl::StrCat("shards at ", shard.address, " and ", probe.address, " both report index ",
                     probe.shard_index, "; keeping ", shard.address, ", refusing ", probe.address));
  }
  shard.address = probe.address;
  shard.last_ok = now;
  shard.ever_seen = true;
  return absl::OkStatus();
}

void ShardDirectory::RecordFailure(int shard_index, double now) {
  Shard& shard = shards_[shard_index];
  shard.last_ok = std::min(shard.last_ok, now - options_.failure_timeout);
}

bool ShardDirectory::IsLive(int shard_index, double now) const {
  const Shard& shard = shards_[shard_index];
  return shard.ever_seen && now - shard.last_ok < options_.failure_timeout;
}

std::vector<bool> ShardDirectory::Live(double now) const {
  std::vector<bool> live(shards_.size());
  for (int s = 0; s < num_shards(); ++s) live[s] = IsLive(s, now);
  return live;
}

std::vector<ShardDirectory::Transition> ShardDirectory::TakeTransitions(double now) {
  std::vector<Transition> out;
  for (int s = 0; s < num_shards(); ++s) {
    const bool live = IsLive(s, now);
    if (live != reported_live_[s]) {
      out.push_back({s, live});
      reported_live_[s] = live;
    }
  }
  return out;
}

}  // namespace coordinator
}  // namespace recrawl
