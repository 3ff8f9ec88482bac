// Leases the shards granted that no fetcher will get, until each shard has
// released them: so that every lease a shard grants is either delivered to
// a fetcher or released back (its URL eligible again at once), and none
// waits out its deadline unseen.
//
// Two ways a lease goes undelivered: the coordinator gives up waiting for a
// shard's Lease answer (its deadline passed, the connection broke), and
// then does not know what the shard granted, only the request's id
// (LeaseRequest.request_id); or it has the answer but the fetcher's call
// ended first. The caller takes a shard's pending releases before its next
// call to that shard (and on its health probes), sends them (ReleaseLeases),
// and gives them back if that fails.
//
// Accounting: granted by the shards = delivered + released + still pending
// or active; `delivered` is the caller's to count, the rest is here.
//
// Pure bookkeeping; not thread-safe.
#ifndef RECRAWL_COORDINATOR_LEASE_RELEASES_H_
#define RECRAWL_COORDINATOR_LEASE_RELEASES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace recrawl {
namespace coordinator {

class LeaseReleases {
 public:
  // What to release at one shard.
  struct Batch {
    std::vector<uint64_t> request_ids;
    std::vector<uint64_t> lease_ids;  // the shard's own ids
    bool empty() const { return request_ids.empty() && lease_ids.empty(); }
    size_t size() const { return request_ids.size() + lease_ids.size(); }
  };
  struct Stats {
    uint64_t abandoned_requests = 0;  // Lease calls given up on
    uint64_t undelivered_leases = 0;  // leases answered but not handed on
    uint64_t released = 0;            // leases the shards say they ended
    uint64_t pending = 0;             // request and lease ids not yet sent
  };

  explicit LeaseReleases(int num_shards) : pending_(num_shards) {}

  // A Lease call to `shard` with this request id got no usable answer.
  void Abandon(int shard, uint64_t request_id);
  // Leases of `shard` (its ids) that were granted but not handed on.
  void Undelivered(int shard, const std::vector<uint64_t>& lease_ids);
  bool Pending(int shard) const { return !pending_[shard].empty(); }
  // Takes what is pending for `shard`, at most `max_items` ids, for one
  // ReleaseLeases call.
  Batch Take(int shard, size_t max_items);
  // The call failed: `batch` is pending again.
  void Return(int shard, Batch batch);
  // The call succeeded: the shard ended `released` active leases.
  void Released(uint64_t released) { stats_.released += released; }

  const Stats& stats() const { return stats_; }

 private:
  std::vector<Batch> pending_;
  Stats stats_;
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_LEASE_RELEASES_H_
