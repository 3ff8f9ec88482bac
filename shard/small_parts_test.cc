// Signal keys and their per-URL filter; the stats' rate window.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "shard/rate_window.h"
#include "shard/signal_journal.h"
#include "shard/signal_keys.h"
#include "shard/string_interner.h"

namespace recrawl {
namespace shard {
namespace {

TEST(SignalKeysTest, KeyIdentifiesUrlTimeAndSource) {
  const uint64_t k = SignalKey(1, 100.5, SIGNAL_SOURCE_CDN);
  EXPECT_EQ(k, SignalKey(1, 100.5, SIGNAL_SOURCE_CDN));
  EXPECT_NE(k, SignalKey(2, 100.5, SIGNAL_SOURCE_CDN));
  EXPECT_NE(k, SignalKey(1, 100.25, SIGNAL_SOURCE_CDN));
  EXPECT_NE(k, SignalKey(1, 100.5, SIGNAL_SOURCE_SITEMAP));
  EXPECT_EQ(SignalKey(1, 3.0, SIGNAL_SOURCE_UNSPECIFIED),
            SignalKey(1, 3.0, SIGNAL_SOURCE_OTHER));
}

TEST(SignalKeysTest, FilterHasNoFalseNegatives) {
  uint64_t filter = 0;
  for (int i = 0; i < 8; ++i) {
    const uint64_t key = SignalKey(9, i, SIGNAL_SOURCE_INDEXNOW);
    AddSignal(key, &filter);
    for (int j = 0; j <= i; ++j) {
      EXPECT_TRUE(
          MayContainSignal(filter, SignalKey(9, j, SIGNAL_SOURCE_INDEXNOW)));
    }
  }
}

// The false-positive rates the header promises: (1 − e^{−4n/64})⁴.
TEST(SignalKeysTest, FalsePositiveRates) {
  std::mt19937_64 rng(5);
  for (int n : {1, 4, 8}) {
    const double expected = std::pow(1.0 - std::exp(-4.0 * n / 64), 4);
    int false_positives = 0;
    const int trials = 400000;
    for (int i = 0; i < trials; ++i) {
      uint64_t filter = 0;
      for (int k = 0; k < n; ++k) AddSignal(rng(), &filter);
      false_positives += MayContainSignal(filter, rng());
    }
    // Within a few standard deviations (and 50% for the rarest).
    const double sd = std::sqrt(expected * trials);
    EXPECT_NEAR(false_positives, expected * trials,
                std::max(5 * sd, 0.5 * expected * trials))
        << "n = " << n;
  }
}

TEST(SignalJournalTest, EntriesRoundTrip) {
  std::string entry;
  AppendJournalSignal({1, 2.5, 3}, &entry);
  AppendJournalState({9, 65535, ~uint64_t{0} - 1, 12.25f}, &entry);
  AppendJournalSignal({~uint64_t{0}, -0.0, 7}, &entry);
  AppendJournalLease({5, 77, 1234.5, "fetcher-1"}, &entry);
  AppendJournalLeaseEnd({6, 78}, &entry);
  AppendJournalLease({7, 79, 1.0, ""}, &entry);
  std::vector<JournalSignal> signals;
  std::vector<JournalState> states;
  std::vector<std::pair<JournalLease, std::string>> leases;
  std::vector<JournalLeaseEnd> ends;
  auto on_signal = [&](const JournalSignal& s) { signals.push_back(s); };
  auto on_state = [&](const JournalState& s) { states.push_back(s); };
  auto on_lease = [&](const JournalLease& l) {
    leases.emplace_back(l, std::string(l.holder));
  };
  auto on_end = [&](const JournalLeaseEnd& e) { ends.push_back(e); };
  const JournalVisitor visit{on_signal, on_state, on_lease, on_end};
  EXPECT_TRUE(ForEachJournalRecord(entry, visit));
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].url, 1u);
  EXPECT_EQ(signals[0].time, 2.5);
  EXPECT_EQ(signals[0].key, 3u);
  EXPECT_EQ(signals[1].url, ~uint64_t{0});
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].url, 9u);
  EXPECT_EQ(states[0].n_cis, 65535);
  EXPECT_EQ(states[0].filter, ~uint64_t{0} - 1);
  EXPECT_EQ(states[0].latest, 12.25f);
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[0].first.url, 5u);
  EXPECT_EQ(leases[0].first.id, 77u);
  EXPECT_EQ(leases[0].first.deadline, 1234.5);
  EXPECT_EQ(leases[0].second, "fetcher-1");
  EXPECT_EQ(leases[1].first.url, 7u);
  EXPECT_EQ(leases[1].second, "");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].url, 6u);
  EXPECT_EQ(ends[0].id, 78u);
  std::vector<UrlId> urls;
  EXPECT_TRUE(ForEachJournalUrl(entry, [&](UrlId url) { urls.push_back(url); }));
  EXPECT_EQ(urls, (std::vector<UrlId>{1, 9, ~uint64_t{0}, 5, 6, 7}));
  // A torn entry or an unknown tag: the whole records before it, and false.
  signals.clear();
  states.clear();
  EXPECT_FALSE(ForEachJournalRecord(absl::string_view(entry).substr(0, 30),
                                    visit));
  EXPECT_EQ(signals.size(), 1u);
  EXPECT_EQ(states.size(), 0u);
  EXPECT_FALSE(ForEachJournalRecord("X", visit));
  // A lease record whose holder runs past the end.
  leases.clear();
  std::string torn;
  AppendJournalLease({5, 77, 1.0, "abcdef"}, &torn);
  EXPECT_FALSE(ForEachJournalRecord(
      absl::string_view(torn).substr(0, torn.size() - 1), visit));
  EXPECT_TRUE(leases.empty());
}

TEST(UnfoldedPagesTest, FirstInFirstOutWithTheirEntries) {
  UnfoldedPages q;
  EXPECT_TRUE(q.empty());
  q.Push(3, 10);
  q.Push(3, 11);
  q.Push(5, 12);
  q.Push(9, 13);
  q.Push(9, 14);
  EXPECT_EQ(q.size(), 5u);
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (int i = 0; i < 3; ++i) {
    out.emplace_back(q.front_seq(), q.front_page());
    q.pop_front();
  }
  // Pushes behind pops, into the last run or a new one.
  q.Push(9, 15);
  q.Push(12, 16);
  while (!q.empty()) {
    out.emplace_back(q.front_seq(), q.front_page());
    q.pop_front();
  }
  const std::vector<std::pair<uint64_t, uint32_t>> expected = {
      {3, 10}, {3, 11}, {5, 12}, {9, 13}, {9, 14}, {9, 15}, {12, 16}};
  EXPECT_EQ(out, expected);
  q.Push(20, 1);
  EXPECT_EQ(q.front_seq(), 20u);
  EXPECT_EQ(q.front_page(), 1u);
}

TEST(StringInternerTest, OneIdPerStringInOrder) {
  StringInterner s;
  EXPECT_EQ(s.Find("a.com"), StringInterner::kNone);
  EXPECT_EQ(s.Intern("a.com"), 0u);
  EXPECT_EQ(s.Intern("https://a-much-longer-name.example.org"), 1u);
  EXPECT_EQ(s.Intern(""), 2u);
  EXPECT_EQ(s.Intern("a.com"), 0u);
  EXPECT_EQ(s.Find(""), 2u);
  EXPECT_EQ(s.Find("a.co"), StringInterner::kNone);
  EXPECT_EQ(s.Get(1), "https://a-much-longer-name.example.org");
  EXPECT_EQ(s.Get(2), "");
  EXPECT_EQ(s.size(), 3u);
  // Many: ids stay stable as the tables grow.
  for (int i = 0; i < 5000; ++i) {
    ASSERT_EQ(s.Intern("h" + std::to_string(i)), 3u + i);
  }
  for (int i = 0; i < 5000; i += 7) {
    ASSERT_EQ(s.Find("h" + std::to_string(i)), 3u + i);
    ASSERT_EQ(s.Get(3 + i), "h" + std::to_string(i));
  }
  EXPECT_EQ(s.Get(0), "a.com");
  EXPECT_GT(s.MemoryBytes(), 0u);
}

TEST(RateWindowTest, RatesOverTheLastMinute) {
  RateWindow w;
  EXPECT_EQ(w.Rate(0.0), 0.0);
  w.Add(1000.0, 10);
  EXPECT_EQ(w.Rate(1000.5), 10.0);  // one second so far
  w.Add(1001.2, 20);
  EXPECT_EQ(w.Rate(1001.9), 15.0);
  // A minute later the old seconds are gone.
  EXPECT_EQ(w.Rate(1100.0), 0.0);
  w.Add(1100.0, 60);
  EXPECT_EQ(w.Rate(1100.0), 1.0);
  EXPECT_EQ(w.Rate(NAN), 1.0);  // ignored
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
