// Crawl reports the coordinator has acknowledged to a fetcher but not yet
// delivered to their shard (the shard was out, or the call to it did not
// answer), kept per shard in arrival order up to a capacity over all
// shards. A report may reach its shard twice (a call that timed out may
// have applied it); the shard rejects the second copy by its lease id.
//
// The cluster's ordering rule rests on this queue: a shard's held reports
// are delivered before the shard is leased from again (LeaseRounds), so
// that a URL whose lease expired while its shard stalled is not leased
// first and its acknowledged report then refused as stale.
//
// A delivery takes a batch (it counts as delivering until the call
// returns), then either finishes it or returns it to the front in order.
//
// Pure bookkeeping; not thread-safe.
#ifndef RECRAWL_COORDINATOR_HELD_REPORTS_H_
#define RECRAWL_COORDINATOR_HELD_REPORTS_H_

#include <cstddef>
#include <deque>
#include <vector>

#include "proto/coordinator.pb.h"

namespace recrawl {
namespace coordinator {

class HeldReports {
 public:
  HeldReports(int num_shards, size_t capacity);

  // Holds `report` for `shard`; false (and nothing held) when `capacity`
  // reports are held or being delivered already.
  bool Hold(int shard, const CrawlReport& report);

  // Up to `max_reports` of `shard`'s reports, oldest first, into `batch`
  // (replacing its reports; its other fields are the caller's). They count
  // as delivering until Delivered or Return.
  void Take(int shard, size_t max_reports, ReportCrawlsRequest* batch);
  // The shard answered for the `count` reports of a taken batch.
  void Delivered(size_t count);
  // The call failed: the batch's reports are held again, in front and in
  // their order.
  void Return(int shard, ReportCrawlsRequest* batch);

  // Whether `shard` has reports waiting (not counting a batch on its way).
  bool Holds(int shard) const { return !held_[shard].empty(); }
  // Reports held or on their way, over all shards: none of them is applied
  // at its shard yet.
  size_t pending() const { return held_total_ + delivering_; }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  std::vector<std::deque<CrawlReport>> held_;
  size_t held_total_ = 0;
  size_t delivering_ = 0;
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_HELD_REPORTS_H_
