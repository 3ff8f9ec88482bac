// The parked candidates of one host (SchedulingIndex::Park): pool entries
// (candidate_pool.h) kept out of the pool, in a max-heap by a key that
// orders them by a bound on their value at every later time.
//
// An entry's growth bound rises no faster than its later slope
// (CandidatePool::GrowthBound), so with one slope L at least every entry's,
//
//   GrowthBound(e, t) <= e.base + L·(t − e.at) = key(e) + L·(t − origin),
//   key(e) = e.base − L·(e.at − origin),                 for t >= e.at.
//
// The keys do not move with t: the order by key is the order of these
// bounds at every t, and the top's bound bounds every entry. Taking a
// host's best page is then a few pops in key order (valuing each until no
// bound left can beat the best), not a pass over all of its entries.
//
// An entry whose later slope exceeds L raises L by a quarter at least and
// recomputes every key (a pass; so such passes are few); entries become
// stale when their page changes (the caller's `is_live`), and are dropped
// at the top and by a compaction when the heap has doubled since the last.
// Entries with an unbounded base or later slope (a voided bound) key +∞.
//
// Not thread-safe.
#ifndef RECRAWL_SHARD_INDEX_PARKED_HEAP_H_
#define RECRAWL_SHARD_INDEX_PARKED_HEAP_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "shard/index/candidate_pool.h"

namespace recrawl {
namespace shard {

class ParkedHeap {
 public:
  using Entry = CandidatePool::Entry;

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // L: at least every entry's later slope (0 when empty).
  double slope() const { return slope_; }

  // Adds `e` at time t (t >= e.at). `is_live(entry)` tells the entries
  // still current from stale ones, for a compaction or a re-key.
  template <typename IsLive>
  void Push(const Entry& e, double t, IsLive is_live) {
    const double later = e.later_slope;
    if (Finite(e) && later > slope_) {
      Rekey(std::max(later, kSlopeGrowth * slope_), t, is_live);
    } else if (heap_.size() >= compact_above_) {
      Rekey(slope_, t, is_live);
    }
    latest_at_ = std::max(latest_at_, e.at);
    heap_.push_back({KeyOf(e), e});
    std::push_heap(heap_.begin(), heap_.end(), Lower);
  }

  // Drops stale entries off the top; false when none is left.
  template <typename IsLive>
  bool DropStaleTop(IsLive is_live) {
    while (!heap_.empty() && !is_live(heap_.front().entry)) PopTop();
    return !heap_.empty();
  }

  // Takes the top entry out (largest key; of two equal keys, the lower
  // page id). Requires !empty().
  Entry PopTop() {
    std::pop_heap(heap_.begin(), heap_.end(), Lower);
    const Entry e = heap_.back().entry;
    heap_.pop_back();
    return e;
  }

  // At least GrowthBound(e, t') of every entry e at every t' <= t, rounding
  // included (values only grow with time). Requires !empty().
  double TopBound(double t) const {
    const double key = heap_.front().key;
    if (!(key < kInf)) return kInf;
    const double run = slope_ * (std::max(t, latest_at_) - origin_);
    return key + run + kSlack * (scale_ + std::fabs(key) + std::fabs(run));
  }

  // Every entry, in no order (stale ones too).
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (const Item& item : heap_) visit(item.entry);
  }

  size_t MemoryBytes() const { return heap_.capacity() * sizeof(Item); }

 private:
  struct Item {
    double key;
    Entry entry;
  };
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  // L grows by this factor at least when an entry's later slope exceeds it.
  static constexpr double kSlopeGrowth = 1.25;
  // Covers GrowthBound's own rounding slack (1e-12 of the bound) and the
  // rounding of the keys (a few ulps of `scale_`).
  static constexpr double kSlack = 4e-12;
  static constexpr size_t kMinCompact = 16;

  static bool Finite(const Entry& e) {
    return e.base < kInf && static_cast<double>(e.later_slope) < kInf;
  }
  static bool Lower(const Item& a, const Item& b) {
    return a.key < b.key || (a.key == b.key && a.entry.page > b.entry.page);
  }
  double KeyOf(const Entry& e) {
    if (!Finite(e)) return kInf;
    const double shift = slope_ * (e.at - origin_);
    scale_ = std::max(scale_, std::fabs(e.base) + std::fabs(shift));
    return e.base - shift;
  }
  // Keys for slope L from origin t, stale entries dropped.
  template <typename IsLive>
  void Rekey(double slope, double t, IsLive is_live) {
    slope_ = slope;
    origin_ = t;
    scale_ = 0.0;
    size_t kept = 0;
    for (const Item& item : heap_) {
      if (!is_live(item.entry)) continue;
      heap_[kept++] = {KeyOf(item.entry), item.entry};
    }
    heap_.resize(kept);
    std::make_heap(heap_.begin(), heap_.end(), Lower);
    compact_above_ = std::max(kMinCompact, 2 * kept);
  }

  std::vector<Item> heap_;
  double slope_ = 0.0;
  double origin_ = 0.0;
  // At least |base| + L·|at − origin| of every finite entry: the keys'
  // magnitude before cancellation.
  double scale_ = 0.0;
  double latest_at_ = -kInf;
  size_t compact_above_ = kMinCompact;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_PARKED_HEAP_H_
