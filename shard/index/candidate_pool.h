// The scheduling index's candidates: pages whose crawl value has reached the
// level Λ, each remembered by its last exact value and a bound on how fast
// that value can grow, so that the best of them at time t is found by
// valuing only those whose bound can still beat the best exact value.
//
// A candidate valued v at time a, whose slope until its next signal obeys
//   dV/dt (a + δ) <= min(later_slope, slope + rise·δ)   (crawl_value.h),
// is bounded by a chain of lines: piece j covers δ in
// [H(2^j − 1), H(2^{j+1} − 1)) with slope slope + rise·H(2^{j+1} − 1),
// H = kFirstPiece·slope/rise, until that reaches later_slope, which then
// holds for ever. The first piece is within a few percent of the exact
// slope; pieces double in length, so a candidate changes pieces O(log) times
// while it waits, each an O(log n) heap move and no valuation. (Tightness
// matters: a candidate whose bound overshoots its true growth by a factor f
// is valued about log(gap)/log(f/(f−1)) times on its way to the top.)
//
// Lines with equal slopes never change order. So the pool rounds slopes up
// to one of kStepsPerOctave classes per octave and keeps one max-heap per
// class, ordered by the time-independent intercept v − M a: the largest
// bound at t is the best of the non-empty classes' tops (found by blocks of
// classes that remember their best until a steeper class overtakes it),
// with no periodic re-keying. A min-heap of piece ends moves entries
// to their next line when their time comes (Expire, before any Top at or
// past it). Candidates whose value just jumped (a signal) sit in a class of
// their own whose bound is +∞.
#ifndef RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_
#define RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "shard/index/crawl_index.h"
#include "shard/index/indexed_heap.h"

namespace recrawl {
namespace shard {

class CandidatePool {
 public:
  // How a candidate's value may grow from `at` until its next signal.
  struct Growth {
    double slope = 0.0;        // dV/dt at `at` (an upper bound)
    double rise = 0.0;         // the slope grows at most this fast
    double later_slope = 0.0;  // and never exceeds this
  };
  // The pool's view of a candidate, as Top and PopTop return it (inside,
  // a heap key and a record by slot: Key, Record).
  struct Entry {
    double value;  // a lower bound on V (exact when valued); −∞: unknown
    double at;     // where the bound's pieces start, from `base`
    double base;   // an upper bound on V at `at` (`value` when added)
    float slope;   // Growth, rounded up to floats
    float rise;
    float later_slope;
    PageId page;
    // The owner's, carried along (the index keeps the page's host here, so
    // that checking a candidate's host and valuing it read the host table
    // and the page record at once, not one after the other).
    uint32_t tag;
    // The page's slot in the pool's tables while it is in the pool.
    uint32_t slot;
  };
  static constexpr int kStepsPerOctave = 8;
  static constexpr int kMinExponent = -40;
  static constexpr int kMaxExponent = 20;
  static constexpr int kSlopedClasses = (kMaxExponent - kMinExponent + 1) * kStepsPerOctave;
  static constexpr int kFlatClass = kSlopedClasses;      // slope 0
  static constexpr int kVoidClass = kSlopedClasses + 1;  // bound +∞
  static constexpr int kClasses = kSlopedClasses + 2;

  // Each candidate's slot in the pool's record table, kept in the owner's page
  // table to spare a map. It is set when the page is added (and again when
  // the pool compacts its table) and read only by the calls that name a
  // page (Void, Shift, Remove); heap moves write into the pool's record
  // table, which is about the pool's size, instead of into the page table
  // (a random cache miss a move).
  class PageSlots {
   public:
    virtual ~PageSlots() = default;
    virtual void SetSlot(PageId page, uint32_t slot) = 0;
    virtual uint32_t Slot(PageId page) const = 0;
    // The page (with owner's tag) just became the top of its class, the
    // candidates the owner values: a hint to load what that reads.
    virtual void Prefetch(PageId page, uint32_t tag) const {}
  };

  // The smallest float not below x: a bound rounded to a float stays one.
  static float CeilFloat(double x);

  explicit CandidatePool(PageSlots* page_slots);
  CandidatePool(const CandidatePool&) = delete;
  CandidatePool& operator=(const CandidatePool&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t MemoryBytes() const;
  // Entries placed on a line so far (each a heap insert: by Add, and by
  // Expire, Shift and RestartTop moving one on), for counting work.
  uint64_t placements() const { return placements_; }

  // Adds a page valued `value` at `at`.
  void Add(PageId page, double value, double at, const Growth& growth, uint32_t tag = 0);
  // Adds `page` with the bound of another candidate's entry (`like`, as Top
  // or Find gave it): right when the two pages' values are equal at all
  // times (the index's pages alike), so that what bounds one bounds the
  // other. Its bound starts again from like.at: Expire must come before
  // the next Top.
  void AddLike(PageId page, const Entry& like, uint32_t tag);
  // The page's entry (it must be in the pool).
  Entry Find(PageId page) const;
  // The page's value jumped (a signal): its bound is +∞ until re-added.
  void Void(PageId page);
  // The page's value is a function of an effective time that just jumped
  // by `shift` (a signal adds β to τ_eff, Sec. 5.1): its bound becomes the
  // old bound `shift` later. Its value stays a lower bound.
  void Shift(PageId page, double shift);
  void Remove(PageId page);
  void Clear();

  // Moves every entry whose piece ended at or before t to its next line.
  // Top(t) must come after Expire(t).
  void Expire(double t);
  // The entry with the largest bound at t (ties: lower page id), and that
  // bound; false when empty.
  bool Top(double t, Entry* entry, double* bound);
  // Removes and returns the entry the last Top call gave (no other call in
  // between).
  Entry PopTop();

  // The bound the entry's growth gives at t (>= its start), before lines
  // and classes round it up:
  //   base + ∫_0^{t − at} min(later_slope, slope + rise·s) ds,
  // +∞ for an entry whose value jumped. Tighter than Top's bound, by the
  // class rounding (up to 1/kStepsPerOctave of the slope) and the piece
  // slack: what lets the index skip valuing a candidate whose line
  // reaches the best value found while its growth does not. Reads only the
  // entry: it holds for an entry kept out of the pool as well.
  static double GrowthBound(const Entry& e, double t);
  // Whether GrowthBound(a, t') >= GrowthBound(b, t') at every t' >= t
  // (t >= both entries' `at`): a at least b at t, and a's growth, bending
  // up from its slope at t, stays above b's line at b's later slope. A
  // sufficient test (false may still hold); reads only the entries.
  static bool BoundsFrom(const Entry& a, const Entry& b, double t);
  // Restarts the chain of the entry the last Top call gave at (t, bound),
  // `bound` >= GrowthBound(entry, t) being an upper bound on its value at
  // t; the slope bound moves on to t. Returns its new bound at t (the line
  // through `bound`, rounding included).
  double RestartTop(double t, double bound);

  // Every entry, in no order (for re-leveling).
  std::vector<Entry> Entries() const;

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  // Slots are 32-bit and kNone ends the free list.
  static constexpr uint32_t kMaxSlots = kNone;
  // Slot tables of fewer slots are not compacted.
  static constexpr size_t kMinSlotsToCompact = 256;
  // A candidate's state, by slot: its growth and where its keys are (its
  // class, its position there and in the expiry heap). Slots are reused (a
  // free list threaded through `pos`), and the table is compacted once it
  // is over 1.5 times the pool (CompactSlots), so it stays about the pool's
  // size (which swings by 4x between raises of Λ).
  struct Record {
    double value;
    double at;
    double base;
    float slope;
    float rise;
    float later_slope;
    uint32_t pos;         // in classes_[slope_class]; while free: the next
    uint32_t expiry_pos;  // kNone, or the position in expiry_
    uint16_t slope_class;
    uint8_t piece;
  };
  static_assert(sizeof(Record) <= 48, "Record grew");
  static_assert(kClasses <= (1 << 16), "Record::slope_class bits");
  // What a class heap orders and moves: 24 bytes, so that a sift reads two
  // or three keys a cache line rather than one 56-byte entry (the class
  // heaps outgrow the caches at 10^7 pages). The page and its tag ride
  // along for the ties and for the prefetch when a key becomes a top.
  struct Key {
    double intercept;  // the bound is intercept + M_class·t
    PageId page;
    uint32_t slot;
    uint32_t tag;
  };
  static_assert(sizeof(Key) <= 24, "Key grew");
  struct SetPos {
    CandidatePool* pool;
    void operator()(const Key& k, uint32_t pos) const { pool->records_[k.slot].pos = pos; }
  };
  struct HigherIntercept {
    bool operator()(const Key& a, const Key& b) const {
      return a.intercept > b.intercept || (a.intercept == b.intercept && a.page < b.page);
    }
  };
  using Heap = IndexedHeap<Key, HigherIntercept, SetPos>;
  struct Expiry {
    double at;
    uint32_t slot;
  };
  struct SetExpiryPos {
    CandidatePool* pool;
    void operator()(const Expiry& e, uint32_t pos) const {
      pool->records_[e.slot].expiry_pos = pos;
    }
  };
  struct EarlierExpiry {
    bool operator()(const Expiry& a, const Expiry& b) const { return a.at < b.at; }
  };
  using ExpiryHeap = IndexedHeap<Expiry, EarlierExpiry, SetExpiryPos>;
  static constexpr int kMaskWords = (kClasses + 63) / 64;

  static int ClassOf(double slope);
  static double ClassSlope(int slope_class);
  double BoundAt(int slope_class, double intercept, double t) const;
  Entry EntryOf(const Key& key) const;
  int BestClass(double t, double* bound);
  // Block b's best class at t, and until when it stays the best.
  void ScanBlock(int b, double t);
  // Class k's bound at t, from its top's cached intercept (as BoundAt).
  double TopBound(int k, double t) const;
  void Touch(int slope_class);  // after a class changed
  uint32_t NewSlot();
  void FreeSlot(uint32_t slot);
  void CompactSlots();
  // Removes the slot's key from its class and the expiry heap (size_ and
  // the slot, with its record, are the caller's) and returns it.
  Key TakeOut(uint32_t slot);
  // The line of r's current piece through `bound` at `from`: its class,
  // r's intercept on it, and when the piece ends (+∞: the last).
  struct Line {
    int slope_class;
    double intercept;
    double piece_end;
  };
  Line LineOf(const Record& r, double from, double bound) const;
  // Puts the key's candidate (bounded by `bound` at `from`) on the line of
  // its record's piece.
  void Place(Key key, double from, double bound);
  // Points the slot's expiry entry at `piece_end` (+∞: none).
  void SetExpiry(uint32_t slot, double piece_end);

  PageSlots* page_slots_;
  std::vector<Record> records_;
  uint32_t free_slot_ = kNone;  // head of the free list
  std::vector<Heap> classes_;
  ExpiryHeap expiry_;
  std::array<uint64_t, kMaskWords> non_empty_{};  // bit k: class k has entries
  // Each non-empty class's top (intercept and page), kept next to each other
  // so that Top scans them without touching the heaps.
  std::vector<double> top_intercept_;
  std::vector<PageId> top_page_;
  int top_class_ = -1;  // the class of the last Top
  size_t size_ = 0;
  uint64_t placements_ = 0;
  // The classes in blocks of kBlockClasses, each remembering its best class
  // and until when that stays its best: the bounds are lines in t, so a
  // steeper class overtakes the best one at a time known when the block is
  // scanned. A block is scanned again only when one of its classes changed
  // (dirty_blocks_) or that time passed; a pick changes a few classes, so
  // Top costs a few block scans and a pass over the non-empty blocks' best
  // bounds (block_bound_, at cache_t_), not a pass over all classes.
  static constexpr int kBlockClasses = 16;
  static constexpr int kBlocks = (kClasses + kBlockClasses - 1) / kBlockClasses;
  static_assert(kBlocks <= 32, "block masks are 32 bits");
  static_assert(64 % kBlockClasses == 0, "blocks within mask words");
  uint32_t non_empty_blocks_ = 0;
  uint32_t dirty_blocks_ = ~uint32_t{0};
  uint32_t stale_bounds_ = ~uint32_t{0};  // block_bound_ not at cache_t_
  double cache_t_ = std::numeric_limits<double>::quiet_NaN();
  std::array<int, kBlocks> block_best_{};      // −1: empty
  std::array<double, kBlocks> block_until_{};  // best for t' < this
  std::array<double, kBlocks> block_at_{};     // and at this t
  std::array<double, kBlocks> block_bound_{};
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_
