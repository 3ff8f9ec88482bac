#include "ingest/host_rate_limiter.h"

#include <algorithm>

namespace recrawl {
namespace ingest {

double HostRateLimiter::Refilled(const Bucket& b, absl::Time now) const {
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(now - b.last));
  return std::min(options_.burst, b.tokens + seconds * options_.rate);
}

bool HostRateLimiter::Allow(absl::string_view host, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(host);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_hosts) {
      absl::erase_if(buckets_, [&](const auto& entry) {
        return Refilled(entry.second, now) >= options_.burst;
      });
      if (buckets_.size() >= options_.max_hosts) return false;
    }
    it = buckets_.emplace(std::string(host), Bucket{options_.burst, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = Refilled(b, now);
  b.last = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

}  // namespace ingest
}  // namespace recrawl
