#include "shard/index/candidate_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// intercept + M t loses ~1e-16 (|intercept| + M t) to rounding; bounds are
// widened by more than that so they stay upper bounds.
constexpr double kRoundingSlack = 1e-12;
// The first piece lasts this fraction of ψ = slope/rise, so its slope is
// this fraction above the exact one.
constexpr double kFirstPiece = 1.0 / 32;
// Past this many doublings the later slope is used.
constexpr int kMaxPieces = 24;
static_assert(kMaxPieces < 32, "Entry::piece has 5 bits");

}  // namespace

float CandidatePool::CeilFloat(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, static_cast<float>(kInf));
  return f;
}

CandidatePool::CandidatePool(PageSlots* page_slots)
    : page_slots_(page_slots),
      expiry_(EarlierExpiry(), SetExpiryPos{this}),
      top_intercept_(kClasses, 0.0),
      top_page_(kClasses, 0) {
  classes_.reserve(kClasses);
  for (int k = 0; k < kClasses; ++k) {
    classes_.emplace_back(HigherIntercept(), SetPos{this});
  }
}

size_t CandidatePool::MemoryBytes() const {
  size_t bytes = 0;
  for (const Heap& h : classes_) bytes += h.MemoryBytes();
  return bytes + expiry_.MemoryBytes() + records_.capacity() * sizeof(Record);
}

// Class (e − 1 − kMinExponent)·kStepsPerOctave + j holds the slopes in
// (2^{e−1}(1 + j/S), 2^{e−1}(1 + (j+1)/S)], S = kStepsPerOctave: rounding up
// costs at most 1/S of the slope.
int CandidatePool::ClassOf(double slope) {
  if (slope <= 0.0) return kFlatClass;
  if (!(slope < kInf)) return kVoidClass;
  int exponent;
  const double mantissa = std::frexp(slope, &exponent);  // [0.5, 1)
  const int octave = exponent - 1;
  if (octave > kMaxExponent) return kVoidClass;
  if (octave < kMinExponent) return 0;
  int step = static_cast<int>((2.0 * mantissa - 1.0) * kStepsPerOctave);
  if (step >= kStepsPerOctave) step = kStepsPerOctave - 1;
  return (octave - kMinExponent) * kStepsPerOctave + step;
}

namespace {

// 2^octave (1 + (step + 1)/S) for class (octave − kMinExponent)·S + step;
// 0 for the flat and void classes.
struct SlopeTable {
  SlopeTable() {
    constexpr int kSteps = CandidatePool::kStepsPerOctave;
    for (int k = 0; k < CandidatePool::kClasses; ++k) {
      if (k >= CandidatePool::kSlopedClasses) {
        slopes[k] = 0.0;
        continue;
      }
      const int octave = k / kSteps + CandidatePool::kMinExponent;
      const int step = k % kSteps;
      slopes[k] = std::ldexp(1.0 + static_cast<double>(step + 1) / kSteps, octave);
    }
  }
  double slopes[CandidatePool::kClasses];
};
const SlopeTable kSlopeTable;

}  // namespace

// Tabulated: this sits on the hot path of Top.
inline double CandidatePool::ClassSlope(int slope_class) { return kSlopeTable.slopes[slope_class]; }

double CandidatePool::BoundAt(int slope_class, double intercept, double t) const {
  if (slope_class == kVoidClass) return kInf;
  const double m = ClassSlope(slope_class);
  const double line = intercept + m * t;
  return line + kRoundingSlack * (std::fabs(intercept) + std::fabs(m * t));
}

CandidatePool::Entry CandidatePool::EntryOf(const Key& key) const {
  const Record& r = records_[key.slot];
  Entry e;
  e.value = r.value;
  e.at = r.at;
  e.base = r.base;
  e.slope = r.slope;
  e.rise = r.rise;
  e.later_slope = r.later_slope;
  e.page = key.page;
  e.tag = key.tag;
  e.slot = key.slot;
  return e;
}

uint32_t CandidatePool::NewSlot() {
  if (records_.size() > size_ + size_ / 2 + kMinSlotsToCompact) {
    CompactSlots();
  }
  if (free_slot_ == kNone) {
    // An eighth more, not doubled: the table counts against the index's
    // 64 bytes a page.
    if (records_.size() == records_.capacity()) {
      records_.reserve(records_.size() + records_.size() / 8 + 64);
    }
    if (records_.size() >= kMaxSlots) {
      // 2^32 candidates: some 10^11 pages a shard at the default targets.
      std::fprintf(stderr, "CandidatePool: over %u candidates\n", kMaxSlots);
      std::abort();
    }
    records_.push_back({});
    records_.back().pos = kNone;
    records_.back().expiry_pos = kNone;
    return static_cast<uint32_t>(records_.size() - 1);
  }
  const uint32_t slot = free_slot_;
  free_slot_ = records_[slot].pos;
  return slot;
}

void CandidatePool::FreeSlot(uint32_t slot) {
  records_[slot].pos = free_slot_;
  free_slot_ = slot;
}

// Renumbers the slots of the entries in the pool 0..size_-1 and drops the
// rest of the table, which otherwise keeps the size of the largest pool
// since the last Clear. Called once the table is over 1.5 times the pool:
// after at least size_/2 frees, so amortised O(1) a slot.
void CandidatePool::CompactSlots() {
  std::vector<uint32_t> renumbered(records_.size(), kNone);
  std::vector<Record> compact;
  compact.reserve(size_ + size_ / 8 + 64);
  for (Heap& h : classes_) {
    for (uint32_t i = 0; i < h.size(); ++i) {
      Key& key = h.at(i);
      const uint32_t slot = static_cast<uint32_t>(compact.size());
      compact.push_back(records_[key.slot]);
      renumbered[key.slot] = slot;
      key.slot = slot;
      page_slots_->SetSlot(key.page, slot);
    }
  }
  for (uint32_t i = 0; i < expiry_.size(); ++i) {
    expiry_.at(i).slot = renumbered[expiry_.at(i).slot];
  }
  records_.swap(compact);
  free_slot_ = kNone;
}

CandidatePool::Line CandidatePool::LineOf(const Record& r, double from, double bound) const {
  const double slope = r.slope, rise = r.rise, later = r.later_slope;
  double piece_slope = later;
  double piece_end = kInf;
  if (slope > 0.0 && rise > 0.0 && r.piece < kMaxPieces) {
    const double first = kFirstPiece * slope / rise;
    const double span = first * (std::ldexp(1.0, r.piece + 1) - 1.0);
    const double steep = slope + rise * span;
    if (steep < later) {
      piece_slope = steep;
      piece_end = r.at + span;
    }
  }
  const int k = ClassOf(piece_slope);
  return {k, bound - ClassSlope(k) * from, piece_end};
}

void CandidatePool::Place(Key key, double from, double bound) {
  ++placements_;
  Record& r = records_[key.slot];
  const Line line = LineOf(r, from, bound);
  key.intercept = line.intercept;
  r.slope_class = static_cast<uint16_t>(line.slope_class);
  r.expiry_pos = kNone;
  classes_[line.slope_class].Push(key);
  Touch(line.slope_class);
  SetExpiry(key.slot, line.piece_end);
}

void CandidatePool::SetExpiry(uint32_t slot, double piece_end) {
  Record& s = records_[slot];
  if (s.expiry_pos == kNone) {
    if (piece_end < kInf) expiry_.Push({piece_end, slot});
  } else if (piece_end < kInf) {
    expiry_.at(s.expiry_pos).at = piece_end;
    expiry_.Update(s.expiry_pos);
  } else {
    expiry_.Erase(s.expiry_pos);
    s.expiry_pos = kNone;
  }
}

void CandidatePool::Add(PageId page, double value, double at, const Growth& growth, uint32_t tag) {
  const uint32_t slot = NewSlot();
  Record& r = records_[slot];
  r.value = value;
  r.at = at;
  r.base = value;
  r.slope = CeilFloat(growth.slope);
  r.rise = CeilFloat(growth.rise);
  r.later_slope = CeilFloat(growth.later_slope);
  r.piece = 0;
  page_slots_->SetSlot(page, slot);
  Place({0.0, page, slot, tag}, at, value);
  ++size_;
}

void CandidatePool::AddLike(PageId page, const Entry& like, uint32_t tag) {
  const uint32_t slot = NewSlot();
  Record& r = records_[slot];
  r.value = like.value;
  r.at = like.at;
  r.base = like.base;
  r.slope = like.slope;
  r.rise = like.rise;
  r.later_slope = like.later_slope;
  r.piece = 0;
  page_slots_->SetSlot(page, slot);
  ++size_;
  if (!(like.base < kInf)) {  // a voided entry: +∞ until valued
    r.slope_class = kVoidClass;
    r.expiry_pos = kNone;
    classes_[kVoidClass].Push({kInf, page, slot, tag});
    Touch(kVoidClass);
    return;
  }
  // As Shift does: pieces that end before now are moved on by Expire.
  Place({0.0, page, slot, tag}, r.at, r.base);
}

CandidatePool::Entry CandidatePool::Find(PageId page) const {
  const Record& r = records_[page_slots_->Slot(page)];
  return EntryOf(classes_[r.slope_class].at(r.pos));
}

CandidatePool::Key CandidatePool::TakeOut(uint32_t slot) {
  Record& r = records_[slot];
  const int k = r.slope_class;
  const uint32_t pos = r.pos;
  if (r.expiry_pos != kNone) {
    expiry_.Erase(r.expiry_pos);
    r.expiry_pos = kNone;
  }
  const Key key = classes_[k].at(pos);
  classes_[k].Erase(pos);
  Touch(k);
  return key;
}

void CandidatePool::Expire(double t) {
  // As the class heaps (Touch): the pool's slack counts against the
  // index's 64 bytes a page.
  expiry_.ReleaseSlack(16);
  while (!expiry_.empty() && expiry_.top().at <= t) {
    const Expiry x = expiry_.top();
    expiry_.Erase(0);
    records_[x.slot].expiry_pos = kNone;  // just left the expiry heap
    const int k = records_[x.slot].slope_class;
    const Key key = TakeOut(x.slot);
    // The next piece starts from this one's bound at its end.
    const double bound = BoundAt(k, key.intercept, x.at);
    ++records_[x.slot].piece;
    Place(key, x.at, bound);
  }
}

void CandidatePool::Void(PageId page) {
  const uint32_t slot = page_slots_->Slot(page);
  if (records_[slot].slope_class == kVoidClass) return;
  Key key = TakeOut(slot);
  Record& r = records_[slot];
  r.value = -kInf;
  r.at = -kInf;
  r.base = kInf;
  r.slope_class = kVoidClass;
  key.intercept = kInf;
  classes_[kVoidClass].Push(key);
  Touch(kVoidClass);
}

void CandidatePool::Shift(PageId page, double shift) {
  const uint32_t slot = page_slots_->Slot(page);
  if (records_[slot].slope_class == kVoidClass) return;
  const Key key = TakeOut(slot);
  Record& r = records_[slot];
  // Pieces that end before now are moved on by the next Expire.
  r.at -= shift;
  r.piece = 0;
  Place(key, r.at, r.base);
}

void CandidatePool::Remove(PageId page) {
  const uint32_t slot = page_slots_->Slot(page);
  TakeOut(slot);
  FreeSlot(slot);
  --size_;
}

void CandidatePool::Clear() {
  for (Heap& h : classes_) h.clear();
  expiry_.clear();
  // Released: a rebuild, which clears the pool, may have made a far larger
  // pool than the one it makes now (a lease burst's rebuilds grow their
  // target 4x at a time), and the pool starts empty.
  std::vector<Record>().swap(records_);
  free_slot_ = kNone;
  non_empty_.fill(0);
  non_empty_blocks_ = 0;
  dirty_blocks_ = ~uint32_t{0};
  size_ = 0;
}

double CandidatePool::GrowthBound(const Entry& e, double t) {
  if (!(e.base < kInf)) return kInf;  // voided (kVoidClass)
  const double d = t - e.at;
  double gain = 0.0;
  if (d > 0.0) {
    const double slope = e.slope, rise = e.rise, later = e.later_slope;
    if (!(rise > 0.0) || later <= slope) {
      gain = std::min(slope, later) * d;
    } else {
      // The slope bound reaches `later` at the knee and stays there.
      const double knee = (later - slope) / rise;
      const double run = std::min(d, knee);
      gain = slope * run + 0.5 * rise * run * run + later * std::max(d - knee, 0.0);
    }
  }
  return e.base + gain + kRoundingSlack * (std::fabs(e.base) + gain);
}

bool CandidatePool::BoundsFrom(const Entry& a, const Entry& b, double t) {
  // b stays under its line b0 + later_b·Δ (the margins cover the slack that
  // GrowthBound adds as its gain grows); a is a0 + s·Δ + r·Δ²/2 until its
  // slope reaches later_a, then grows at later_a.
  const double a0 = GrowthBound(a, t);
  const double b0 = GrowthBound(b, t);
  const double later_b = static_cast<double>(b.later_slope) * (1.0 + 1e-9);
  if (!(a0 >= b0) || !(b0 < kInf)) return false;
  if (!(a0 < kInf)) return true;
  const double later_a = a.later_slope;
  if (later_a < later_b) return false;
  const double d = std::max(t - a.at, 0.0);
  const double s =
      std::min(later_a, static_cast<double>(a.slope) + static_cast<double>(a.rise) * d);
  if (s >= later_b) return true;
  // The gap a − b is least where a's slope reaches later_b (before its knee,
  // as later_a >= later_b): (later_b − s)² / (2r) below a0 − b0.
  const double climb = later_b - s;
  return climb * climb <= 2.0 * static_cast<double>(a.rise) * (a0 - b0) * (1.0 - 1e-9);
}

double CandidatePool::RestartTop(double t, double bound) {
  Heap& heap = classes_[top_class_];
  const uint32_t slot = heap.top().slot;
  Record& r = records_[slot];
  const double d = std::max(t - r.at, 0.0);
  const double slope = std::min(static_cast<double>(r.later_slope),
                                static_cast<double>(r.slope) + static_cast<double>(r.rise) * d);
  r.slope = CeilFloat(slope);
  r.at = t;
  r.base = bound;
  r.piece = 0;
  const Line line = LineOf(r, t, bound);
  if (line.slope_class == top_class_) {
    // Same class, a lower line (`bound` is at most the old line at t): the
    // key sinks from the top, with no erase and push.
    heap.at(0).intercept = line.intercept;
    heap.Update(0);
    Touch(top_class_);
    SetExpiry(slot, line.piece_end);
  } else {
    Place(TakeOut(slot), t, bound);
  }
  const Record& s = records_[slot];
  return BoundAt(s.slope_class, classes_[s.slope_class].at(s.pos).intercept, t);
}

double CandidatePool::TopBound(int k, double t) const {
  const double intercept = top_intercept_[k];
  const double mt = ClassSlope(k) * t;
  return intercept + mt + kRoundingSlack * (std::fabs(intercept) + std::fabs(mt));
}

void CandidatePool::ScanBlock(int b, double t) {
  const int first = b * kBlockClasses;
  const uint32_t bits = static_cast<uint32_t>((non_empty_[first / 64] >> (first % 64)) &
                                              ((uint64_t{1} << kBlockClasses) - 1));
  // Every class's bound, the empty ones' too (from a stale top; unused):
  // one pass with no branch, which the two loops below then read. (The
  // last block is short.)
  double bounds[kBlockClasses];
  const int classes = std::min(kBlockClasses, kClasses - first);
  for (int j = 0; j < classes; ++j) bounds[j] = TopBound(first + j, t);
  int best = -1;
  double best_bound = -kInf;
  PageId best_page = 0;
  for (uint32_t mask = bits; mask != 0; mask &= mask - 1) {
    const int k = first + __builtin_ctz(mask);
    const double bound = bounds[k - first];
    if (best < 0 || bound > best_bound || (bound == best_bound && top_page_[k] < best_page)) {
      best = k;
      best_bound = bound;
      best_page = top_page_[k];
    }
  }
  block_best_[b] = best;
  block_bound_[b] = best_bound;
  block_at_[b] = t;
  // For t >= 0 and slopes >= 0 a bound is the line
  //   intercept + slack·|intercept| + M (1 + slack) t,
  // so a steeper class can overtake the best one only after its gap closes
  // at the difference of their slopes. The gap is cut by a margin well
  // above the rounding of either bound (a few ulps of |intercept| + M t).
  double until = kInf;
  if (best >= 0 && std::isfinite(best_bound)) {
    if (!(t >= 0.0)) {
      until = t;
    } else {
      const double best_slope = ClassSlope(best);
      const double best_size = std::fabs(top_intercept_[best]) + best_slope * t;
      // The earliest overtaking, min over the steeper classes of
      // (gap − margin) / closing, kept as a fraction num/den and compared
      // by cross-multiplying: one division a scan instead of one a class.
      double num = kInf;
      double den = 1.0;
      for (uint32_t mask = bits; mask != 0; mask &= mask - 1) {
        const int k = first + __builtin_ctz(mask);
        const double slope = ClassSlope(k);
        if (k == best || slope <= best_slope) continue;
        const double gap = best_bound - bounds[k - first];
        const double margin = 1e-13 * (best_size + std::fabs(top_intercept_[k]) + slope * t);
        if (!(gap > margin)) {
          num = 0.0;
          break;
        }
        const double closing = (slope - best_slope) * (1.0 + 1e-9);
        if ((gap - margin) * den < num * closing) {
          num = gap - margin;
          den = closing;
        }
      }
      until = num == 0.0 ? t : t + num / den;
    }
  }
  block_until_[b] = until;
}

int CandidatePool::BestClass(double t, double* bound) {
  if (!(t == cache_t_)) {
    cache_t_ = t;
    stale_bounds_ = ~uint32_t{0};
  }
  // Bring every non-empty block's best up to date at t, then take the best
  // of them in two passes with no data-dependent branch in the first.
  for (uint32_t blocks = non_empty_blocks_ & (dirty_blocks_ | stale_bounds_); blocks != 0;
       blocks &= blocks - 1) {
    const int b = __builtin_ctz(blocks);
    const uint32_t bit = uint32_t{1} << b;
    if ((dirty_blocks_ & bit) != 0 || !(t == block_at_[b] || t < block_until_[b])) {
      ScanBlock(b, t);
      dirty_blocks_ &= ~bit;
    } else {
      block_bound_[b] = TopBound(block_best_[b], t);
    }
    stale_bounds_ &= ~bit;
  }
  double best_bound = -kInf;
  for (uint32_t blocks = non_empty_blocks_; blocks != 0; blocks &= blocks - 1) {
    best_bound = std::max(best_bound, block_bound_[__builtin_ctz(blocks)]);
  }
  int best = -1;
  for (uint32_t blocks = non_empty_blocks_; blocks != 0; blocks &= blocks - 1) {
    const int b = __builtin_ctz(blocks);
    const int k = block_best_[b];
    if (block_bound_[b] == best_bound && (best < 0 || top_page_[k] < top_page_[best])) {
      best = k;
    }
  }
  if (best >= 0) {
    best_bound = BoundAt(best, classes_[best].top().intercept, t);
  }
  *bound = best_bound;
  return best;
}

bool CandidatePool::Top(double t, Entry* entry, double* bound) {
  top_class_ = BestClass(t, bound);
  if (top_class_ < 0) return false;
  *entry = EntryOf(classes_[top_class_].top());
  return true;
}

CandidatePool::Entry CandidatePool::PopTop() {
  const Key key = classes_[top_class_].top();
  const Entry e = EntryOf(key);
  TakeOut(key.slot);
  FreeSlot(key.slot);
  --size_;
  return e;
}

void CandidatePool::Touch(int k) {
  // Classes fill and drain as slopes drift; without this each would keep
  // its high-water capacity. (Little constant slack: some hundreds of
  // classes hold entries, most of them a few, and their slack counts
  // against the index's 64 bytes a page; an emptied class gives back all.)
  Heap& heap = classes_[k];
  heap.ReleaseSlack(4);
  // A block's cached best and its until time depend only on its classes'
  // tops, so a change below a top (most pushes and erasures) leaves it valid.
  const int block = k / kBlockClasses;
  const uint32_t block_bit = uint32_t{1} << block;
  const uint64_t bit = uint64_t{1} << (k % 64);
  const bool was_non_empty = (non_empty_[k / 64] & bit) != 0;
  if (heap.empty()) {
    if (!was_non_empty) return;
    dirty_blocks_ |= block_bit;
    non_empty_[k / 64] &= ~bit;
    const int first = block * kBlockClasses;
    if (((non_empty_[first / 64] >> (first % 64)) & ((uint64_t{1} << kBlockClasses) - 1)) == 0) {
      non_empty_blocks_ &= ~block_bit;
    }
    return;
  }
  const Key& top = heap.top();
  const double intercept = k == kVoidClass ? kInf : top.intercept;
  if (was_non_empty && top_intercept_[k] == intercept && top_page_[k] == top.page) {
    return;
  }
  dirty_blocks_ |= block_bit;
  non_empty_[k / 64] |= bit;
  non_empty_blocks_ |= block_bit;
  top_intercept_[k] = intercept;
  top_page_[k] = top.page;
  // The candidates Select values next: their records here and the owner's.
  __builtin_prefetch(&records_[top.slot]);
  page_slots_->Prefetch(top.page, top.tag);
}

std::vector<CandidatePool::Entry> CandidatePool::Entries() const {
  std::vector<Entry> all;
  all.reserve(size_);
  for (const Heap& h : classes_) {
    for (uint32_t i = 0; i < h.size(); ++i) all.push_back(EntryOf(h.at(i)));
  }
  return all;
}

}  // namespace shard
}  // namespace recrawl
