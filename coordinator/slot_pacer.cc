#include "coordinator/slot_pacer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace coordinator {
namespace {

// Far beyond any real crawl rate; keeps n = (t − anchor)·R well inside
// int64 for centuries of slots.
constexpr double kMaxBandwidth = 1e9;
// One crawl every 1000 s: below it the next slot would be days or years
// away, which is no bandwidth anyone means to set.
constexpr double kMinBandwidth = 1e-3;

}  // namespace

absl::Status SlotPacer::ValidateBandwidth(double bandwidth) {
  if (!std::isfinite(bandwidth) || bandwidth < kMinBandwidth || bandwidth > kMaxBandwidth) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth: must be a finite number of crawls per second in [", kMinBandwidth,
                     ", ", kMaxBandwidth, "], got ", bandwidth));
  }
  return absl::OkStatus();
}

SlotPacer::SlotPacer(double bandwidth, double start, const Options& options) : options_(options) {
  // Slot 1 of the first segment is at `start`.
  segments_.push_back({start - 1.0 / bandwidth, bandwidth, 1, kOpen});
}

int64_t SlotPacer::Segment::LastAtOrBefore(double t) const {
  const double estimate = std::floor((t - anchor) * rate);
  if (!(estimate > 0.0)) return 0;  // also NaN-safe
  int64_t n = static_cast<int64_t>(std::min(estimate, 4e18));
  // The product and the division round differently; settle on Time().
  while (Time(n + 1) <= t) ++n;
  while (n > 0 && Time(n) > t) --n;
  return n;
}

void SlotPacer::DropExpired(double now) {
  const double cutoff = now - options_.grace;
  while (true) {
    Segment& front = segments_.front();
    // Slots strictly older than the cutoff go.
    int64_t expired = front.LastAtOrBefore(cutoff);
    if (expired > 0 && front.Time(expired) == cutoff) --expired;
    const int64_t next = std::min(std::max(front.next, expired + 1), front.end);
    stats_.dropped += static_cast<uint64_t>(next - front.next);
    front.next = next;
    if (front.next < front.end || segments_.size() == 1) return;
    segments_.pop_front();
  }
}

std::vector<double> SlotPacer::Take(double now, double until, int max_slots) {
  DropExpired(now);
  until = std::min(std::max(until, now), now + options_.max_lookahead);
  std::vector<double> slots;
  if (max_slots <= 0) return slots;
  while (true) {
    Segment& front = segments_.front();
    const int64_t last = std::min(front.end - 1, front.LastAtOrBefore(until));
    const int64_t room = max_slots - static_cast<int64_t>(slots.size());
    const int64_t count = std::min(std::max<int64_t>(last - front.next + 1, 0), room);
    for (int64_t i = 0; i < count; ++i) slots.push_back(front.Time(front.next + i));
    front.next += count;
    if (front.next < front.end || segments_.size() == 1 ||
        static_cast<int64_t>(slots.size()) == max_slots) {
      break;
    }
    segments_.pop_front();
  }
  stats_.handed_out += slots.size();
  return slots;
}

double SlotPacer::NextSlotTime(double now) {
  DropExpired(now);
  for (const Segment& s : segments_) {
    if (s.next < s.end) return s.Time(s.next);
  }
  return segments_.back().Time(segments_.back().next);  // unreachable: open
}

absl::Status SlotPacer::SetBandwidth(double bandwidth, double now) {
  if (absl::Status s = ValidateBandwidth(bandwidth); !s.ok()) return s;
  Segment& current = segments_.back();
  // The old rate keeps its slots that are due (they may still be taken
  // within the grace) or already handed out ahead; the next slot is 1/R_new
  // after the last of them.
  const int64_t last = std::max(current.LastAtOrBefore(now), current.next - 1);
  if (last == 0) {
    // No slot at the old rate has come: start the new rate from the same
    // previous slot.
    current.rate = bandwidth;
    return absl::OkStatus();
  }
  current.end = last + 1;
  const Segment next{current.Time(last), bandwidth, 1, kOpen};
  if (current.next >= current.end) segments_.pop_back();
  segments_.push_back(next);
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace recrawl
