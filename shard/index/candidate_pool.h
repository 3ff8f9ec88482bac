// The scheduling index's candidates: pages whose crawl value has reached the
// level Λ, each remembered by its last exact value and a bound on how fast
// that value can grow, so that the best of them at time t is found by
// evaluating only those whose bound can still beat the best exact value.
//
// A candidate evaluated to v at time a, with dV/dt <= M until its next
// signal, satisfies V(t) <= v + M (t − a). These bounds are lines in t, and
// lines with the same slope never change order. So the pool rounds M up to a
// power of two and keeps one max-heap per slope class, ordered by the time-
// independent intercept v − M a: the largest bound at t is the best of the
// classes' tops (at most 63 classes; a bit mask lists the non-empty ones),
// with no periodic re-keying. Candidates whose value just jumped (a signal)
// sit in a class of their own whose bound is +∞.
#ifndef RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_
#define RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_

#include <cstdint>
#include <vector>

#include "shard/index/crawl_index.h"
#include "shard/index/indexed_heap.h"

namespace recrawl {
namespace shard {

class CandidatePool {
 public:
  struct Entry {
    double intercept;  // v − M_class·a: the bound is intercept + M_class·t
    double value;      // exact V at `at`; −∞ when unknown (after a signal)
    double at;
    PageId page;
  };
  // Where each candidate's entry is (its class and its position in that
  // class), kept in the owner's page table to spare a map.
  class Positions {
   public:
    virtual ~Positions() = default;
    virtual void Set(PageId page, int slope_class, uint32_t pos) = 0;
    virtual int SlopeClass(PageId page) const = 0;
    virtual uint32_t Pos(PageId page) const = 0;
  };

  explicit CandidatePool(Positions* positions);
  CandidatePool(const CandidatePool&) = delete;
  CandidatePool& operator=(const CandidatePool&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t MemoryBytes() const;

  // Adds a page valued `value` at `at` whose value grows at most at `slope`
  // per unit time until its next signal.
  void Add(PageId page, double value, double at, double slope);
  // The page's value jumped (a signal): its bound is +∞ until re-added.
  void Void(PageId page);
  void Remove(PageId page);
  void Clear();

  // The entry with the largest bound at t (ties: lower page id), and that
  // bound; false when empty.
  bool Top(double t, Entry* entry, double* bound);
  // Removes and returns the entry the last Top call gave (no other call in
  // between).
  Entry PopTop();

  // Every entry, in no order (for re-leveling).
  std::vector<Entry> Entries() const;

 private:
  struct SetPos {
    Positions* positions;
    int slope_class;
    void operator()(const Entry& e, uint32_t pos) const {
      positions->Set(e.page, slope_class, pos);
    }
  };
  struct HigherIntercept {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.intercept > b.intercept ||
             (a.intercept == b.intercept && a.page < b.page);
    }
  };
  using Heap = IndexedHeap<Entry, HigherIntercept, SetPos>;

  static int ClassOf(double slope);
  static double ClassSlope(int slope_class);
  double BoundAt(int slope_class, const Entry& e, double t) const;
  int BestClass(double t, double* bound) const;
  void Touch(int slope_class);  // after a class changed size

  Positions* positions_;
  std::vector<Heap> classes_;
  uint64_t non_empty_ = 0;  // bit k: class k has entries
  int top_class_ = -1;      // the class of the last Top
  size_t size_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_CANDIDATE_POOL_H_
