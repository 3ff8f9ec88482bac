// Events per second over the last minute of shard time, for stats: sixty
// one-second buckets in a ring.
#ifndef RECRAWL_SHARD_RATE_WINDOW_H_
#define RECRAWL_SHARD_RATE_WINDOW_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace recrawl {
namespace shard {

class RateWindow {
 public:
  static constexpr int kSeconds = 60;

  // `count` events at time `now` (seconds; non-decreasing, or counted in
  // the latest second).
  void Add(double now, uint64_t count) {
    Advance(now);
    buckets_[Slot(second_)] += count;
  }

  // Mean rate over the last kSeconds before `now`, or since the first event
  // if that was more recent.
  double Rate(double now) {
    if (!started_) return 0.0;
    Advance(now);
    uint64_t total = 0;
    for (uint64_t b : buckets_) total += b;
    const int64_t span = std::min<int64_t>(kSeconds, second_ - first_ + 1);
    return static_cast<double>(total) / static_cast<double>(span);
  }

 private:
  void Advance(double now) {
    if (!(std::abs(now) < 1e15)) return;  // NaN, ∞, or beyond int64 seconds
    const int64_t s = static_cast<int64_t>(std::floor(now));
    if (!started_) {
      started_ = true;
      first_ = second_ = s;
      return;
    }
    if (s <= second_) return;
    // Clear the buckets of the seconds skipped over.
    for (int64_t t = second_ + 1; t <= s && t <= second_ + kSeconds; ++t) {
      buckets_[Slot(t)] = 0;
    }
    second_ = s;
  }

  static size_t Slot(int64_t second) {
    return static_cast<size_t>(((second % kSeconds) + kSeconds) % kSeconds);
  }

  std::array<uint64_t, kSeconds> buckets_{};
  bool started_ = false;
  int64_t first_ = 0;
  int64_t second_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_RATE_WINDOW_H_
