#include "shard/index/candidate_pool.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

class VectorSlots : public CandidatePool::PageSlots {
 public:
  void SetSlot(PageId page, uint32_t slot) override {
    if (page >= slots_.size()) slots_.resize(page + 1);
    slots_[page] = slot;
    ++writes_;
  }
  uint32_t Slot(PageId page) const override { return slots_[page]; }
  int writes() const { return writes_; }

 private:
  std::vector<uint32_t> slots_;
  int writes_ = 0;
};

// A page whose value grows exactly at u·min(later, slope + rise·δ), u <= 1:
// within the bound the pool is told, sometimes tight, sometimes not.
struct TruePage {
  double value;
  double at;
  CandidatePool::Growth growth;
  double u;
  bool present = false;
  bool voided = false;  // the pool's bound is +∞ until re-added

  double ValueAt(double t) const {
    const double d = std::max(t - at, 0.0);
    const double s = growth.slope, r = growth.rise, l = growth.later_slope;
    double integral;
    if (r <= 0.0 || s >= l) {
      integral = std::min(s, l) * d;
    } else {
      const double knee = (l - s) / r;
      const double e = std::min(d, knee);
      integral = s * e + 0.5 * r * e * e + l * std::max(d - knee, 0.0);
    }
    return value + u * integral;
  }
};

// Random adds, copies (AddLike), voids, shifts, removals and pops at
// increasing times: every bound the pool reports is at least the true value
// of the page it names and of every page still in the pool, and pops come
// in non-increasing bound order.
TEST(CandidatePoolTest, BoundsHoldThroughPiecesUnderRandomEvents) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  VectorSlots slots;
  CandidatePool pool(&slots);
  constexpr int kPages = 300;
  std::vector<TruePage> pages(kPages);
  double t = 0.0;
  int checked = 0;
  for (int step = 0; step < 20000; ++step) {
    t += 0.01 * u(rng);
    const PageId id = static_cast<PageId>(rng() % kPages);
    TruePage& p = pages[id];
    const double action = u(rng);
    if (action < 0.4) {
      if (p.present) pool.Remove(id);
      p.value = 10.0 * u(rng);
      p.at = t;
      p.growth.slope = std::pow(10.0, -3.0 + 3.0 * u(rng));
      p.growth.rise = u(rng) < 0.2 ? 0.0 : p.growth.slope * 2.0 * u(rng);
      p.growth.later_slope = p.growth.slope * (1.0 + 20.0 * u(rng));
      p.u = u(rng) < 0.5 ? 1.0 : u(rng);
      p.present = true;
      p.voided = false;
      pool.Add(id, p.value, p.at, p.growth);
    } else if (action < 0.45 && p.present) {
      pool.Void(id);
      p.voided = true;
    } else if (action < 0.5 && p.present) {
      // The page's effective time jumps: its true value moves along its
      // curve.
      const double shift = 2.0 * u(rng);
      pool.Shift(id, shift);
      p.at -= shift;
    } else if (action < 0.6 && p.present) {
      pool.Remove(id);
      p.present = false;
    } else if (action < 0.65) {
      // The page takes another's value curve and the pool's entry for it
      // (its pieces may have ended long ago: the next Expire moves them).
      const PageId other = static_cast<PageId>(rng() % kPages);
      if (other == id || !pages[other].present) continue;
      if (p.present) pool.Remove(id);
      p = pages[other];
      pool.AddLike(id, pool.Find(other), 0);
      EXPECT_EQ(pool.Find(id).base, pool.Find(other).base);
    } else {
      pool.Expire(t);
      CandidatePool::Entry top;
      double bound;
      if (!pool.Top(t, &top, &bound)) {
        EXPECT_EQ(pool.size(), 0u);
        continue;
      }
      for (const TruePage& q : pages) {
        if (q.present && !q.voided) {
          ASSERT_GE(bound, q.ValueAt(t)) << "step " << step;
          ++checked;
        }
      }
      if (u(rng) < 0.3 && !pages[top.page].voided) {
        // The growth bound is a bound, below the line's; restarting the
        // line from it keeps every bound a bound (checked as we go on).
        const double tight = pool.GrowthBound(top, t);
        ASSERT_GE(tight, pages[top.page].ValueAt(t)) << "step " << step;
        ASSERT_LE(tight, bound + 1e-9 * std::fabs(bound)) << "step " << step;
        const double placed = pool.RestartTop(t, tight);
        ASSERT_GE(placed, tight);
        // The line's rounding slack scales with |intercept| + M·t.
        ASSERT_LE(placed, tight + 1e-8 * (1.0 + std::fabs(tight)));
        continue;
      }
      if (u(rng) < 0.3) {
        // Pop a run of entries: their bounds never increase.
        double last = std::numeric_limits<double>::infinity();
        for (int i = 0; i < 5 && pool.Top(t, &top, &bound); ++i) {
          ASSERT_LE(bound, last);
          last = bound;
          const CandidatePool::Entry e = pool.PopTop();
          ASSERT_EQ(e.page, top.page);
          TruePage& q = pages[e.page];
          if (!q.voided) {
            ASSERT_GE(bound, q.ValueAt(t));
          }
          q.present = false;
        }
      }
    }
    size_t present = 0;
    for (const TruePage& q : pages) present += q.present;
    ASSERT_EQ(pool.size(), present);
  }
  EXPECT_GT(checked, 20000);
}

// BoundsFrom is a sufficient test: where it holds, a's growth bound is at
// least b's at every later time; and it holds often enough to be of use
// (for entries alike but for their base).
TEST(CandidatePoolTest, BoundsFromHoldsAtEveryLaterTime) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto random_entry = [&](double t) {
    CandidatePool::Entry e;
    e.at = t - 2.0 * u(rng);
    e.value = e.base = 10.0 + u(rng);
    e.slope = CandidatePool::CeilFloat(u(rng));
    e.rise = CandidatePool::CeilFloat(u(rng) < 0.3 ? 0.0 : u(rng));
    e.later_slope = CandidatePool::CeilFloat(e.slope + 2.0 * u(rng));
    e.page = 0;
    e.tag = 0;
    e.slot = 0;
    return e;
  };
  int held = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const double t = 100.0;
    const CandidatePool::Entry a = random_entry(t);
    const CandidatePool::Entry b = random_entry(t);
    if (!CandidatePool::BoundsFrom(a, b, t)) continue;
    ++held;
    for (double run : {0.0, 1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 1e3}) {
      ASSERT_GE(CandidatePool::GrowthBound(a, t + run), CandidatePool::GrowthBound(b, t + run))
          << "trial " << trial << " run " << run;
    }
  }
  EXPECT_GT(held, 2000);
}

// A candidate growing at exactly its announced slope is bounded tightly:
// within the first piece the bound exceeds the value by at most
// kStepsPerOctave-rounding plus the piece's own slack (a few percent of the
// growth), which is what keeps valuations per pick low.
TEST(CandidatePoolTest, FirstPieceIsTight) {
  VectorSlots slots;
  CandidatePool pool(&slots);
  const double slope = 0.37, rise = 0.01;
  pool.Add(7, 1.0, 0.0, {slope, rise, 10.0 * slope});
  for (double t : {0.01, 0.1, 0.5}) {
    pool.Expire(t);
    CandidatePool::Entry top;
    double bound;
    ASSERT_TRUE(pool.Top(t, &top, &bound));
    const double growth = slope * t + 0.5 * rise * t * t;
    EXPECT_GE(bound, 1.0 + growth);
    EXPECT_LE(bound - 1.0, growth * (1.0 + 1.0 / CandidatePool::kStepsPerOctave) * 1.1);
  }
}

// The owner's table is written once per Add, however often the entry moves
// (pieces expiring, shifts, voids, restarts, other entries' moves), and
// slots are reused, so the pool's slot table is no larger than the pool has
// been. (A pool this small never compacts its slot table, which rewrites
// the owner's table: ShrunkPoolCompactsItsSlotTable.)
TEST(CandidatePoolTest, SlotsAreWrittenOncePerAddAndReused) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  VectorSlots slots;
  CandidatePool pool(&slots);
  constexpr int kPages = 200;
  std::vector<bool> present(kPages, false);
  int adds = 0;
  size_t peak = 0;
  double t = 0.0;
  for (int step = 0; step < 20000; ++step) {
    t += 0.01 * u(rng);
    const PageId id = static_cast<PageId>(rng() % kPages);
    const double action = u(rng);
    if (action < 0.3 && !present[id]) {
      const double slope = std::pow(10.0, -3.0 + 3.0 * u(rng));
      pool.Add(id, 10.0 * u(rng), t, {slope, slope * u(rng), 10.0 * slope});
      present[id] = true;
      ++adds;
      peak = std::max(peak, pool.size());
    } else if (action < 0.4 && present[id]) {
      pool.Shift(id, u(rng));
    } else if (action < 0.45 && present[id]) {
      pool.Void(id);
    } else if (action < 0.6 && present[id]) {
      pool.Remove(id);
      present[id] = false;
    } else {
      pool.Expire(t);
      CandidatePool::Entry top;
      double bound;
      if (!pool.Top(t, &top, &bound)) continue;
      ASSERT_EQ(top.slot, slots.Slot(top.page));
      const double tight = pool.GrowthBound(top, t);
      if (u(rng) < 0.5 && std::isfinite(tight)) {  // not a voided entry
        pool.RestartTop(t, tight);
      } else {
        present[pool.PopTop().page] = false;
      }
    }
    ASSERT_EQ(slots.writes(), adds);
  }
  for (const CandidatePool::Entry& e : pool.Entries()) {
    EXPECT_EQ(e.slot, slots.Slot(e.page));
    EXPECT_LT(e.slot, peak);
  }
  EXPECT_GT(adds, 1000);
}

// Once the pool has shrunk to well under its slot table, the next Add
// renumbers the entries' slots (telling the owner each new one) and drops
// the rest of the table; the entries' pieces (the expiry heap's slots) carry
// on.
TEST(CandidatePoolTest, ShrunkPoolCompactsItsSlotTable) {
  VectorSlots slots;
  CandidatePool pool(&slots);
  constexpr int kPages = 3000;
  for (int i = 0; i < kPages; ++i) {
    const double slope = 0.001 * (1 + i % 50);
    pool.Add(i, 0.001 * i, 0.0, {slope, slope, 100.0 * slope});
  }
  const size_t full = pool.MemoryBytes();
  for (int i = 0; i < kPages; ++i) {
    if (i % 30 != 0) pool.Remove(i);
  }
  pool.Add(kPages, 5.0, 0.0, {0.01, 0.01, 1.0});
  EXPECT_EQ(pool.size(), 101u);
  EXPECT_LT(pool.MemoryBytes(), full);
  for (const CandidatePool::Entry& e : pool.Entries()) {
    EXPECT_EQ(e.slot, slots.Slot(e.page));
    EXPECT_LT(e.slot, pool.size());
  }
  // Pieces expire (their expiry entries name the new slots) and every
  // entry still leaves the pool under the slot its owner was told.
  for (double t = 0.0; !pool.empty(); t += 1.0) {
    pool.Expire(t);
    CandidatePool::Entry top;
    double bound;
    ASSERT_TRUE(pool.Top(t, &top, &bound));
    ASSERT_EQ(top.slot, slots.Slot(top.page));
    EXPECT_GE(bound, top.value);
    pool.PopTop();
  }
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
