#include "sim/world.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"

namespace recrawl {
namespace sim {
namespace {

TEST(DistributionTest, ParsesAndRejects) {
  EXPECT_EQ(Distribution::Parse("beta:0.25,0.25")->kind, Distribution::Kind::kBeta);
  EXPECT_EQ(Distribution::Parse("const:3")->a, 3.0);
  EXPECT_FALSE(Distribution::Parse("beta:0,1").ok());
  EXPECT_FALSE(Distribution::Parse("uniform:1").ok());
  EXPECT_FALSE(Distribution::Parse("gauss:0,1").ok());
}

TEST(WorldTest, ParametersFollowTheirDistributions) {
  WorldConfig c;
  c.num_pages = 20000;
  c.recall = Distribution::Beta(0.25, 0.25);
  c.false_rate = Distribution::Uniform(0.1, 0.6);
  Instance inst = GenerateInstance(c, 7, 0);
  double mu = 0, lambda = 0, extreme = 0, nu = 0;
  for (const auto& p : inst.pages) {
    mu += p.importance;
    lambda += p.recall;
    extreme += (p.recall < 0.1 || p.recall > 0.9);
    nu += p.false_rate;
    ASSERT_GE(p.false_rate, 0.1);
    ASSERT_LE(p.false_rate, 0.6);
  }
  const double n = c.num_pages;
  EXPECT_NEAR(mu / n, 0.5, 0.01);
  EXPECT_NEAR(lambda / n, 0.5, 0.01);
  // Beta(1/4, 1/4) is bimodal: most mass near 0 and 1.
  EXPECT_GT(extreme / n, 0.55);
  EXPECT_NEAR(nu / n, 0.35, 0.01);
}

TEST(WorldTest, SameSeedSameWorldDifferentSeedDifferentWorld) {
  WorldConfig c;
  c.num_pages = 50;
  c.horizon = 50;
  c.recall = Distribution::Constant(0.5);
  c.false_rate = Distribution::Constant(0.2);
  Instance a = GenerateInstance(c, 1, 3);
  Realization ra = Realize(c, a, 1, 3), rb = Realize(c, a, 1, 3), rc = Realize(c, a, 2, 3);
  EXPECT_EQ(ra.change_times, rb.change_times);
  EXPECT_EQ(ra.signal_time, rb.signal_time);
  EXPECT_NE(ra.change_times, rc.change_times);
  // A page's process does not depend on how many pages there are.
  WorldConfig bigger = c;
  bigger.num_pages = 80;
  Instance big = GenerateInstance(bigger, 1, 3);
  EXPECT_EQ(big.pages[10].change_rate, a.pages[10].change_rate);
  Realization rbig = Realize(bigger, big, 1, 3);
  EXPECT_EQ(rbig.change_begin[11] - rbig.change_begin[10],
            ra.change_begin[11] - ra.change_begin[10]);
}

TEST(WorldTest, ProcessRatesMatchTheModel) {
  WorldConfig c;
  c.num_pages = 1;
  c.horizon = 20000;
  c.bandwidth = BandwidthSchedule::Constant(10);
  Instance inst;
  inst.pages.push_back({1.0, 0.8, 0.25, 0.3});
  Realization r = Realize(c, inst, 5, 0);
  const double changes = r.change_times.size() / c.horizon;
  EXPECT_NEAR(changes, 0.8, 4 * std::sqrt(0.8 / c.horizon));
  EXPECT_NEAR(r.num_true_signals / c.horizon, 0.2, 4 * std::sqrt(0.2 / c.horizon));
  EXPECT_NEAR(r.num_false_signals / c.horizon, 0.3, 4 * std::sqrt(0.3 / c.horizon));
  // Buckets: every signal lies in (t_{j-1}, t_j].
  for (size_t j = 0; j < r.slot_times.size(); ++j) {
    for (int64_t k = r.signal_begin[j]; k < r.signal_begin[j + 1]; ++k) {
      ASSERT_LE(r.signal_time[k], r.slot_times[j]);
      if (j > 0) {
        ASSERT_GT(r.signal_time[k], r.slot_times[j - 1]);
      }
    }
  }
}

TEST(WorldTest, PoissonDelayIsWholeSlots) {
  WorldConfig c;
  c.num_pages = 1;
  c.horizon = 5000;
  c.delay = {SignalDelay::Kind::kPoissonSlots, 6};
  Instance inst;
  inst.pages.push_back({1.0, 1.0, 1.0, 0.0});
  Realization r = Realize(c, inst, 9, 0);
  ASSERT_EQ(r.num_true_signals, static_cast<int64_t>(r.signal_time.size()));
  // λ = 1: the k-th signal belongs to the k-th change (signals past the last
  // slot are dropped, only at the end).
  // Every signal trails its change by k/R; the mean of k is 6.
  std::vector<double> sig(r.signal_time);
  std::sort(sig.begin(), sig.end());
  double total_delay = 0;
  for (double s : sig) total_delay += s;
  double total_change = 0;
  for (size_t k = 0; k < sig.size(); ++k) total_change += r.change_times[k];
  EXPECT_NEAR((total_delay - total_change) / sig.size() * 100, 6.0, 0.3);
}

WorldConfig Fig6Config(int m) {
  WorldConfig c;
  c.num_pages = m;
  c.recall = Distribution::Beta(0.25, 0.25);
  c.false_rate = Distribution::Uniform(0.1, 0.6);
  return c;
}

TEST(HostStructureTest, OffLeavesTheInstanceAsItIs) {
  const WorldConfig c = Fig6Config(100);
  Instance inst = GenerateInstance(c, 3, 1);
  const Instance before = inst;
  AddHostStructure(HostStructure(), 3, 1, &inst);
  EXPECT_TRUE(inst.host.empty());
  for (int i = 0; i < c.num_pages; ++i) {
    EXPECT_EQ(inst.pages[i].change_rate, before.pages[i].change_rate);
    EXPECT_EQ(inst.pages[i].recall, before.pages[i].recall);
  }
}

TEST(HostStructureTest, HostsHaveZipfSizesAndSharedParameters) {
  const WorldConfig c = Fig6Config(10000);
  HostStructure hosts;
  hosts.mean_pages_per_host = 20;
  hosts.noise = 0.1;
  Instance inst = GenerateInstance(c, 5, 0);
  const std::vector<double> mu = [&] {
    std::vector<double> v;
    for (const auto& p : inst.pages) v.push_back(p.importance);
    return v;
  }();
  AddHostStructure(hosts, 5, 0, &inst);
  ASSERT_EQ(inst.host.size(), 10000u);
  std::vector<int> size(500, 0);
  std::vector<std::vector<int>> pages(500);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_GE(inst.host[i], 0);
    ASSERT_LT(inst.host[i], 500);
    ++size[inst.host[i]];
    pages[inst.host[i]].push_back(i);
    EXPECT_EQ(inst.pages[i].importance, mu[i]);  // μ stays the page's
  }
  // P(h) ∝ 1/(h + 1): host 0 has 1/H_500 ≈ 15% of the pages, host 9 a
  // tenth of that.
  EXPECT_NEAR(size[0], 10000 / 6.79, 150);
  EXPECT_NEAR(size[9], 10000 / 67.9, 50);
  // Within a host, Δ varies by the noise (log sd 0.1); across hosts by far more.
  for (int h : {0, 1, 2}) {
    double s = 0, s2 = 0;
    for (int i : pages[h]) {
      const double l = std::log(inst.pages[i].change_rate);
      s += l;
      s2 += l * l;
    }
    const double n = pages[h].size();
    EXPECT_NEAR(std::sqrt(s2 / n - (s / n) * (s / n)), 0.1, 0.03);
  }
  // Deterministic in (seed, instance).
  Instance again = GenerateInstance(c, 5, 0);
  AddHostStructure(hosts, 5, 0, &again);
  EXPECT_EQ(again.host, inst.host);
  EXPECT_EQ(again.pages[17].false_rate, inst.pages[17].false_rate);
}

TEST(HostStructureTest, BadOptionsNameTheField) {
  HostStructure h;
  h.mean_pages_per_host = -1;
  EXPECT_NE(CheckHostStructure(h).message().find("mean_pages_per_host"), std::string::npos);
  h = HostStructure();
  h.noise = std::nan("");
  EXPECT_NE(CheckHostStructure(h).message().find("noise"), std::string::npos);
  h = HostStructure();
  h.zipf_exponent = -2;
  EXPECT_NE(CheckHostStructure(h).message().find("zipf_exponent"), std::string::npos);
  EXPECT_TRUE(CheckHostStructure(HostStructure()).ok());
}

TEST(BandwidthTest, SlotsFollowTheSchedule) {
  BandwidthSchedule b{{0, 1, 2}, {10, 20, 10}};
  std::vector<double> t = b.SlotTimes(3);
  EXPECT_EQ(t.size(), 10u + 20u + 10u);
  EXPECT_NEAR(t[9], 1.0, 1e-12);
  EXPECT_NEAR(t[29], 2.0, 1e-12);
  EXPECT_NEAR(t.back(), 3.0, 1e-12);
  EXPECT_EQ(b.At(1.5), 20);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
