#include "demo/simulated_web.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace demo {
namespace {

// Every change signalled, no false signals: the true signals are the
// change times, so a test can read the page's whole history from them.
SimulatedWebConfig FullySignalled(int pages, double rate, double horizon) {
  SimulatedWebConfig c;
  c.num_pages = pages;
  c.importance = sim::Distribution::Uniform(0.5, 2.0);
  c.change_rate = sim::Distribution::Constant(rate);
  c.signal_share = 1.0;
  c.recall = sim::Distribution::Constant(1.0);
  c.false_rate = sim::Distribution::Constant(0.0);
  c.horizon = horizon;
  c.windows = 4;
  c.seed = 7;
  return c;
}

// Change times of every page, from the true signals of a fully signalled
// copy of the web.
std::vector<std::vector<double>> ChangeTimes(const SimulatedWebConfig& c) {
  SimulatedWeb web = *SimulatedWeb::Create(c);
  std::vector<WebSignal> signals;
  web.PopSignalsUntil(c.horizon, &signals);
  std::vector<std::vector<double>> changes(c.num_pages);
  for (const WebSignal& s : signals) {
    EXPECT_TRUE(s.announces_change);
    changes[s.page].push_back(s.time);
  }
  return changes;
}

// Fresh time of a page over [0, end] fetched at `fetches` (increasing):
// from each fetch (and from 0) until the first change after it.
double FreshTime(const std::vector<double>& changes, const std::vector<double>& fetches,
                 double end) {
  std::vector<double> starts = {0.0};
  starts.insert(starts.end(), fetches.begin(), fetches.end());
  starts.push_back(end);
  double fresh = 0.0;
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    double until = starts[k + 1];
    for (double c : changes) {
      if (c > starts[k]) {
        until = std::min(until, c);
        break;
      }
    }
    fresh += until - starts[k];
  }
  return fresh;
}

TEST(SimulatedWebTest, RejectsBadConfigurationNamingTheField) {
  SimulatedWebConfig c;
  c.num_pages = 0;
  EXPECT_NE(SimulatedWeb::Create(c).status().message().find("num_pages"), std::string::npos);
  c = SimulatedWebConfig();
  c.signal_share = 1.5;
  EXPECT_NE(SimulatedWeb::Create(c).status().message().find("signal_share"), std::string::npos);
  c = SimulatedWebConfig();
  c.horizon = 0;
  EXPECT_NE(SimulatedWeb::Create(c).status().message().find("horizon"), std::string::npos);
  c = SimulatedWebConfig();
  c.windows = 0;
  EXPECT_NE(SimulatedWeb::Create(c).status().message().find("windows"), std::string::npos);
  c = SimulatedWebConfig();
  c.hosts = 0;
  EXPECT_NE(SimulatedWeb::Create(c).status().message().find("hosts"), std::string::npos);
}

TEST(SimulatedWebTest, UrlsRoundTrip) {
  SimulatedWebConfig c;
  c.num_pages = 1000;
  c.hosts = 7;
  SimulatedWeb web = *SimulatedWeb::Create(c);
  EXPECT_EQ(web.Url(15), "https://site1.example/page/15");
  for (int i : {0, 1, 999}) EXPECT_EQ(web.PageOfUrl(web.Url(i)), i);
  EXPECT_EQ(web.PageOfUrl("https://site1.example/page/1000"), -1);
  EXPECT_EQ(web.PageOfUrl("https://site1.example/page/x"), -1);
  EXPECT_EQ(web.PageOfUrl("https://site1.example/other/1"), -1);
}

TEST(SimulatedWebTest, FetchSaysWhetherThePageChangedSinceItsLastFetch) {
  const SimulatedWebConfig c = FullySignalled(50, 0.3, 40.0);
  const std::vector<std::vector<double>> changes = ChangeTimes(c);
  SimulatedWeb web = *SimulatedWeb::Create(c);
  const std::vector<double> fetches = {3.0, 3.5, 10.0, 22.0, 39.0};
  int64_t unchanged = 0;
  for (int i = 0; i < c.num_pages; ++i) {
    double previous = 0.0;
    for (double t : fetches) {
      bool expected = false;
      for (double ch : changes[i]) expected |= ch > previous && ch <= t;
      const FetchOutcome got = web.Fetch(i, t);
      EXPECT_EQ(got.changed, expected) << "page " << i << " at " << t;
      EXPECT_FALSE(got.out_of_order);
      unchanged += !expected;
      previous = t;
    }
  }
  EXPECT_EQ(web.counts().fetches, 50 * 5);
  EXPECT_EQ(web.counts().unchanged_fetches, unchanged);
  // Some of both, or the test shows nothing.
  EXPECT_GT(unchanged, 10);
  EXPECT_LT(unchanged, 240);
}

TEST(SimulatedWebTest, FreshnessIsTheImportanceWeightedFreshTime) {
  const SimulatedWebConfig c = FullySignalled(40, 0.2, 40.0);
  const std::vector<std::vector<double>> changes = ChangeTimes(c);
  SimulatedWeb web = *SimulatedWeb::Create(c);
  // Page i is fetched every (1 + i % 5) time units; page 0 never.
  std::vector<std::vector<double>> fetched(c.num_pages);
  for (int i = 1; i < c.num_pages; ++i) {
    for (double t = 1 + i % 5; t < 40.0; t += 1 + i % 5) fetched[i].push_back(t);
  }
  // Fetch in time order across pages, as fetchers do.
  for (double t = 0.5; t < 40.0; t += 0.5) {
    for (int i = 0; i < c.num_pages; ++i) {
      for (double f : fetched[i]) {
        if (f == t) web.Fetch(i, f);
      }
    }
  }
  double fresh = 0.0, total = 0.0;
  for (int i = 0; i < c.num_pages; ++i) {
    fresh += web.pages()[i].importance * FreshTime(changes[i], fetched[i], 40.0);
    total += web.pages()[i].importance * 40.0;
  }
  EXPECT_NEAR(web.FreshnessUntil(40.0), fresh / total, 1e-12);
  // The windows (10 time units each) average, weighted by length, to the
  // whole run's freshness.
  const double overall = web.FreshnessUntil(40.0);
  const std::vector<double> windows = web.CloseWindows(40.0);
  ASSERT_EQ(windows.size(), 4u);
  double mean = 0.0;
  for (double w : windows) {
    EXPECT_GE(w, 0.0);
    EXPECT_LE(w, 1.0);
    mean += w / 4;
  }
  EXPECT_NEAR(mean, overall, 1e-12);
}

TEST(SimulatedWebTest, WindowsOfAPartialRunAndOfPagesThatNeverChange) {
  SimulatedWebConfig c = FullySignalled(10, 1e-12, 100.0);
  c.windows = 10;
  SimulatedWeb web = *SimulatedWeb::Create(c);
  web.Fetch(3, 20.0);
  EXPECT_DOUBLE_EQ(web.FreshnessUntil(55.0), 1.0);
  const std::vector<double> windows = web.CloseWindows(55.0);
  for (int k = 0; k < 6; ++k) EXPECT_DOUBLE_EQ(windows[k], 1.0) << k;
  for (int k = 6; k < 10; ++k) EXPECT_TRUE(std::isnan(windows[k])) << k;
}

TEST(SimulatedWebTest, UnfetchedPagesAreFreshUntilTheirFirstChange) {
  const SimulatedWebConfig c = FullySignalled(30, 0.1, 20.0);
  const std::vector<std::vector<double>> changes = ChangeTimes(c);
  SimulatedWeb web = *SimulatedWeb::Create(c);
  double fresh = 0.0, total = 0.0;
  for (int i = 0; i < c.num_pages; ++i) {
    const double first = changes[i].empty() ? 20.0 : changes[i][0];
    fresh += web.pages()[i].importance * first;
    total += web.pages()[i].importance * 20.0;
  }
  EXPECT_NEAR(web.FreshnessUntil(20.0), fresh / total, 1e-12);
}

TEST(SimulatedWebTest, AFetchBeforeThePreviousOneIsTakenAtItsTime) {
  SimulatedWeb web = *SimulatedWeb::Create(FullySignalled(2, 0.5, 10.0));
  EXPECT_FALSE(web.Fetch(0, 5.0).out_of_order);
  const FetchOutcome late = web.Fetch(0, 4.0);
  EXPECT_TRUE(late.out_of_order);
  EXPECT_FALSE(late.changed);
  EXPECT_EQ(web.counts().out_of_order_fetches, 1);
}

// Counts of Poisson events over many pages, against their expectation:
// within 4 standard errors for this seed.
TEST(SimulatedWebTest, EventRatesMatchTheModel) {
  SimulatedWebConfig c;
  c.num_pages = 4000;
  c.importance = sim::Distribution::Constant(1.0);
  c.change_rate = sim::Distribution::Constant(0.5);
  c.signal_share = 0.25;
  c.recall = sim::Distribution::Constant(0.3);
  c.false_rate = sim::Distribution::Constant(0.2);
  c.horizon = 10.0;
  c.seed = 11;
  SimulatedWeb web = *SimulatedWeb::Create(c);

  int sources = 0;
  for (int i = 0; i < c.num_pages; ++i) sources += web.has_source(i);
  const double p = c.signal_share;
  EXPECT_NEAR(sources, p * c.num_pages, 4 * std::sqrt(c.num_pages * p * (1 - p)));

  std::vector<WebSignal> signals;
  web.PopSignalsUntil(c.horizon, &signals);
  for (size_t k = 1; k < signals.size(); ++k) {
    ASSERT_LE(signals[k - 1].time, signals[k].time);
  }
  for (const WebSignal& s : signals) EXPECT_TRUE(web.has_source(s.page));
  const double exposure = sources * c.horizon;
  const double true_mean = exposure * 0.5 * 0.3;
  const double false_mean = exposure * 0.2;
  EXPECT_NEAR(web.counts().true_signals, true_mean, 4 * std::sqrt(true_mean));
  EXPECT_NEAR(web.counts().false_signals, false_mean, 4 * std::sqrt(false_mean));
  EXPECT_EQ(web.counts().true_signals + web.counts().false_signals,
            static_cast<int64_t>(signals.size()));
  EXPECT_EQ(web.NextSignalTime(), std::numeric_limits<double>::infinity());

  // Changes: a page fetched at the horizon changed with probability
  // 1 − e^{−ΔT}.
  int changed = 0;
  for (int i = 0; i < c.num_pages; ++i) changed += web.Fetch(i, 10.0).changed;
  const double q = 1 - std::exp(-0.5 * 10.0);
  EXPECT_NEAR(changed, q * c.num_pages, 4 * std::sqrt(c.num_pages * q * (1 - q)));
  // Freshness of pages never fetched after 0: E[min(first change, T)]/T.
  const double expected = (1 - std::exp(-0.5 * 10.0)) / (0.5 * 10.0);
  SimulatedWeb unfetched = *SimulatedWeb::Create(c);
  // Sd of min(Exp(Δ), T)/T is at most 1/(ΔT); the mean of m has sd / √m.
  EXPECT_NEAR(unfetched.FreshnessUntil(10.0), expected, 4 / (0.5 * 10.0) / std::sqrt(c.num_pages));
}

TEST(SimulatedWebTest, APageHistoryDependsOnlyOnTheSeed) {
  SimulatedWebConfig c = FullySignalled(20, 0.4, 30.0);
  c.recall = sim::Distribution::Uniform(0.2, 0.9);
  c.false_rate = sim::Distribution::Constant(0.1);
  SimulatedWeb a = *SimulatedWeb::Create(c);
  SimulatedWeb b = *SimulatedWeb::Create(c);
  // b's other pages are fetched and its signals drained first: page 5's
  // answers must not move.
  std::vector<WebSignal> drained;
  b.PopSignalsUntil(30.0, &drained);
  for (int i = 0; i < 20; ++i) {
    if (i != 5) b.Fetch(i, 12.0);
  }
  for (double t : {4.0, 9.0, 17.0, 29.0}) {
    EXPECT_EQ(a.Fetch(5, t).changed, b.Fetch(5, t).changed) << t;
  }
  std::vector<WebSignal> again;
  SimulatedWeb d = *SimulatedWeb::Create(c);
  d.PopSignalsUntil(30.0, &again);
  ASSERT_EQ(drained.size(), again.size());
  for (size_t k = 0; k < again.size(); ++k) {
    EXPECT_EQ(drained[k].page, again[k].page);
    EXPECT_EQ(drained[k].time, again[k].time);
  }
  c.seed = 8;
  SimulatedWeb other = *SimulatedWeb::Create(c);
  std::vector<WebSignal> different;
  other.PopSignalsUntil(30.0, &different);
  EXPECT_FALSE(different.size() == again.size() && different[0].time == again[0].time);
}

}  // namespace
}  // namespace demo
}  // namespace recrawl
