// Per-host politeness shared by the index implementations: a minimum delay
// between two crawls of the host's pages and a block until a given time.
#ifndef RECRAWL_SHARD_INDEX_HOSTS_H_
#define RECRAWL_SHARD_INDEX_HOSTS_H_

#include <algorithm>
#include <limits>
#include <vector>

#include "shard/index/crawl_index.h"
#include "shard/index/huge_page_allocator.h"

namespace recrawl {
namespace shard {

class HostTable {
 public:
  struct Host {
    double min_delay = 0.0;
    double blocked_until = -std::numeric_limits<double>::infinity();
    double last_crawl = -std::numeric_limits<double>::infinity();
  };

  // The earliest time any page of the host may be offered.
  double AllowedFrom(HostId host) const {
    if (host >= hosts_.size()) return -std::numeric_limits<double>::infinity();
    const Host& h = hosts_[host];
    return std::max(h.blocked_until, h.last_crawl + h.min_delay);
  }
  bool Allowed(HostId host, double t) const { return t >= AllowedFrom(host); }
  // Loads the host's entry into the cache (ahead of an Allowed).
  void Prefetch(HostId host) const {
    if (host < hosts_.size()) __builtin_prefetch(&hosts_[host]);
  }
  // Whether PickTop may return a second page of the host at the same time.
  bool OnePerPick(HostId host) const {
    return host < hosts_.size() && hosts_[host].min_delay > 0.0;
  }

  // A page of the host is crawled (leased) at t: no other before
  // t + min_delay. Only ever later, so a key that was a lower bound stays one.
  void Hold(HostId host, double t) {
    Host& h = Get(host);
    if (h.min_delay > 0.0) h.blocked_until = std::max(h.blocked_until, t + h.min_delay);
  }

  // The host's entry; a host never set has the defaults.
  Host Find(HostId host) const { return host < hosts_.size() ? hosts_[host] : Host(); }

  Host& Get(HostId host) {
    if (host >= hosts_.size()) hosts_.resize(static_cast<size_t>(host) + 1);
    return hosts_[host];
  }
  void Reserve(size_t hosts) { hosts_.reserve(hosts); }
  size_t MemoryBytes() const { return AllocatedBytes(hosts_); }

 private:
  HugePageVector<Host> hosts_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_HOSTS_H_
