// Signal keys and their per-URL filter; the stats' rate window.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "shard/rate_window.h"
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
  EXPECT_EQ(SignalKey(1, 3.0, SIGNAL_SOURCE_UNSPECIFIED), SignalKey(1, 3.0, SIGNAL_SOURCE_OTHER));
}

TEST(SignalKeysTest, FilterHasNoFalseNegatives) {
  uint64_t filter = 0;
  for (int i = 0; i < 8; ++i) {
    const uint64_t key = SignalKey(9, i, SIGNAL_SOURCE_INDEXNOW);
    AddSignal(key, &filter);
    for (int j = 0; j <= i; ++j) {
      EXPECT_TRUE(MayContainSignal(filter, SignalKey(9, j, SIGNAL_SOURCE_INDEXNOW)));
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
    EXPECT_NEAR(false_positives, expected * trials, std::max(5 * sd, 0.5 * expected * trials))
        << "n = " << n;
  }
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
