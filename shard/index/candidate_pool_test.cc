#include "shard/index/candidate_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

class VectorPositions : public CandidatePool::Positions {
 public:
  void Set(PageId page, int slope_class, uint32_t pos) override {
    if (page >= classes_.size()) {
      classes_.resize(page + 1);
      pos_.resize(page + 1);
    }
    classes_[page] = slope_class;
    pos_[page] = pos;
  }
  int SlopeClass(PageId page) const override { return classes_[page]; }
  uint32_t Pos(PageId page) const override { return pos_[page]; }

 private:
  std::vector<int> classes_;
  std::vector<uint32_t> pos_;
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

// Random adds, voids, shifts, removals and pops at increasing times: every bound
// the pool reports is at least the true value of the page it names and of
// every page still in the pool, and pops come in non-increasing bound order.
TEST(CandidatePoolTest, BoundsHoldThroughPiecesUnderRandomEvents) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  VectorPositions positions;
  CandidatePool pool(&positions);
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

// A candidate growing at exactly its announced slope is bounded tightly:
// within the first piece the bound exceeds the value by at most
// kStepsPerOctave-rounding plus the piece's own slack (a few percent of the
// growth), which is what keeps evaluations per pick low.
TEST(CandidatePoolTest, FirstPieceIsTight) {
  VectorPositions positions;
  CandidatePool pool(&positions);
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

}  // namespace
}  // namespace shard
}  // namespace recrawl
