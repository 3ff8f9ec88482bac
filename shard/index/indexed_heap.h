// A binary heap that tells its owner where each entry sits, so that an entry
// can be re-keyed or erased in O(log n) given its position. The scheduling
// index's candidate pool keeps one per slope class and one of piece ends.
#ifndef RECRAWL_SHARD_INDEX_INDEXED_HEAP_H_
#define RECRAWL_SHARD_INDEX_INDEXED_HEAP_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "shard/index/huge_page_allocator.h"

namespace recrawl {
namespace shard {

// `Before(a, b)`: a belongs nearer the top than b. `Moved(entry, pos)` is
// called whenever an entry lands at a new position. `Arity` children a node:
// 4 halves the depth of a large heap, and so the cache misses of a pop (and
// of the Moved calls, when they land in a large table of the owner's), for
// twice the comparisons a level.
template <typename Entry, typename Before, typename Moved, int Arity = 2>
class IndexedHeap {
  static_assert(Arity >= 2, "a heap node needs two children at least");

 public:
  IndexedHeap(Before before, Moved moved) : before_(before), moved_(moved) {}

  bool empty() const { return entries_.empty(); }
  uint32_t size() const { return static_cast<uint32_t>(entries_.size()); }
  const Entry& top() const { return entries_[0]; }
  Entry& at(uint32_t i) { return entries_[i]; }
  const Entry& at(uint32_t i) const { return entries_[i]; }
  size_t capacity() const { return entries_.capacity(); }
  size_t MemoryBytes() const { return AllocatedBytes(entries_); }
  // Entries copied to new storage so far (growth and ReleaseSlack), for
  // counting work.
  uint64_t copies() const { return copies_; }
  void reserve(size_t n) { entries_.reserve(n); }
  void clear() { entries_.clear(); }
  // Gives memory back once the capacity is over 4x the size plus `spare`,
  // keeping 2x plus spare / 2 (all of it when empty): a heap that drains
  // does not keep its high-water capacity, and one that hovers around a
  // size copies its entries O(1) times each, amortised. (Shrinking to the
  // size would make the next push copy them all again: a heap losing one
  // entry for each it gains would copy itself every few calls.)
  void ReleaseSlack(size_t spare) {
    const size_t n = entries_.size();
    if (entries_.capacity() <= (n == 0 ? 0 : 4 * n + spare)) return;
    copies_ += n;
    HugePageVector<Entry> kept;
    if (n > 0) kept.reserve(2 * n + spare / 2);
    kept.assign(std::make_move_iterator(entries_.begin()), std::make_move_iterator(entries_.end()));
    entries_.swap(kept);
  }

  void Push(const Entry& e) {
    if (entries_.size() == entries_.capacity()) copies_ += entries_.size();  // growth
    entries_.push_back(e);
    SiftUp(size() - 1);
  }
  // Restores the order after entry i changed in place.
  void Update(uint32_t i) {
    if (i > 0 && before_(entries_[i], entries_[(i - 1) / Arity])) {
      SiftUp(i);
    } else {
      SiftDown(i);
    }
  }
  void Erase(uint32_t i) {
    const uint32_t last = size() - 1;
    if (i != last) {
      entries_[i] = std::move(entries_[last]);
      entries_.pop_back();
      moved_(entries_[i], i);
      Update(i);
    } else {
      entries_.pop_back();
    }
  }

 private:
  void SiftUp(uint32_t i) {
    Entry e = std::move(entries_[i]);
    while (i > 0) {
      const uint32_t parent = (i - 1) / Arity;
      if (!before_(e, entries_[parent])) break;
      entries_[i] = std::move(entries_[parent]);
      moved_(entries_[i], i);
      i = parent;
    }
    entries_[i] = std::move(e);
    moved_(entries_[i], i);
  }
  void SiftDown(uint32_t i) {
    const uint32_t n = size();
    Entry e = std::move(entries_[i]);
    for (;;) {
      const uint64_t first = uint64_t{Arity} * i + 1;
      if (first >= n) break;
      uint32_t child = static_cast<uint32_t>(first);
      const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(first + Arity, n));
      for (uint32_t c = child + 1; c < end; ++c) {
        if (before_(entries_[c], entries_[child])) child = c;
      }
      if (!before_(entries_[child], e)) break;
      entries_[i] = std::move(entries_[child]);
      moved_(entries_[i], i);
      i = child;
    }
    entries_[i] = std::move(e);
    moved_(entries_[i], i);
  }

  HugePageVector<Entry> entries_;
  uint64_t copies_ = 0;
  Before before_;
  Moved moved_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_INDEXED_HEAP_H_
