// The burst reserve's pages (SchedulingIndex): pages below Λ, each held by
// an upper bound on its value that grows from a reference time on, in
// classes by later slope (a quarter-octave each, slope_class.h).
//
// An entry added at t with value v and later slope s is in the class c of
// s, whose rate L_c (the class's upper edge) is at least s, and is stored as
// v − L_c (t − at), so that its bound at every t' >= t,
//   stored + L_c (t' − at) = v + L_c (t' − t) >= V(t'),
// holds (V grows at most at s from t on: the later slope of
// SchedulingIndex::GrowthOf, from Lemma 3's dV/dι). One rate for every
// page would let the pages that grow slowly (of low importance) take the
// bound of the fastest: a lease burst that pulls from the reserve would
// then have to pull far below the picks before its bound fell under them.
//
// Not thread-safe.
#ifndef RECRAWL_SHARD_INDEX_RESERVE_CLASSES_H_
#define RECRAWL_SHARD_INDEX_RESERVE_CLASSES_H_

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "shard/index/crawl_index.h"

namespace recrawl {
namespace shard {

class ReserveClasses {
 public:
  // 8 bytes, so that a reserve of a quarter of the pages costs 2 bytes a
  // page.
  struct Entry {
    float value;  // rounded up: an upper bound
    PageId page;
  };

  // Empties the reserve (freeing its storage) and sets its reference time;
  // the entries added until Order() are only appended (a rebuild's bulk),
  // and it is queried only after.
  void Start(double at);
  void Order();
  void Clear();
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // Adds `page`, valued `value` at t >= the reference time, growing at most
  // at `later_slope` (finite, >= 0) from then on.
  void Add(PageId page, double t, double value, double later_slope);

  // The class whose top has the largest bound at t; -1 when empty.
  int TopClass(double t) const;
  // The largest bound at t (−∞ when empty).
  double TopBound(double t) const;
  // Class c's top (c from TopClass; nullptr once the class is empty), and
  // its removal (requires a top).
  const Entry* Top(int c) const {
    return classes_[c].heap.empty() ? nullptr : &classes_[c].heap.front();
  }
  Entry Pop(int c);

  size_t MemoryBytes() const;

 private:
  struct Class {
    int id;                   // the quarter-octave of its later slopes
    double rate;              // L_c: at least each entry's later slope
    std::vector<Entry> heap;  // max-heap by stored value
  };
  double Bound(const Class& k, double t) const;
  double Age(double t) const { return t > at_ ? t - at_ : 0.0; }
  Class& ClassFor(double later_slope);

  double at_ = 0.0;
  size_t size_ = 0;
  bool ordered_ = true;  // each class a heap (Add keeps it one)
  // Class index + 1 by id − window_base_ (0: none); INT_MIN: no window yet.
  static constexpr int kWindow = 256;
  int window_base_ = INT_MIN;
  std::array<uint16_t, kWindow> window_{};
  std::vector<Class> classes_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_RESERVE_CLASSES_H_
