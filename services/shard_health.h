// The coordinator's view of its shards' health and figures: probes every
// shard address (GetStats) and feeds the answers to the shard directory
// (coordinator/shard_directory.h), which decides who is live; keeps each
// shard's last figures, from the probes or asked for at once (Refresh), and
// sums them for ClusterStats.
//
// The core (`core`, whose directory this feeds) is read and changed only
// with `*core_mu` held; the shard calls are made without it. Thread-safe.
#ifndef RECRAWL_SERVICES_SHARD_HEALTH_H_
#define RECRAWL_SERVICES_SHARD_HEALTH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "proto/coordinator.pb.h"
#include "services/clock.h"
#include "services/coordinator_shards.h"

namespace recrawl {
namespace services {

class ShardHealth {
 public:
  // Every pointer must outlive this. `probe_deadline`: real seconds a
  // probe may take.
  ShardHealth(coordinator::Coordinator* core, absl::Mutex* core_mu, const Clock* clock,
              ShardChannels* channels, double probe_deadline);

  // Probes every address, records the answers in the directory (logging a
  // refused shard when its refusal changes), and ticks the core. Returns the
  // liveness changes and who is live now.
  struct Probed {
    std::vector<coordinator::ShardDirectory::Transition> changes;
    std::vector<bool> live;
  };
  Probed Probe(const std::vector<std::string>& addresses) ABSL_LOCKS_EXCLUDED(mu_);

  // Asks every live shard for its figures now.
  void Refresh() ABSL_LOCKS_EXCLUDED(mu_);

  // Adds each shard's last figures to `stats` (shards, total) with
  // `live[s]` (live, live_shards) at time `now`.
  void AddShardFigures(const std::vector<bool>& live, double now, ClusterStats* stats) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  coordinator::Coordinator* const core_;
  absl::Mutex* const core_mu_;
  const Clock* const clock_;
  ShardChannels* const channels_;
  const double probe_deadline_;
  mutable absl::Mutex mu_;
  std::vector<ShardStats> last_stats_ ABSL_GUARDED_BY(mu_);
  // The last refusal logged per address, so that a misconfigured shard is
  // logged when its refusal changes, not at every probe.
  std::map<std::string, std::string> last_refusal_ ABSL_GUARDED_BY(mu_);
};

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_SHARD_HEALTH_H_
