// Constant-rate pacing of crawl slots: the coordinator hands out URLs at the
// slot times j/R of Algorithm 1 (main paper Sec. 5.2), never faster.
//
// Slots are a time grid with spacing 1/R. A fetcher takes slots up to a
// short lookahead into the future and crawls each URL at its slot time; a
// slot nobody takes within `grace` after its time is dropped, not saved up,
// so an idle period is never followed by a burst. A
// change of R takes effect from the next slot: the first slot at the new
// rate comes 1/R_new after the last slot at the old rate that was due when
// R changed (or, when slots were taken ahead, after the last of those).
// Consecutive slots are therefore at least 1/max(R) apart, and
// any window of length L holds at most R·L + 1 slots (R the larger rate
// when the window straddles a change).
//
// Pure logic: every call takes `now` (seconds on the caller's clock).
#ifndef RECRAWL_COORDINATOR_SLOT_PACER_H_
#define RECRAWL_COORDINATOR_SLOT_PACER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"

namespace recrawl {
namespace coordinator {

class SlotPacer {
 public:
  struct Options {
    // How long a due slot waits for a fetcher before it is dropped. A slot
    // taken late is crawled late; with fetchers that lease ahead (below) no
    // slot need be late, and the grace only covers their jitter.
    double grace = 0.25;
    // How far ahead of `now` slots may be taken.
    double max_lookahead = 1.0;
  };
  struct Stats {
    uint64_t handed_out = 0;
    uint64_t dropped = 0;
  };

  // The first slot is at `start`. `bandwidth` must be finite and > 0 (the
  // caller validates operator input with ValidateBandwidth).
  SlotPacer(double bandwidth, double start, const Options& options);

  // OK when `bandwidth` is a usable R (finite, in [1e-3, 1e9] slots/s: at
  // least one slot every 1000 s); else INVALID_ARGUMENT naming the field.
  static absl::Status ValidateBandwidth(double bandwidth);

  // Changes R from the next slot not yet handed out (see the file comment).
  absl::Status SetBandwidth(double bandwidth, double now);
  double bandwidth() const { return segments_.back().rate; }

  // Up to `max_slots` slots with times in [now − grace, until], oldest
  // first, after dropping the older ones; `until` is clamped to
  // [now, now + max_lookahead].
  std::vector<double> Take(double now, double until, int max_slots);

  // Time of the next slot that can be handed out at or after `now` (for a
  // fetcher that should wait).
  double NextSlotTime(double now);

  const Stats& stats() const { return stats_; }

 private:
  // Slots n = next .. end−1 at anchor + n/rate (n ≥ 1; `anchor` is the time
  // of the slot before the segment's first). Only the last segment is open
  // (end = kOpen); earlier ones hold the due slots of a rate that changed.
  struct Segment {
    double anchor;
    double rate;
    int64_t next;
    int64_t end;
    double Time(int64_t n) const { return anchor + static_cast<double>(n) / rate; }
    // The largest n with Time(n) ≤ t (0 when none), robust to rounding.
    int64_t LastAtOrBefore(double t) const;
  };
  static constexpr int64_t kOpen = INT64_MAX;

  void DropExpired(double now);

  Options options_;
  std::deque<Segment> segments_;
  Stats stats_;
};

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_SLOT_PACER_H_
