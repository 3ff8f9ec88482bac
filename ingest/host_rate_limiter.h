// Requests per host, as token buckets: a host may send `burst` requests at
// once and `rate` per second after that; past it the gateway answers 429.
// Buckets of hosts not seen for a while are forgotten (a full bucket is
// the same as none).
//
// Pure logic (takes `now`); thread-safe (one mutex).
#ifndef RECRAWL_INGEST_HOST_RATE_LIMITER_H_
#define RECRAWL_INGEST_HOST_RATE_LIMITER_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace recrawl {
namespace ingest {

class HostRateLimiter {
 public:
  struct Options {
    // Requests per second per host (> 0), and the bucket's size (>= 1).
    double rate = 10.0;
    double burst = 100.0;
    // Hosts tracked; when full, buckets that have refilled are dropped, and
    // if none has, a new host is refused.
    size_t max_hosts = 100000;
  };
  explicit HostRateLimiter(Options options) : options_(options) {}

  // Takes one request's token for `host`; false when its bucket is empty.
  bool Allow(absl::string_view host, absl::Time now);

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time last;
  };
  double Refilled(const Bucket& b, absl::Time now) const;

  const Options options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_HOST_RATE_LIMITER_H_
