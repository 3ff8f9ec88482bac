// The picks of each recent PeekTop, by the id its answer carries
// (PeekTopResponse.peek_id), so that a Lease naming the peek
// (LeaseRequest.peek_id) leases those pages instead of searching the index
// again. The coordinator's merge (coordinator/merge.h) gives a shard its
// slots because of the values the shard peeked; leasing the very pages that
// had them spares the index a second search, which values afresh every
// candidate whose bound can still win, slot by slot.
//
// Bounded: the last kMaxPeeks peeks are remembered, and a peek is taken at
// most once. Not kept across restarts (a Lease naming a peek the log does
// not hold picks as if it named none). Ids start at a value the caller
// chooses (e.g. random), so that a peek id from before a restart is
// unlikely to name a later peek.
//
// Not thread-safe.
#ifndef RECRAWL_SHARD_PEEK_LOG_H_
#define RECRAWL_SHARD_PEEK_LOG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cluster/url_id.h"
#include "shard/index/crawl_index.h"

namespace recrawl {
namespace shard {

class PeekLog {
 public:
  static constexpr size_t kMaxPeeks = 64;

  // One page a peek returned: the page, the URL it was then (a page id is
  // reused after its URL is removed), its last crawl then (a crawl since
  // makes the value moot), and its crawl value at the peek's time.
  struct Pick {
    PageId page;
    cluster::UrlId url;
    double last_crawl;
    double value;
  };

  // The first peek gets id `first_id` (0 is taken as 1: 0 names no peek).
  explicit PeekLog(uint64_t first_id) : next_id_(first_id == 0 ? 1 : first_id) {}

  // Starts remembering a new peek and returns its id (never 0); its picks
  // are added with Add, best first. Forgets the oldest peek when full.
  uint64_t Begin();
  // Adds a pick to the peek Begin started last.
  void Add(const Pick& pick) { ring_[last_].picks.push_back(pick); }

  // Moves the picks of peek `id` into `*picks` (best first) and forgets the
  // peek. False, leaving `*picks` empty, when the log does not hold it
  // (never made, taken already, or forgotten).
  bool Take(uint64_t id, std::vector<Pick>* picks);

 private:
  struct Entry {
    uint64_t id = 0;  // 0: empty
    std::vector<Pick> picks;
  };
  std::array<Entry, kMaxPeeks> ring_;
  size_t last_ = 0;
  uint64_t next_id_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_PEEK_LOG_H_
