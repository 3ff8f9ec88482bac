// Leases and holds: the two ways a shard keeps a URL from being offered.
//
// A lease hands a URL to a fetcher until a deadline. When the deadline
// passes the URL is offered again with its state unchanged, but the lease is
// remembered (inactive) so that a late report for it is still accepted,
// until the URL is leased again, reported or removed: at most one lease per
// URL is known. A hold keeps a URL back until a time after a failed fetch
// (backoff). Both expire in deadline order, from ordered sets rather than
// heaps so that a lease that ends early leaves no entry behind.
#ifndef RECRAWL_SHARD_LEASE_TABLE_H_
#define RECRAWL_SHARD_LEASE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "shard/index/crawl_index.h"

namespace recrawl {
namespace shard {

class LeaseTable {
 public:
  struct Lease {
    uint64_t id = 0;
    PageId page = 0;
    std::string holder;
    double deadline = 0.0;
    bool active = false;  // false once expired
  };

  // Records a lease of `page`, replacing any earlier one of it. Inactive if
  // granted with active = false (restored after its deadline).
  void Grant(uint64_t id, PageId page, std::string holder, double deadline, bool active = true);
  // nullptr if unknown (never granted, or superseded, reported, removed).
  const Lease* Find(uint64_t id) const;
  const Lease* OfPage(PageId page) const;
  // Forgets the lease of `page`; returns whether it was active.
  bool Release(PageId page);
  // Makes the active leases with deadline <= now inactive and appends their
  // pages to `pages`.
  void Expire(double now, std::vector<PageId>* pages);

  size_t active() const { return deadlines_.size(); }
  size_t size() const { return by_id_.size(); }

  // Holds `page` until `until` (replacing an earlier hold).
  void Hold(PageId page, double until);
  // The end of the page's hold, or 0 if none; whether there is one.
  bool Held(PageId page, double* until = nullptr) const;
  // Ends a hold early; returns whether there was one.
  bool Unhold(PageId page);
  // Ends the holds with until <= now and appends their pages to `pages`.
  void ExpireHolds(double now, std::vector<PageId>* pages);
  size_t holds() const { return holds_.size(); }

 private:
  absl::flat_hash_map<uint64_t, Lease> by_id_;
  absl::flat_hash_map<PageId, uint64_t> by_page_;
  absl::btree_set<std::pair<double, uint64_t>> deadlines_;  // active only
  absl::flat_hash_map<PageId, double> holds_;
  absl::btree_set<std::pair<double, PageId>> hold_ends_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_LEASE_TABLE_H_
