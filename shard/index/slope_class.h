// The slope classes of the index's parked pages (parked_classes.h) and of
// its burst reserve (reserve_classes.h): a quarter-octave of later slope,
// so that pages bounded together grow at rates within 2^(1/4) of each
// other.
#ifndef RECRAWL_SHARD_INDEX_SLOPE_CLASS_H_
#define RECRAWL_SHARD_INDEX_SLOPE_CLASS_H_

#include <algorithm>
#include <climits>
#include <cmath>

namespace recrawl {
namespace shard {

// floor(4 log2 s) for a finite slope s > 0; INT_MIN for s <= 0.
inline int SlopeClassOf(double slope) {
  if (!(slope > 0.0)) return INT_MIN;
  return static_cast<int>(std::floor(4.0 * std::log2(slope)));
}

// A rate at least every slope of class `id` (its upper edge, widened for
// the rounding of log2 and exp2) and at least `slope` itself; 0 for the
// class of slopes <= 0.
inline double SlopeClassRate(int id, double slope) {
  const double edge = id == INT_MIN ? 0.0 : std::exp2((id + 1) / 4.0) * (1.0 + 1e-12);
  return std::max(edge, slope);
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_SLOPE_CLASS_H_
