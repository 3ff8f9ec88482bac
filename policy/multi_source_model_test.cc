#include "policy/multi_source_model.h"

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Kind = MultiSourceModel::SourceKind;

MultiSourceModel Make(double mu, double delta, std::vector<SourceParams> sources) {
  return *MultiSourceModel::Create({mu, delta, std::move(sources)});
}

TEST(MultiSourceModelTest, RatesMatchTheirDefinitions) {
  const MultiSourceModel p = Make(1, 0.8, {{0.9, 0.02}, {0.5, 1.2}});
  EXPECT_DOUBLE_EQ(p.alpha(), 0.8 * 0.1 * 0.5);
  EXPECT_DOUBLE_EQ(p.exclusive_rate(0), 0.8 * 0.9 * 0.5);
  EXPECT_DOUBLE_EQ(p.exclusive_rate(1), 0.8 * 0.5 * 0.1);
  EXPECT_DOUBLE_EQ(p.joint_rate(), 0.8 * 0.9 * 0.5);
  EXPECT_DOUBLE_EQ(p.absorbing_rate(), p.joint_rate());
  EXPECT_DOUBLE_EQ(p.signal_rate(1), 0.8 * 0.5 * 0.1 + 1.2);
  EXPECT_DOUBLE_EQ(p.log_signal_factor(0), std::log(p.signal_rate(0) / 0.02));
  EXPECT_DOUBLE_EQ(p.beta(1), p.log_signal_factor(1) / p.alpha());
  EXPECT_EQ(p.kind(0), Kind::kInformative);
  // Every change falls in exactly one class.
  EXPECT_NEAR(p.alpha() + p.exclusive_rate(0) + p.exclusive_rate(1) + p.joint_rate(), 0.8, 1e-15);
  // Three sources: joint = P(two or more of three signal).
  const MultiSourceModel q = Make(1, 2.0, {{0.3, 1}, {0.6, 1}, {0.2, 1}});
  const double joint = 0.3 * 0.6 * 0.8 + 0.3 * 0.4 * 0.2 + 0.7 * 0.6 * 0.2 + 0.3 * 0.6 * 0.2;
  EXPECT_NEAR(q.joint_rate(), 2.0 * joint, 1e-15);
}

// At most one source with λ > 0 is the paper's page, bit for bit.
TEST(MultiSourceModelTest, OneSignallingSourceIsThePageModelBitForBit) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const PageParams single{u(rng), 2 * u(rng), trial % 7 == 0 ? 1.0 : u(rng),
                            trial % 5 == 0 ? 0.0 : 2 * u(rng)};
    const PageModel page = *PageModel::Create(single);
    std::vector<SourceParams> sources;
    const int num = 1 + trial % 3;
    const int signalling = trial % num;
    for (int s = 0; s < num; ++s) {
      sources.push_back(s == signalling ? SourceParams{single.recall, single.false_rate}
                                        : SourceParams{0.0, 3 * u(rng)});
    }
    const MultiSourceModel multi = Make(single.importance, single.change_rate, sources);
    ASSERT_TRUE(MultiSourceModel::SingleSourceParams(multi.params()).has_value());
    EXPECT_EQ(MultiSourceModel::SingleSourceParams(multi.params())->recall, single.recall);
    EXPECT_EQ(multi.alpha(), page.alpha());
    EXPECT_EQ(multi.signal_rate(signalling), page.gamma());
    EXPECT_EQ(multi.log_signal_factor(signalling), page.log_signal_factor());
    EXPECT_EQ(multi.beta(signalling), page.beta());
    EXPECT_EQ(multi.joint_rate(), 0.0);
    const double tau = 5 * u(rng);
    for (int64_t n = 0; n < 4; ++n) {
      SourceSignals signals{std::vector<int64_t>(num, 0), 0};
      signals.counts[signalling] = n;
      for (int s = 0; s < num; ++s) {
        if (s != signalling) signals.counts[s] = trial % 4;  // noise: ignored
      }
      EXPECT_EQ(multi.FreshProbability(tau, signals), page.FreshProbability(tau, n));
      EXPECT_EQ(multi.EffectiveElapsed(tau, signals), page.EffectiveElapsed(tau, n));
    }
  }
}

TEST(MultiSourceModelTest, SourceKinds) {
  // λ = 0: noise; ν = 0: proof; another source with λ = 1: noise.
  const MultiSourceModel p = Make(1, 1, {{0.0, 0.5}, {0.4, 0.0}, {0.3, 0.2}});
  EXPECT_EQ(p.kind(0), Kind::kNoise);
  EXPECT_EQ(p.kind(1), Kind::kProof);
  EXPECT_EQ(p.kind(2), Kind::kInformative);
  EXPECT_EQ(p.beta(0), 0.0);
  EXPECT_EQ(p.beta(1), kInf);
  EXPECT_DOUBLE_EQ(p.absorbing_rate(), p.joint_rate() + p.exclusive_rate(1));
  EXPECT_EQ(p.FreshProbability(1.0, {{5, 0, 0}, 0}), std::exp(-p.alpha()));
  EXPECT_EQ(p.FreshProbability(1.0, {{0, 1, 0}, 0}), 0.0);
  EXPECT_EQ(p.FreshProbability(1.0, {{0, 0, 0}, 1}), 0.0);
  EXPECT_EQ(p.EffectiveElapsed(1.0, {{0, 0, 0}, 1}), kInf);
  EXPECT_DOUBLE_EQ(p.EffectiveElapsed(1.0, {{0, 0, 2}, 0}), 1.0 + 2 * p.beta(2));

  const MultiSourceModel full = Make(1, 1, {{1.0, 0.5}, {0.3, 0.2}});
  EXPECT_EQ(full.alpha(), 0.0);
  EXPECT_EQ(full.kind(0), Kind::kInformative);
  EXPECT_EQ(full.kind(1), Kind::kNoise);
  EXPECT_EQ(full.beta(0), kInf);
  EXPECT_DOUBLE_EQ(full.FreshProbability(7.0, {{2, 3}, 0}), std::pow(0.5 / full.signal_rate(0), 2));
}

TEST(MultiSourceModelTest, MergedIsTheDeduplicatedStream) {
  const MultiSourceModel p = Make(0.4, 0.8, {{0.9, 0.02}, {0.5, 1.2}});
  const PageModel merged = p.Merged();
  EXPECT_DOUBLE_EQ(merged.recall(), 1 - 0.1 * 0.5);
  EXPECT_DOUBLE_EQ(merged.false_rate(), 1.22);
  EXPECT_EQ(merged.importance(), 0.4);
  // Unsignalled changes are the same in both views.
  EXPECT_NEAR(merged.alpha(), p.alpha(), 1e-15);
}

TEST(MultiSourceModelTest, MergedOfTheTrustedSourcesDropsTheOthers) {
  const MultiSourceModel p = Make(0.4, 0.5, {{0.85, 0.03}, {0.5, 1.0}, {0.0, 0.3}});
  const PageModel all = p.MergedOf({true, true, true});
  EXPECT_EQ(all.recall(), p.Merged().recall());
  EXPECT_EQ(all.false_rate(), p.Merged().false_rate());
  const PageModel cdn = p.MergedOf({true, false, false});
  EXPECT_DOUBLE_EQ(cdn.recall(), 0.85);
  EXPECT_DOUBLE_EQ(cdn.false_rate(), 0.03);
  // A CDN-like source (w = log(1 + 0.85·0.5·0.5/0.03) ≈ 2.1) and a
  // sitemap-like one (w = log(1 + 0.5·0.5·0.15/1.0) ≈ 0.04): only the CDN is
  // worth listening to; the pure-noise third never is.
  EXPECT_EQ(p.TrustedSources(0.5), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(p.TrustedSources(0.01), (std::vector<bool>{true, true, false}));
  // Two alike sources are both trusted.
  EXPECT_EQ(Make(1, 0.5, {{0.6, 0.1}, {0.5, 0.1}}).TrustedSources(0.5),
            (std::vector<bool>{true, true}));
  // A proof source (ν = 0) outweighs every other.
  EXPECT_EQ(Make(1, 0.5, {{0.3, 0.0}, {0.9, 0.01}}).TrustedSources(0.5),
            (std::vector<bool>{true, false}));
  // No informative source: none.
  EXPECT_EQ(Make(1, 0.5, {{0.0, 0.1}}).TrustedSources(0.5), (std::vector<bool>{false}));
}

TEST(MultiSourceModelTest, RejectsInvalidValuesNamingTheField) {
  EXPECT_NE(MultiSourceModel::Create({-1, 1, {}}).status().message().find("importance"),
            std::string::npos);
  EXPECT_NE(MultiSourceModel::Create({1, NAN, {}}).status().message().find("change_rate"),
            std::string::npos);
  EXPECT_NE(MultiSourceModel::Create({1, 1, {{0.5, 0.1}, {1.5, 0.1}}})
                .status()
                .message()
                .find("sources[1].recall"),
            std::string::npos);
  EXPECT_NE(MultiSourceModel::Create({1, 1, {{0.5, kInf}}})
                .status()
                .message()
                .find("sources[0].false_rate"),
            std::string::npos);
  const MultiSourceModel p = Make(1, 1, {{0.5, 0.1}, {0.5, 0.1}});
  EXPECT_TRUE(p.CheckSignals({{1, 2}, 0}).ok());
  EXPECT_NE(p.CheckSignals({{1}, 0}).message().find("signals.counts"), std::string::npos);
  EXPECT_NE(p.CheckSignals({{1, -2}, 0}).message().find("signals.counts[1]"), std::string::npos);
  EXPECT_NE(p.CheckSignals({{1, 2}, -1}).message().find("signals.joint"), std::string::npos);
}

// (M2) against simulation: intervals of length τ of the page's processes,
// grouped by what a crawler observes (per-source counts, joint events), and
// the share of each group that had no change.
void CheckPosteriorBySimulation(const MultiSourceModel& page, double tau, int intervals,
                                uint64_t seed) {
  const int num = page.num_sources();
  std::mt19937_64 rng(seed);
  std::poisson_distribution<int> changes(page.change_rate() * tau);
  std::vector<std::poisson_distribution<int>> false_signals;
  for (const SourceParams& s : page.params().sources) {
    false_signals.emplace_back(s.false_rate * tau);
  }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  struct Tally {
    int64_t seen = 0;
    int64_t fresh = 0;
  };
  std::map<std::vector<int64_t>, Tally> tallies;
  for (int i = 0; i < intervals; ++i) {
    const int num_changes = changes(rng);
    std::vector<int64_t> counts(num, 0);
    int64_t joint = 0;
    for (int c = 0; c < num_changes; ++c) {
      int signalled = 0, last = -1;
      for (int s = 0; s < num; ++s) {
        if (u(rng) < page.params().sources[s].recall) {
          ++signalled;
          last = s;
        }
      }
      if (signalled == 1) ++counts[last];
      if (signalled >= 2) ++joint;
    }
    for (int s = 0; s < num; ++s) counts[s] += false_signals[s](rng);
    if (joint > 0) {
      // A joint event proves a change (M2).
      EXPECT_GT(num_changes, 0);
      continue;
    }
    Tally& tally = tallies[counts];
    ++tally.seen;
    if (num_changes == 0) ++tally.fresh;
  }
  int checked = 0;
  for (const auto& [counts, tally] : tallies) {
    if (tally.seen < 2000) continue;
    const double want = page.FreshProbability(tau, {counts, 0});
    const double got = static_cast<double>(tally.fresh) / tally.seen;
    const double stderr_ = std::sqrt(want * (1 - want) / tally.seen);
    EXPECT_NEAR(got, want, 4.5 * stderr_ + 1e-9)
        << "counts " << counts[0] << "," << counts[1] << " seen " << tally.seen;
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(MultiSourceModelTest, PosteriorMatchesSimulationTwoSources) {
  // An accurate source (CDN-like) and a noisy one (sitemap-like).
  CheckPosteriorBySimulation(Make(1, 0.7, {{0.8, 0.05}, {0.5, 0.9}}), 1.5, 1000000, 17);
}

TEST(MultiSourceModelTest, PosteriorMatchesSimulationThreeSources) {
  CheckPosteriorBySimulation(Make(1, 1.0, {{0.6, 0.1}, {0.4, 0.6}, {0.3, 0.3}}), 1.0, 1000000, 23);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
