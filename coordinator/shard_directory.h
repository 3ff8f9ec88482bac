// Which shards the coordinator talks to and which of them are up.
//
// Shards are found by address (a list, or the addresses one DNS name
// resolves to, e.g. a Kubernetes headless service). An address says nothing
// about which shard it is, so each probe answer carries the shard's own
// index and the shard count it was started with; the directory places the
// shard by that index and refuses, loudly, a shard whose count differs from
// the coordinator's (its URLs would be routed by a different hash) or a
// second address claiming an index that is live elsewhere.
//
// A shard is live while its last successful probe is less than
// `failure_timeout` old; with probes every `failure_timeout`/4 a shard that
// stops answering is out within the timeout, and it is
// back at its first successful probe.
//
// Pure logic: the server probes (GetStats) and feeds results
// with `now`.
#ifndef RECRAWL_COORDINATOR_SHARD_DIRECTORY_H_
#define RECRAWL_COORDINATOR_SHARD_DIRECTORY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recrawl {
namespace coordinator {

class ShardDirectory {
 public:
  struct Options {
    double failure_timeout = 1.5;  // seconds
    // The cluster's routing (cluster/routing.h's names); a shard whose store
    // routes otherwise is refused.
    std::string routing = "site";
  };
  // What a probe of one address found.
  struct Probe {
    std::string address;
    bool ok = false;       // answered health and stats
    int shard_index = -1;  // as the shard reports it
    int num_shards = 0;    // as the shard reports it
    std::string routing;   // as the shard reports it
  };
  // A shard's place: its address and state.
  struct Shard {
    std::string address;  // empty until some address answered as this shard
    double last_ok = -1.0;
    bool ever_seen = false;
  };
  // A change of a shard's state, for the log and for the caller to act on
  // (budgets, returning a shard's leases to it).
  struct Transition {
    int shard_index;
    bool live;
  };

  ShardDirectory(int num_shards, const Options& options);

  // Records a probe. A probe that answered for the wrong shard count, an
  // index out of range, or an index another live address holds is refused
  // with FAILED_PRECONDITION naming both sides (the shard then stays out).
  absl::Status Record(const Probe& probe, double now);

  // A call to the shard failed (e.g. it missed a lease deadline): it is out
  // at once, and back at its next successful probe, so that requests stop
  // waiting on it before the probes would notice.
  void RecordFailure(int shard_index, double now);

  bool IsLive(int shard_index, double now) const;
  std::vector<bool> Live(double now) const;
  int num_shards() const { return static_cast<int>(shards_.size()); }
  const Shard& shard(int shard_index) const { return shards_[shard_index]; }

  // The shards whose liveness changed since the last call.
  std::vector<Transition> TakeTransitions(double now);

 private:
  Options options_;
  std::vector<Shard> shards_;
  std::vector<bool> reported_live_;
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_SHARD_DIRECTORY_H_
