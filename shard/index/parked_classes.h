// The parked candidates of one host (SchedulingIndex::Park), in classes by
// later slope: one ParkedHeap (parked_heap.h) per quarter-octave of later
// slope.
//
// One heap's single slope L must be at least every entry's later slope, so
// a host whose pages grow at different rates (a few fast, low-valued pages
// beside many slow ones near the top) would get a token growing at the
// fastest rate, tens of times the rate of the pages that decide its picks,
// and opened at every pick only to find its best page below the pick's
// best. In classes, class c bounds its entries by the line a_c + L_c·Δ
// from t on (a_c: its top's bound at t, Δ = t' − t), and the token's
// growth is their envelope: it starts at the largest a_c with that class's
// slope s and bends up (EnvelopeFrom):
//
//   base + s·Δ + r·Δ²/2 >= a_c + L_c·Δ  for all Δ >= 0
//   when r >= (L_c − s)² / (2·(base − a_c)),
//
// so classes far below the top only bend the token late and slightly.
//
// Not thread-safe.
#ifndef RECRAWL_SHARD_INDEX_PARKED_CLASSES_H_
#define RECRAWL_SHARD_INDEX_PARKED_CLASSES_H_

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "shard/index/candidate_pool.h"
#include "shard/index/parked_heap.h"
#include "shard/index/slope_class.h"

namespace recrawl {
namespace shard {

class ParkedClasses {
 public:
  using Entry = CandidatePool::Entry;
  // A bound on every entry from a time t on, in the pool's form
  // (CandidatePool::GrowthBound from `at` = t): base + ∫ min(later_slope,
  // slope + rise·s) ds.
  struct Envelope {
    double base;
    double slope;
    double rise;
    double later_slope;
  };

  bool empty() const { return classes_.empty(); }

  // Adds `e` at time t (t >= e.at); `is_live` as ParkedHeap::Push.
  template <typename IsLive>
  void Push(const Entry& e, double t, IsLive is_live) {
    const int c = ClassOf(e);
    auto it =
        std::find_if(classes_.begin(), classes_.end(), [c](const Class& k) { return k.id == c; });
    if (it == classes_.end()) {
      classes_.emplace_back();
      it = classes_.end() - 1;
      it->id = c;
    }
    it->heap.Push(e, t, is_live);
  }

  // Drops stale entries off every class's top (and empty classes); false
  // when no live entry is left.
  template <typename IsLive>
  bool DropStaleTops(IsLive is_live) {
    classes_.erase(std::remove_if(classes_.begin(), classes_.end(),
                                  [&](Class& k) { return !k.heap.DropStaleTop(is_live); }),
                   classes_.end());
    return !classes_.empty();
  }

  // At least GrowthBound(e, t') of every entry e at every t' <= t.
  // Requires !empty().
  double TopBound(double t) const { return classes_[TopClass(t)].heap.TopBound(t); }

  // Takes out the top entry of the class whose top bound is largest at t,
  // and drops the stale entries that come to that class's top (so the
  // tops stay live while no entry goes stale: empty() tells whether a live
  // entry is left). Requires !empty().
  template <typename IsLive>
  Entry PopTop(double t, IsLive is_live) {
    const size_t c = TopClass(t);
    ParkedHeap& heap = classes_[c].heap;
    const Entry e = heap.PopTop();
    if (!heap.DropStaleTop(is_live)) classes_.erase(classes_.begin() + c);
    return e;
  }

  // A bound on every entry at every t' >= t (t at least every entry's
  // `at`). Requires !empty().
  Envelope EnvelopeFrom(double t) const {
    Envelope env{TopBound(t), 0.0, 0.0, 0.0};
    if (!(env.base < kInf)) return {kInf, kInf, 0.0, kInf};
    // Each class's line: its top bound at t and a slope a little over L_c
    // (TopBound's own slack grows with the run).
    auto line_slope = [](const Class& k) { return k.heap.slope() * (1.0 + 1e-9); };
    for (const Class& k : classes_) {
      env.later_slope = std::max(env.later_slope, line_slope(k));
      // Lines starting level with the top (within rounding) set the slope.
      if (!(Gap(env.base, k.heap.TopBound(t)) > 0.0)) {
        env.slope = std::max(env.slope, line_slope(k));
      }
    }
    for (const Class& k : classes_) {
      const double gap = Gap(env.base, k.heap.TopBound(t));
      const double climb = line_slope(k) - env.slope;
      if (!(gap > 0.0) || climb <= 0.0) continue;
      const double rise = climb * climb / (2.0 * gap);
      if (rise < kMaxRise) {
        env.rise = std::max(env.rise, rise);
      } else {
        env.slope = std::max(env.slope, line_slope(k));  // bends at once
      }
    }
    env.later_slope = std::max(env.later_slope, env.slope);
    return env;
  }

  // Every entry, in no order (stale ones too).
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (const Class& k : classes_) k.heap.ForEach(visit);
  }

  size_t MemoryBytes() const {
    size_t bytes = classes_.capacity() > kInlineClasses ? classes_.capacity() * sizeof(Class) : 0;
    for (const Class& k : classes_) bytes += k.heap.MemoryBytes();
    return bytes;
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  // Rises above this (lines level with the top but for rounding) bend the
  // envelope at once instead; far below float's range.
  static constexpr double kMaxRise = 1e30;
  static constexpr size_t kInlineClasses = 1;
  struct Class {
    int id;
    ParkedHeap heap;
  };

  // The quarter-octave of the entry's later slope (0 and unbounded ones
  // apart).
  static int ClassOf(const Entry& e) {
    if (!(e.base < kInf) || !(e.later_slope < kInf)) return INT_MAX;
    return SlopeClassOf(e.later_slope);
  }
  // base − a, less a margin for the rounding of both: > 0 only when a is
  // truly below base.
  static double Gap(double base, double a) {
    return base - a - 1e-12 * (std::fabs(base) + std::fabs(a));
  }
  size_t TopClass(double t) const {
    size_t top = 0;
    double bound = classes_[0].heap.TopBound(t);
    for (size_t c = 1; c < classes_.size(); ++c) {
      const double b = classes_[c].heap.TopBound(t);
      if (b > bound) {
        bound = b;
        top = c;
      }
    }
    return top;
  }

  absl::InlinedVector<Class, kInlineClasses> classes_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_PARKED_CLASSES_H_
