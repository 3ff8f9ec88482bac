// The leases each recent Lease request granted, by the caller's request id
// (LeaseRequest.request_id), so that a caller that gave up waiting for an
// answer can release what the request granted (ReleaseLeases), and a request
// that arrives after its release grants nothing.
//
// Bounded: the last kMaxRequests requests and at most kMaxLeases lease ids
// in all are remembered, the oldest forgotten first. A release of a request
// the log no longer (or never) knows still marks it released. Not kept
// across restarts: after one, a release by request id ends nothing, and the
// request's leases expire at their deadlines.
//
// Not thread-safe.
#ifndef RECRAWL_SHARD_LEASE_REQUEST_LOG_H_
#define RECRAWL_SHARD_LEASE_REQUEST_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace recrawl {
namespace shard {

class LeaseRequestLog {
 public:
  static constexpr size_t kMaxRequests = 65536;
  static constexpr size_t kMaxLeases = size_t{1} << 20;

  // Whether `request_id` was released (then its request grants nothing).
  bool Released(uint64_t request_id) const;
  // Request `request_id` (nonzero) granted lease `lease_id`.
  void Record(uint64_t request_id, uint64_t lease_id);
  // Marks `request_id` released and returns the leases it granted, as far
  // as the log remembers them.
  std::vector<uint64_t> Release(uint64_t request_id);

  size_t requests() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<uint64_t> leases;
    bool released = false;
  };
  // Adds an entry for `request_id` if missing, forgetting the oldest ones
  // past the bounds.
  Entry& Touch(uint64_t request_id);
  void Trim();

  absl::flat_hash_map<uint64_t, Entry> entries_;
  std::deque<uint64_t> order_;  // request ids, oldest first
  size_t leases_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_LEASE_REQUEST_LOG_H_
