// Estimator convergence through the shard: URLs with
// known change models, wrong priors, signals and crawl reports as a crawler
// and its pingers would send them; after enough crawls the shard's
// estimates of Δ, λ, ν are within 10% of the truth.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

struct Page {
  std::string url;
  double change_rate;  // Δ per second
  double recall;       // λ
  double false_rate;   // ν per second
  double last_crawl;
  uint32_t crawls = 0;
};

class ShardLearningTest : public testing::ShardTest {
 protected:
  static constexpr double kDay = 86400.0;

  // A source that signals a page's changes: each with probability
  // `recall`, stamped `delay` seconds after it.
  struct Announcer {
    SignalSource source;
    double recall;
    double delay;
  };

  // `n` pages of one host (`prefix` and a number) that change daily, last
  // crawled now_ and registered with the default prior.
  std::vector<Page> AddDailyPages(const std::string& prefix, int n) {
    std::vector<Page> pages;
    std::vector<UrlSpec> specs;
    for (int i = 0; i < n; ++i) {
      Page p;
      p.url = absl::StrCat(prefix, i);
      p.change_rate = 1.0 / kDay;
      p.last_crawl = now_;
      pages.push_back(p);
      specs.push_back(Spec(p.url));
    }
    EXPECT_EQ(Upsert(specs).result().applied(), static_cast<uint32_t>(n));
    return pages;
  }

  // `rounds` rounds of one crawl of every page, each 0.5-1.5 days after its
  // last. Meanwhile its changes are signalled by `announcers` and its
  // sitemap sends one false signal a day; the signals arrive in the order
  // they were sent, and the crawl reports whether the page changed.
  // `crawled`, if given, is called after each crawl with its page (before
  // its last_crawl and crawls count the crawl) and the interval's signals.
  void CrawlRounds(
      std::vector<Page>* pages, int rounds, const std::vector<Announcer>& announcers,
      std::mt19937_64* rng,
      const std::function<void(const Page&, const std::vector<Signal>&)>& crawled = nullptr) {
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    for (int r = 0; r < rounds; ++r) {
      for (Page& p : *pages) {
        const double t = p.last_crawl + (0.5 + u01(*rng)) * kDay;
        const double tau = t - p.last_crawl;
        std::vector<Signal> signals;
        const int changes = std::poisson_distribution<int>(p.change_rate * tau)(*rng);
        for (int k = 0; k < changes; ++k) {
          const double at = p.last_crawl + u01(*rng) * (tau - 60.0);
          for (const Announcer& a : announcers) {
            if (u01(*rng) < a.recall) signals.push_back(MakeSignal(p.url, at + a.delay, a.source));
          }
        }
        for (int k = std::poisson_distribution<int>(tau / kDay)(*rng); k > 0; --k) {
          signals.push_back(
              MakeSignal(p.url, p.last_crawl + u01(*rng) * tau, SIGNAL_SOURCE_SITEMAP));
        }
        std::sort(signals.begin(), signals.end(),
                  [](const Signal& a, const Signal& b) { return a.time() < b.time(); });
        now_ = std::max(now_, t);
        if (!signals.empty()) Signals(signals);
        ASSERT_EQ(
            Report({ByUrl(p.url, t, changes > 0 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED)})
                .result()
                .applied(),
            1u);
        if (crawled) crawled(p, signals);
        p.last_crawl = t;
        ++p.crawls;
      }
    }
  }
};

TEST_F(ShardLearningTest, EstimatesConvergeOnSyntheticPopulation) {
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  const int kPages = 30;
  const int kCrawlsPerPage = 8000;
  std::vector<Page> pages;
  std::vector<UrlSpec> specs;
  for (int i = 0; i < kPages; ++i) {
    Page p;
    p.url = absl::StrCat("https://site", i, ".example/page");
    p.change_rate = (1.0 + 3.0 * u01(rng)) * 1e-3;
    p.recall = 0.3 + 0.6 * u01(rng);
    p.false_rate = (0.1 + 0.5 * u01(rng)) * p.change_rate;
    p.last_crawl = now_;
    pages.push_back(p);
    specs.push_back(Spec(p.url));  // the shard's defaults: 1/day, λ 0.5
  }
  ASSERT_EQ(Upsert(specs).result().applied(), static_cast<uint32_t>(kPages));

  // Crawls in time order; each page is recrawled after a random interval
  // spread over a factor of 30 around its change interval, so pages that
  // change faster are crawled more often (kCrawlsPerPage on average).
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> due;
  auto schedule = [&](int i) {
    const double x = std::log(0.1) + u01(rng) * std::log(30.0);
    due.push({pages[i].last_crawl + std::exp(x) / pages[i].change_rate, i});
  };
  for (int i = 0; i < kPages; ++i) schedule(i);
  int64_t sent = 0, mistaken = 0;
  for (int64_t n = 0; n < int64_t{kPages} * kCrawlsPerPage; ++n) {
    const auto [t, i] = due.top();
    due.pop();
    Page& p = pages[i];
    const double tau = t - p.last_crawl;
    // What happened since the last crawl: changes (some signalled) and
    // false signals, at uniform times in the interval.
    std::poisson_distribution<int> changes(p.change_rate * tau);
    std::poisson_distribution<int> false_signals(p.false_rate * tau);
    const int c = changes(rng);
    std::vector<Signal> signals;
    for (int k = 0; k < c; ++k) {
      if (u01(rng) < p.recall) {
        signals.push_back(MakeSignal(p.url, p.last_crawl + u01(rng) * tau));
      }
    }
    for (int k = false_signals(rng); k > 0; --k) {
      signals.push_back(MakeSignal(p.url, p.last_crawl + u01(rng) * tau));
    }
    now_ = t;
    if (!signals.empty()) {
      const SignalBatchAck ack = Signals(signals);
      ASSERT_EQ(ack.counted() + ack.duplicate(), signals.size());
      sent += signals.size();
      mistaken += ack.duplicate();  // Bloom false positives (signal_keys.h)
    }
    const ReportCrawlsResponse r =
        Report({ByUrl(p.url, t, c > 0 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED)});
    ASSERT_EQ(r.result().applied(), 1u);
    p.last_crawl = t;
    ++p.crawls;
    schedule(i);
  }

  int within[3] = {0, 0, 0};
  for (const Page& p : pages) {
    const UrlState s = State(p.url);
    EXPECT_EQ(s.observed_crawls(), p.crawls);
    const double err[3] = {std::abs(s.estimate().change_rate() / p.change_rate - 1.0),
                           std::abs(s.estimate().recall() / p.recall - 1.0),
                           std::abs(s.estimate().false_rate() / p.false_rate - 1.0)};
    for (int k = 0; k < 3; ++k) within[k] += err[k] <= 0.10;
  }
  std::printf(
      "within 10%% after %d crawls a URL on average: Δ %d, λ %d, "
      "ν %d of %d URLs; %lld of %lld signals taken for duplicates\n",
      kCrawlsPerPage, within[0], within[1], within[2], kPages, static_cast<long long>(mistaken),
      static_cast<long long>(sent));
  EXPECT_LT(mistaken, 0.005 * sent);
  // Sampling error leaves the odd URL outside 10% (learning_test.cc has
  // the larger population).
  EXPECT_GE(within[0], kPages - 1);
  EXPECT_GE(within[1], kPages - 2);
  EXPECT_GE(within[2], kPages - 3);
  const ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.estimator().urls_learning(), static_cast<uint64_t>(kPages));
  EXPECT_EQ(stats.estimator().rejected_fits(), 0u);
  EXPECT_DOUBLE_EQ(stats.estimator().mean_observed_crawls(), kCrawlsPerPage);

  // What was learnt survives a restart.
  const UrlState before = State(pages[0].url);
  Open();
  const UrlState after = State(pages[0].url);
  EXPECT_DOUBLE_EQ(after.estimate().change_rate(), before.estimate().change_rate());
  EXPECT_EQ(after.observed_crawls(), before.observed_crawls());
}

// A URL whose crawl found a change after a long interval and which its
// ranked model puts below the pick level (probe_queue.h) is leased once more
// at Λ/μ after the crawl, ahead of the argmax. The probe's own change
// schedules no other; a crawl before a probe is due drops it.
TEST_F(ShardLearningTest, ChangedUrlBelowTheLevelIsProbedSoonAfter) {
  const std::string low = "https://low.example/a";
  Add("https://high.example/1");
  Add("https://high.example/2");
  const double importance = 0.25;  // exact as the shard's float
  Add(low, importance);
  now_ += 30 * 86400.0;
  const LeaseResponse first = Lease(1);
  ASSERT_EQ(first.leases_size(), 1);
  ASSERT_NE(first.leases(0).url(), low);
  const double level = first.leases(0).value();  // Λ after one pick
  const double delay = level / importance;
  ASSERT_LT(delay, 30 * 86400.0);  // shorter than the interval crawled

  ASSERT_EQ(Report({ByUrl(low, now_, CRAWL_OUTCOME_CHANGED)}).result().applied(), 1u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().probes_pending(), 1u);
  const double probe_at = now_ + delay;

  now_ = probe_at - 1.0;
  const LeaseResponse before = Lease(1);
  ASSERT_EQ(before.leases_size(), 1);
  EXPECT_NE(before.leases(0).url(), low);  // the other high URL
  EXPECT_EQ(shard_->GetStats(now_).estimator().probe_leases_total(), 0u);

  now_ = probe_at;
  const LeaseResponse probe = Lease(1);
  ASSERT_EQ(probe.leases_size(), 1);
  EXPECT_EQ(probe.leases(0).url(), low);
  EXPECT_EQ(shard_->GetStats(now_).estimator().probe_leases_total(), 1u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().probes_pending(), 0u);

  // Changed within the probe's interval: that was the probe's question.
  ASSERT_EQ(
      Report({ByLease(probe.leases(0).lease_id(), now_, CRAWL_OUTCOME_CHANGED)}).result().applied(),
      1u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().probes_pending(), 0u);

  // Changed after a long interval again: a probe; an unchanged crawl before
  // it is due makes it moot.
  now_ += 200 * 86400.0;
  ASSERT_EQ(Report({ByUrl(low, now_, CRAWL_OUTCOME_CHANGED)}).result().applied(), 1u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().probes_pending(), 1u);
  now_ += 10.0;
  ASSERT_EQ(Report({ByUrl(low, now_, CRAWL_OUTCOME_UNCHANGED)}).result().applied(), 1u);
  now_ += 1e9;
  Lease(3);
  const ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.estimator().probe_leases_total(), 1u);
  EXPECT_EQ(stats.estimator().probes_pending(), 0u);
}

// Per-source trust (host_trust.h): one host's pages get CDN purges for 90%
// of their changes and almost nothing else, and sitemap lastmods that move
// about once a day whether or not the page changed. The shard learns which
// source to trust from its crawls, pooled over the host, and keeps it across
// a crash (up to its last unwritten intervals) and a graceful restart.
TEST_F(ShardLearningTest, LearnsPerSourceTrustPerHostAndKeepsItAcrossRestarts) {
  std::mt19937_64 rng(7);
  std::vector<Page> pages = AddDailyPages("https://news.example/story", 40);
  const int kPages = static_cast<int>(pages.size());
  ASSERT_EQ(Upsert({Spec("https://other.example/")}).result().applied(), 1u);
  // Rounds of one crawl of every page, each about a day after its last.
  // The host learns from the intervals known by source, from the first in
  // which a second source has signalled on (host_trust.h).
  int64_t known_intervals = 0;
  uint32_t sources_signalled = 0;
  auto crawl_rounds = [&](int rounds) {
    CrawlRounds(&pages, rounds, {{SIGNAL_SOURCE_CDN, 0.9, 0.0}}, &rng,
                [&](const Page& p, const std::vector<Signal>& signals) {
                  // A page's first interval has no split by source (it had
                  // no crawl state before its first crawl).
                  if (p.crawls == 0) return;
                  for (const Signal& s : signals) sources_signalled |= 1u << s.source();
                  if (__builtin_popcount(sources_signalled) >= 2) ++known_intervals;
                });
  };
  crawl_rounds(30);
  const UrlState state = State(pages[0].url);
  ASSERT_TRUE(state.has_host_trust());
  const HostSourceTrust& trust = state.host_trust();
  EXPECT_EQ(trust.crawls(), static_cast<uint64_t>(known_intervals));
  ASSERT_EQ(trust.sources_size(), 5);
  const SourceTrust& sitemap = trust.sources(0);
  const SourceTrust& cdn = trust.sources(1);
  EXPECT_EQ(sitemap.source(), SIGNAL_SOURCE_SITEMAP);
  EXPECT_EQ(cdn.source(), SIGNAL_SOURCE_CDN);
  std::printf(
      "after %lld intervals: CDN λ %.3f ν %.4f/day (%.0f signals), sitemap λ %.3f ν %.3f/day "
      "(%.0f signals)\n",
      static_cast<long long>(known_intervals), cdn.recall(), cdn.false_rate() * kDay, cdn.signals(),
      sitemap.recall(), sitemap.false_rate() * kDay, sitemap.signals());
  double mean_rate = 0.0;
  for (const Page& p : pages) mean_rate += State(p.url).estimate().change_rate() * kDay / kPages;
  std::printf("pages' own Δ estimates: mean %.3f/day (truth 1)\n", mean_rate);
  EXPECT_GT(cdn.recall(), 0.75);
  EXPECT_LT(cdn.false_rate() * kDay, 0.1);
  EXPECT_GT(sitemap.false_rate() * kDay, 0.7);
  EXPECT_LT(sitemap.recall(), cdn.recall());
  EXPECT_FALSE(State("https://other.example/").has_host_trust());
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_learning_trust(), 1u);

  // The sitemap's signals are worth a small share of the CDN's: the host's
  // pages are ranked by the CDN's (λ, ν) and sitemap signals no longer
  // count in ranking.
  EXPECT_TRUE(cdn.trusted());
  EXPECT_FALSE(sitemap.trusted());
  // (as fitted at the host's 1,024th interval; host_trust reports a fit of
  // all 1,156)
  EXPECT_NEAR(state.ranked().recall(), cdn.recall(), 0.01);
  EXPECT_NEAR(state.ranked().false_rate() / cdn.false_rate(), 1.0, 0.25);
  EXPECT_NEAR(state.ranked().change_rate(), state.estimate().change_rate(), 1e-6);
  const std::string& url = pages[1].url;
  now_ += 600;
  const double before = State(url).crawl_value();
  Signals({MakeSignal(url, now_, SIGNAL_SOURCE_SITEMAP)});
  EXPECT_EQ(State(url).crawl_value(), before);
  EXPECT_EQ(State(url).signals_since_crawl(), 1u);  // counted for learning
  Signals({MakeSignal(url, now_, SIGNAL_SOURCE_CDN)});
  const double signalled = State(url).crawl_value();
  EXPECT_GT(signalled, before * 1.5);
  Open();  // the choice is kept across a restart
  EXPECT_EQ(State(pages[0].url).ranked().recall(), state.ranked().recall());
  EXPECT_FALSE(State(pages[0].url).host_trust().sources(0).trusted());
  // The journal kept each signal's source: the sitemap's still does not
  // count in ranking.
  EXPECT_EQ(State(url).signals_since_crawl(), 2u);
  EXPECT_NEAR(State(url).crawl_value(), signalled, 1e-9 * signalled);
  // A page's model learns from the signals it is ranked by: the crawl that
  // ends an interval of two sitemap signals and a CDN purge learns one.
  Page& other = pages[2];
  Signals({MakeSignal(other.url, now_ - 3, SIGNAL_SOURCE_SITEMAP),
           MakeSignal(other.url, now_ - 2, SIGNAL_SOURCE_CDN),
           MakeSignal(other.url, now_ - 1, SIGNAL_SOURCE_SITEMAP)});
  EXPECT_EQ(State(other.url).signals_since_crawl(), 3u);
  now_ += 60;
  ASSERT_EQ(Report({ByUrl(other.url, now_, CRAWL_OUTCOME_CHANGED)}).result().applied(), 1u);
  other.last_crawl = now_;
  ++other.crawls;
  ++known_intervals;
  const UrlState crawled = State(other.url);
  ASSERT_GT(crawled.recent_outcomes_size(), 0);
  EXPECT_EQ(crawled.recent_outcomes(crawled.recent_outcomes_size() - 1).signals(), 1u);

  // A crash loses at most the host's last 255 intervals (here: since the
  // re-choice at 1,024 and the write at 1,024).
  Open();
  uint64_t restored = State(pages[0].url).host_trust().crawls();
  EXPECT_LE(restored, static_cast<uint64_t>(known_intervals));
  EXPECT_GE(restored + 255, static_cast<uint64_t>(known_intervals));
  known_intervals = static_cast<int64_t>(restored);
  // The intervals open at the crash, signals and their sources in the
  // journal, are learnt from at the pages' next crawls.
  crawl_rounds(1);
  const uint64_t after_crash = State(pages[0].url).host_trust().crawls();
  EXPECT_EQ(after_crash, restored + kPages);
  crawl_rounds(2);
  ASSERT_TRUE(shard_->Flush().ok());
  const uint64_t flushed = State(pages[0].url).host_trust().crawls();
  EXPECT_EQ(flushed, after_crash + 2 * kPages);
  Open();
  EXPECT_EQ(State(pages[0].url).host_trust().crawls(), flushed);
}

// A sitemap stamps half of the changes a CDN purges (90%), 20 s after the
// purge, and sends one false signal a day. Matched as one change's (joint
// events), the sitemap is learnt as what it is; unmatched
// (joint_signal_window 0), its signals that come with the CDN's go to its
// false rate and its recall is learnt as about 0 (as in host_trust_test).
// A joint event still open at a restart is kept through the journal's fold.
TEST_F(ShardLearningTest, MatchesOneChangesSignalsFromTwoSources) {
  for (const double window : {60.0, 0.0}) {
    options_.joint_signal_window = window;
    options_.journal_window = 2;
    Recreate();
    std::mt19937_64 rng(11);
    std::vector<Page> pages = AddDailyPages("https://shop.example/item", 40);
    CrawlRounds(&pages, 30, {{SIGNAL_SOURCE_CDN, 0.9, 0.0}, {SIGNAL_SOURCE_SITEMAP, 0.5, 20.0}},
                &rng);
    const HostSourceTrust trust = State(pages[0].url).host_trust();
    ASSERT_EQ(trust.sources_size(), 5);
    const SourceTrust& sitemap = trust.sources(0);
    const SourceTrust& cdn = trust.sources(1);
    std::printf("window %.0f s, %llu intervals: CDN λ %.3f ν %.4f/day, sitemap λ %.3f ν %.3f/day\n",
                window, static_cast<unsigned long long>(trust.crawls()), cdn.recall(),
                cdn.false_rate() * kDay, sitemap.recall(), sitemap.false_rate() * kDay);
    EXPECT_EQ(shard_->GetStats(now_).estimator().rejected_trust_intervals(), 0u);
    EXPECT_NEAR(cdn.recall(), 0.9, 0.06);
    if (window == 0.0) {
      EXPECT_LT(sitemap.recall(), 0.15);
      EXPECT_GT(sitemap.false_rate() * kDay, 1.3);
      continue;
    }
    EXPECT_NEAR(sitemap.recall(), 0.5, 0.12);
    EXPECT_NEAR(sitemap.false_rate() * kDay, 1.0, 0.25);

    // One change's purge and sitemap signal, folded into the journal (its
    // window is 2 batches) and restarted across: the crawl learns one joint
    // event, no single-source event of either.
    Page& q = pages[1];
    now_ += 100;
    Signals({MakeSignal(q.url, now_, SIGNAL_SOURCE_CDN)});
    Signals({MakeSignal(q.url, now_ + 20, SIGNAL_SOURCE_SITEMAP)});
    for (int k = 0; k < 3; ++k) Signals({MakeSignal(pages[2].url, now_ + 30 + k)});
    ASSERT_TRUE(shard_->Flush().ok());  // a graceful stop keeps every interval
    Open();
    EXPECT_EQ(State(q.url).signals_since_crawl(), 2u);
    now_ += 60;
    ASSERT_EQ(Report({ByUrl(q.url, now_, CRAWL_OUTCOME_CHANGED)}).result().applied(), 1u);
    const HostSourceTrust after = State(q.url).host_trust();
    EXPECT_EQ(after.crawls(), trust.crawls() + 1);
    EXPECT_EQ(after.sources(1).signals(), trust.sources(1).signals());
    EXPECT_EQ(after.sources(0).signals(), trust.sources(0).signals());
  }
}

// A host whose CDN purges (90%) and IndexNow pings (80%) both announce its
// changes, 5 s apart, and whose sitemap only moves daily: both announcing
// sources are trusted, and the host's pages are ranked by their merged
// stream, which counts a change once. A change both announce leaves a
// page's crawl value where the first signal put it, and still so after a
// restart; a second change raises it.
TEST_F(ShardLearningTest, RanksAChangeTwoTrustedSourcesSignalOnce) {
  std::mt19937_64 rng(5);
  std::vector<Page> pages = AddDailyPages("https://news.example/post", 40);
  CrawlRounds(&pages, 30, {{SIGNAL_SOURCE_CDN, 0.9, 0.0}, {SIGNAL_SOURCE_INDEXNOW, 0.8, 5.0}},
              &rng);
  const HostSourceTrust trust = State(pages[0].url).host_trust();
  std::printf("CDN λ %.3f, IndexNow λ %.3f, sitemap λ %.3f ν %.3f/day\n", trust.sources(1).recall(),
              trust.sources(2).recall(), trust.sources(0).recall(),
              trust.sources(0).false_rate() * kDay);
  ASSERT_TRUE(trust.sources(1).trusted());   // CDN
  ASSERT_TRUE(trust.sources(2).trusted());   // IndexNow
  ASSERT_FALSE(trust.sources(0).trusted());  // sitemap

  now_ += 600;
  const std::string& once = pages[1].url;
  const double before = State(once).crawl_value();
  Signals({MakeSignal(once, now_ - 10, SIGNAL_SOURCE_CDN)});
  const double signalled = State(once).crawl_value();
  EXPECT_GT(signalled, before * 1.5);
  Signals({MakeSignal(once, now_ - 5, SIGNAL_SOURCE_INDEXNOW)});
  EXPECT_EQ(State(once).signals_since_crawl(), 2u);
  EXPECT_EQ(State(once).crawl_value(), signalled);  // the same change
  // Another change, IndexNow first this time, then the CDN.
  const std::string& twice = pages[2].url;
  Signals({MakeSignal(twice, now_ - 500, SIGNAL_SOURCE_INDEXNOW)});
  Signals({MakeSignal(twice, now_ - 498, SIGNAL_SOURCE_CDN)});
  const double joint_first = State(twice).crawl_value();
  Signals({MakeSignal(twice, now_ - 10, SIGNAL_SOURCE_CDN)});
  // A second change: near the ceiling μ/Δ already (the merged stream's
  // signals are near proof), but higher.
  EXPECT_GT(State(twice).crawl_value(), joint_first);
  const double two_changes = State(twice).crawl_value();
  ASSERT_TRUE(shard_->Flush().ok());
  Open();
  EXPECT_NEAR(State(once).crawl_value(), signalled, 1e-9 * signalled);
  EXPECT_NEAR(State(twice).crawl_value(), two_changes, 1e-9 * two_changes);
}

// Host pooling (host_prior_table.h): the pages of one host change hourly,
// far from the shard's default of daily. Once the host's crawls have been
// pooled, a new URL of the host is ranked from the host's prior, not the
// default; a URL of another host, or one given its own prior, is not.
TEST_F(ShardLearningTest, NewUrlsOfALearntHostStartFromItsPooledPrior) {
  options_.pool_host_priors = true;
  Recreate();
  constexpr double kHour = 3600.0;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::vector<UrlSpec> specs;
  for (int i = 0; i < 20; ++i) specs.push_back(Spec(absl::StrCat("https://hourly.example/", i)));
  ASSERT_EQ(Upsert(specs).result().applied(), 20u);
  std::vector<double> last(20, now_);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20; ++i) {
      const double t = last[i] + (0.5 + u01(rng)) * kHour;
      const bool changed = u01(rng) < 1.0 - std::exp(-(t - last[i]) / kHour);
      now_ = std::max(now_, t);
      ASSERT_EQ(Report({ByUrl(absl::StrCat("https://hourly.example/", i), t,
                              changed ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED)})
                    .result()
                    .applied(),
                1u);
      last[i] = t;
    }
  }
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_pooled(), 1u);
  ASSERT_EQ(Upsert({Spec("https://hourly.example/new"), Spec("https://daily.example/new"),
                    Spec("https://hourly.example/own", 1.0, 2.0 / 86400, 0.5, 0.1 / 86400)})
                .result()
                .applied(),
            3u);
  const double pooled = State("https://hourly.example/new").ranked().change_rate();
  const double other = State("https://daily.example/new").ranked().change_rate();
  const double own = State("https://hourly.example/own").ranked().change_rate();
  std::printf(
      "ranked Δ of a new URL: %.2f/h on the learnt host, %.3f/h on another, %.3f/h with "
      "its own prior\n",
      pooled * kHour, other * kHour, own * kHour);
  EXPECT_GT(pooled * kHour, 0.3);  // the host's: about hourly
  EXPECT_LT(other * kHour, 0.2);   // the default, daily, made optimistic
  EXPECT_LT(own * kHour, 0.2);     // its own prior, twice daily, made optimistic
  EXPECT_GT(own, other);
  // The host's pooled prior is kept across a crash.
  Open();
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_pooled(), 1u);
  EXPECT_EQ(State("https://hourly.example/new").ranked().change_rate(), pooled);
}

// A host whose outcomes are all one page's is not pooled; its second
// crawled page pools both, also after a restart, which finds the first
// page again from its record.
TEST_F(ShardLearningTest, PoolsAHostFromItsSecondCrawledPageAcrossARestart) {
  options_.pool_host_priors = true;
  Recreate();
  constexpr double kHour = 3600.0;
  ASSERT_EQ(
      Upsert({Spec("https://often.example/a"), Spec("https://often.example/b")}).result().applied(),
      2u);
  for (int i = 0; i < 12; ++i) {
    now_ += 0.5 * kHour;
    ASSERT_EQ(
        Report({ByUrl("https://often.example/a", now_, CRAWL_OUTCOME_CHANGED)}).result().applied(),
        1u);
  }
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_pooled(), 0u);
  ASSERT_TRUE(shard_->Flush().ok());
  Open();
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_pooled(), 0u);
  now_ += 0.5 * kHour;
  ASSERT_EQ(
      Report({ByUrl("https://often.example/b", now_, CRAWL_OUTCOME_CHANGED)}).result().applied(),
      1u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().hosts_pooled(), 1u);
  // 13 outcomes, every half hour a change: fitted, and far from daily.
  ASSERT_EQ(Upsert({Spec("https://often.example/new"), Spec("https://other.example/new")})
                .result()
                .applied(),
            2u);
  const double pooled = State("https://often.example/new").ranked().change_rate();
  const double other = State("https://other.example/new").ranked().change_rate();
  EXPECT_GT(pooled, 3.0 * other);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
