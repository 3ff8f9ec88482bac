#include "shard/index/parked_classes.h"

#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "shard/index/candidate_pool.h"
#include "shard/index/parked_entries_testing.h"

namespace recrawl {
namespace shard {
namespace {

using Entry = CandidatePool::Entry;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Slopes over several octaves: a few fast pages beside many slow ones.
Entry RandomEntry(std::mt19937_64& rng, PageId page, double t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Entry e;
  e.at = t - 5.0 * u(rng);
  e.value = 100.0 * u(rng);
  e.base = e.value * (1.0 + 0.01 * u(rng));
  const double scale = u(rng) < 0.1 ? 64.0 : (u(rng) < 0.5 ? 4.0 : 0.25);
  e.slope = CandidatePool::CeilFloat(scale * u(rng));
  e.rise = CandidatePool::CeilFloat(0.1 * scale * u(rng));
  e.later_slope = CandidatePool::CeilFloat(e.slope + scale * u(rng));
  e.page = page;
  e.tag = 0;
  e.slot = page;  // its stamp: live while it matches
  return e;
}

// The bound a pool entry with the envelope gives at t' (from t).
double EnvelopeBound(const ParkedClasses::Envelope& env, double t, double later) {
  Entry e;
  e.at = t;
  e.base = env.base;
  e.slope = CandidatePool::CeilFloat(env.slope);
  e.rise = CandidatePool::CeilFloat(env.rise);
  e.later_slope = CandidatePool::CeilFloat(env.later_slope);
  return CandidatePool::GrowthBound(e, later);
}

// The envelope from t bounds every live entry's growth bound at every
// later time; the top bound bounds them at t; pops come in non-increasing
// order of the top bound, each popped entry under the bound before it.
TEST(ParkedClassesTest, EnvelopeAndTopBoundEveryEntry) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    ParkedClasses pages;
    const RandomParkedPages r = PushRandomPages(rng, 300, RandomEntry, &pages);
    const std::vector<Entry>& live = r.live;
    const double t = r.t;
    auto is_live = [&r](const Entry& e) { return r.IsLive(e); };
    ASSERT_TRUE(pages.DropStaleTops(is_live));
    const ParkedClasses::Envelope env = pages.EnvelopeFrom(t);
    EXPECT_LE(env.slope, env.later_slope);
    for (double run : {0.0, 0.01, 0.3, 1.0, 7.0, 100.0, 1e4}) {
      const double later = t + run;
      const double bound = EnvelopeBound(env, t, later);
      for (const Entry& e : live) {
        ASSERT_GE(bound, CandidatePool::GrowthBound(e, later))
            << "round " << round << " page " << e.page << " run " << run;
      }
    }
    double previous = pages.TopBound(t);
    for (const Entry& e : live) EXPECT_GE(previous, CandidatePool::GrowthBound(e, t));
    size_t popped = 0;
    while (!pages.empty()) {
      const double bound = pages.TopBound(t);
      EXPECT_LE(bound, previous);
      const Entry e = pages.PopTop(t, is_live);
      EXPECT_TRUE(is_live(e));
      EXPECT_GE(bound, CandidatePool::GrowthBound(e, t));
      previous = bound;
      ++popped;
    }
    EXPECT_EQ(popped, live.size());
    EXPECT_TRUE(pages.empty());
  }
}

// Many slow pages near the top and a few fast ones far below: the envelope
// starts at the slow pages' rate (within their class), not the fast ones'
// (what a single slope for all of them would give), and bends up only
// slightly over the next unit of time.
TEST(ParkedClassesTest, FastPagesFarBelowBarelyBendTheEnvelope) {
  ParkedClasses pages;
  auto is_live = [](const Entry&) { return true; };
  for (PageId page = 0; page < 100; ++page) {
    Entry e;
    e.at = 10.0;
    e.value = e.base = 1000.0 + page;
    const bool fast = page % 10 == 0;
    e.slope = e.later_slope = fast ? 0.05f : 0.002f;
    e.rise = 0.0f;
    e.base = e.value = fast ? 600.0 + page : 1000.0 + page;
    e.page = page;
    e.tag = 0;
    e.slot = 0;
    pages.Push(e, 10.0, is_live);
  }
  const ParkedClasses::Envelope env = pages.EnvelopeFrom(10.0);
  EXPECT_GE(env.base, 1099.0);
  EXPECT_LE(env.slope, 2.5 * 0.002);
  EXPECT_GE(env.later_slope, 0.05);
  EXPECT_LT(EnvelopeBound(env, 10.0, 11.0) - env.base, 3.0 * 0.002);
}

// An entry without a finite bound makes the envelope unbounded.
TEST(ParkedClassesTest, UnboundedEntryVoidsTheEnvelope) {
  std::mt19937_64 rng(8);
  ParkedClasses pages;
  auto is_live = [](const Entry&) { return true; };
  for (PageId page = 0; page < 10; ++page) {
    pages.Push(RandomEntry(rng, page, 10.0), 10.0, is_live);
  }
  EXPECT_LT(pages.EnvelopeFrom(10.0).base, kInf);
  Entry voided = RandomEntry(rng, 10, 10.0);
  voided.base = kInf;
  pages.Push(voided, 10.0, is_live);
  EXPECT_EQ(pages.EnvelopeFrom(10.0).base, kInf);
  EXPECT_EQ(pages.PopTop(11.0, is_live).page, 10u);
  EXPECT_LT(pages.EnvelopeFrom(11.0).base, kInf);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
