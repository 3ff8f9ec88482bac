#include "shard/page_table.h"

#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/url_id.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

TEST(PageTableTest, AddFindRemoveReusesIds) {
  PageTable table;
  EXPECT_EQ(table.Find(42), kNoPage);
  const PageId a = table.Add(42);
  const PageId b = table.Add(43);
  EXPECT_NE(a, b);
  EXPECT_EQ(table.Find(42), a);
  EXPECT_EQ(table.Find(43), b);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_TRUE(table[a].in_use);
  EXPECT_EQ(table[a].id, 42u);

  table.Remove(a);
  EXPECT_EQ(table.Find(42), kNoPage);
  EXPECT_EQ(table.Find(43), b);
  EXPECT_FALSE(table[a].in_use);
  // The freed id is handed out again: ids stay dense.
  EXPECT_EQ(table.Add(44), a);
  EXPECT_EQ(table.Find(44), a);
  EXPECT_EQ(table.end(), 2u);
}

TEST(PageTableTest, UrlTextRoundTrips) {
  PageTable table;
  const PageId a = table.Add(1);
  EXPECT_EQ(table.Url(a), "");  // no text yet
  ASSERT_TRUE(table.SetUrl(a, "https://example.com", "/a?b=1"));
  const PageId b = table.Add(2);
  ASSERT_TRUE(table.SetUrl(b, "https://example.com", "/"));
  EXPECT_EQ(table.Url(a), "https://example.com/a?b=1");
  EXPECT_EQ(table.Url(b), "https://example.com/");
  // Replacing the text of a page.
  ASSERT_TRUE(table.SetUrl(a, "http://other.org:8080", "/x"));
  EXPECT_EQ(table.Url(a), "http://other.org:8080/x");
  std::string out = "<";
  table.AppendUrl(b, &out);
  EXPECT_EQ(out, "<https://example.com/");
}

// Many URLs, most removed: the arena is compacted and every survivor keeps
// its text and its id lookup.
TEST(PageTableTest, ManyAddsAndRemovesKeepEverythingConsistent) {
  PageTable table;
  std::vector<std::string> paths;
  std::vector<PageId> pages;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    const std::string path = absl::StrCat("/", std::string(40, 'p'), i);
    const PageId p = table.Add(cluster::Fingerprint64(path));
    ASSERT_TRUE(table.SetUrl(p, absl::StrCat("https://h", i % 7, ".com"), path));
    pages.push_back(p);
    paths.push_back(path);
  }
  for (int i = 0; i < n; ++i) {
    if (i % 5 != 0) table.Remove(pages[i]);
  }
  EXPECT_EQ(table.size(), static_cast<size_t>(n / 5));
  for (int i = 0; i < n; i += 5) {
    ASSERT_EQ(table.Find(cluster::Fingerprint64(paths[i])), pages[i]);
    ASSERT_EQ(table.Url(pages[i]), absl::StrCat("https://h", i % 7, ".com", paths[i]));
  }
  for (int i = 1; i < n; i += 5) {
    ASSERT_EQ(table.Find(cluster::Fingerprint64(paths[i])), kNoPage);
  }
  EXPECT_GT(table.MemoryBytes(), 0u);
}

// Bulk loading: pages are found only once indexed, removed ones not at all.
// The ids spread over the whole range, as fingerprints do (the table keeps
// them in parts by their top bits).
TEST(PageTableTest, UnindexedPagesAreFoundAfterIndexAll) {
  constexpr cluster::UrlId kSpread = 0x9E3779B97F4A7C15;  // odd: ids distinct
  auto id_of = [](int i) { return static_cast<cluster::UrlId>(i) * kSpread; };
  PageTable table;
  std::vector<PageId> pages;
  int high = 0;  // ids with the top bit set
  for (int i = 1; i <= 1000; ++i) {
    pages.push_back(table.AddUnindexed(id_of(i)));
    high += static_cast<int>(id_of(i) >> 63);
  }
  EXPECT_GT(high, 400);
  EXPECT_LT(high, 600);
  table.Remove(pages[499]);  // e.g. a malformed record
  EXPECT_EQ(table.Find(id_of(7)), kNoPage);
  table.IndexAll();
  EXPECT_EQ(table.size(), 999u);
  for (int i = 1; i <= 1000; ++i) {
    table.Prefetch(id_of(i));
    ASSERT_EQ(table.Find(id_of(i)), i == 500 ? kNoPage : pages[i - 1]) << i;
  }
  // And the table goes on as usual.
  const PageId again = table.Add(id_of(500));
  EXPECT_EQ(table.Find(id_of(500)), again);
  EXPECT_EQ(table.TryAdd(id_of(500)), kNoPage);
  table.Remove(again);
  EXPECT_EQ(table.Find(id_of(500)), kNoPage);
  EXPECT_EQ(table.size(), 999u);
}

// A load of as many URLs as reserved, with paths within the reserved
// bytes, grows no table: the URL text is never copied to a larger arena.
TEST(PageTableTest, ReservedLoadKeepsItsArena) {
  constexpr size_t kPages = 20000;
  PageTable table;
  table.Reserve(kPages, kPages * 64);
  const size_t capacity = table.PathCapacity();
  EXPECT_GE(capacity, kPages * 64);
  for (cluster::UrlId id = 1; id <= kPages; ++id) {
    const PageId page = table.AddUnindexed(id);
    const std::string prefix = absl::StrCat("https://site", id % 300, ".example");
    const StringInterner::Hashed hashed{prefix, StringInterner::HashOf(prefix)};
    table.PrefetchPrefix(hashed);
    ASSERT_TRUE(table.SetUrl(page, hashed, absl::StrCat("/section", id % 97, "/page-", id)));
  }
  table.IndexAll();
  EXPECT_EQ(table.PathCapacity(), capacity);
  EXPECT_EQ(table.Url(table.Find(12345)), "https://site45.example/section26/page-12345");
}

// A page keeps a crawl-state entry only while its learning state is more
// than its model as prior (or it has a digest); entries are freed with
// their page and reused.
TEST(PageTableTest, LearningEntriesOnlyWhereNeeded) {
  PageTable table;
  const PageId a = table.Add(1);
  table[a].change_rate = 0.5f;
  table[a].recall = 0.25f;
  table[a].false_rate = 0.125f;
  LearningState s = table.Learning(a);
  EXPECT_EQ(s.prior_change_rate, 0.5f);
  EXPECT_EQ(s.prior_recall, 0.25f);
  EXPECT_EQ(s.prior_false_rate, 0.125f);
  EXPECT_EQ(s.crawls, 0u);
  const policy::PageParams model{1.0, 0.5, 0.25, 0.125};
  EXPECT_TRUE(PageTable::IsModelAsPrior(model, s));
  table.SetLearning(a, s);  // nothing beyond the model
  EXPECT_EQ(table.crawl_states(), 0u);

  ASSERT_TRUE(LearnFromCrawl(100.0, 1, true, 0.0, &s));
  EXPECT_FALSE(PageTable::IsModelAsPrior(model, s));
  table.SetLearning(a, s);
  EXPECT_EQ(table.crawl_states(), 1u);
  EXPECT_EQ(table.LearningCrawls(a), 1u);
  // The model may now move away from the prior; the entry keeps it.
  table[a].change_rate = 2.0f;
  EXPECT_EQ(table.Learning(a).prior_change_rate, 0.5f);
  EXPECT_EQ(table.Learning(a).crawls, 1u);

  // A prior other than the model, before any crawl, needs an entry too.
  const PageId b = table.Add(2);
  table[b].change_rate = 1.0f;
  LearningState prior_only = table.Learning(b);
  prior_only.prior_change_rate = 3.0f;
  EXPECT_FALSE(PageTable::IsModelAsPrior({1.0, 1.0, 0.0, 0.0}, prior_only));
  table.SetLearning(b, prior_only);
  EXPECT_EQ(table.crawl_states(), 2u);
  EXPECT_EQ(table.Learning(b).prior_change_rate, 3.0f);
  EXPECT_EQ(table.LearningCrawls(b), 0u);

  table.Remove(a);
  EXPECT_EQ(table.crawl_states(), 1u);
  const PageId c = table.Add(3);
  EXPECT_EQ(table.LearningCrawls(c), 0u);  // not a's state
  table.SetLearning(c, s);
  EXPECT_EQ(table.crawl_states(), 2u);
  EXPECT_EQ(table.LearningCrawls(c), 1u);
  EXPECT_EQ(table.Learning(b).prior_change_rate, 3.0f);
}

// A digest keeps the page's entry whatever its learning state, and the
// entry's learning state stays the model as prior until set.
TEST(PageTableTest, DigestsShareTheCrawlState) {
  PageTable table;
  const PageId a = table.Add(1);
  table[a].change_rate = 0.5f;
  uint32_t fingerprint = 0;
  EXPECT_FALSE(table.Digest(a, &fingerprint));
  table.SetDigest(a, 7);
  EXPECT_EQ(table.crawl_states(), 1u);
  ASSERT_TRUE(table.Digest(a, &fingerprint));
  EXPECT_EQ(fingerprint, 7u);
  EXPECT_EQ(table.LearningCrawls(a), 0u);
  EXPECT_EQ(table.Learning(a).prior_change_rate, 0.5f);

  LearningState s = table.Learning(a);
  ASSERT_TRUE(LearnFromCrawl(100.0, 0, true, 0.0, &s));
  table.SetLearning(a, s);
  EXPECT_EQ(table.crawl_states(), 1u);
  EXPECT_EQ(table.LearningCrawls(a), 1u);
  table.SetLearning(a, InitLearning({1.0, 0.5, 0.0, 0.0}));
  EXPECT_EQ(table.crawl_states(), 1u);  // the digest stays
  EXPECT_EQ(table.LearningCrawls(a), 0u);
  ASSERT_TRUE(table.Digest(a, &fingerprint));
  EXPECT_EQ(fingerprint, 7u);

  table.Remove(a);
  EXPECT_EQ(table.crawl_states(), 0u);
  const PageId b = table.Add(2);
  EXPECT_FALSE(table.Digest(b, &fingerprint));
  table.SetLearning(b, s);
  EXPECT_FALSE(table.Digest(b, &fingerprint));  // not a's digest
}

// Counts a signal of `source` `offset` seconds after the last crawl as the
// shard does: matched first, then taken into the slot's latest signal.
uint8_t CountSignal(PageTable* table, PageId page, SignalSource source, double offset = 0.0,
                    double joint_window = 0.0) {
  const uint8_t joined =
      table->CountSourceSignal(page, TrustSourceIndex(source), offset, joint_window);
  PageSlot& slot = (*table)[page];
  if (offset > slot.latest_signal) slot.latest_signal = static_cast<float>(offset);
  return joined;
}

TEST(PageTableTest, SignalsBySourceAreKnownFromACrawlWithAnEntryOn) {
  PageTable table;
  const PageId a = table.Add(1);
  IntervalSignals counts;
  // No crawl-state entry: not counted, not known.
  CountSignal(&table, a, SIGNAL_SOURCE_CDN);
  EXPECT_FALSE(table.SourceSplit(a, 1, &counts));
  table.SetDigest(a, 7);                           // a crawl gives it an entry
  EXPECT_FALSE(table.SourceSplit(a, 1, &counts));  // its interval began without one
  table.RestartSourceSignals(a);
  ASSERT_TRUE(table.SourceSplit(a, 0, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{0, 0, 0, 0, 0}));
  EXPECT_EQ(counts.joint, 0);
  // Without a matching window every signal is its source's own event.
  CountSignal(&table, a, SIGNAL_SOURCE_CDN);
  CountSignal(&table, a, SIGNAL_SOURCE_CDN);
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_WEBSUB), 0);
  CountSignal(&table, a, SIGNAL_SOURCE_OTHER);  // the rest of n_cis
  ASSERT_TRUE(table.SourceSplit(a, 4, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{0, 2, 0, 1, 1}));
  EXPECT_EQ(counts.joint, 0);
  EXPECT_FALSE(table.SourceSplit(a, 2, &counts));  // n_cis saturated below the named ones
  // A source past 255 makes the split unknown until the next crawl.
  for (int k = 0; k < 300; ++k) CountSignal(&table, a, SIGNAL_SOURCE_SITEMAP);
  EXPECT_FALSE(table.SourceSplit(a, 1000, &counts));
  table.RestartSourceSignals(a);
  EXPECT_TRUE(table.SourceSplit(a, 0, &counts));

  // A journal's fold gives the page its own split (it holds the signals
  // replayed before it, however they were matched on replay); a signal or
  // a fold of unknown source makes the split unknown.
  SignalSplit split;
  CountSignal(&table, a, SIGNAL_SOURCE_CDN);
  CountSignal(&table, a, SIGNAL_SOURCE_SITEMAP);  // part of the fold's joint event
  SignalSplit fold;
  fold.named = {0, 3, 1, 0};
  fold.joint_events = 1;
  fold.joint_signals = 2;
  fold.latest_sources = 0b00010;
  table.RestoreSourceSignals(a, /*known=*/true, fold);
  CountSignal(&table, a, SIGNAL_SOURCE_CDN);
  ASSERT_TRUE(table.SignalSplitOf(a, &split));
  EXPECT_EQ(split.named, (std::array<uint8_t, kOtherTrustSource>{0, 4, 1, 0}));
  EXPECT_EQ(split.joint_events, 1);
  EXPECT_EQ(split.joint_signals, 2);
  ASSERT_TRUE(table.SourceSplit(a, 8, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{0, 4, 1, 0, 1}));
  EXPECT_EQ(counts.joint, 1);
  table.CountSourceSignal(a, /*source=*/-1, 0.0, 0.0);
  EXPECT_FALSE(table.SignalSplitOf(a, &split));
  table.RestartSourceSignals(a);
  table.RestoreSourceSignals(a, /*known=*/false, {});
  EXPECT_FALSE(table.SourceSplit(a, 0, &counts));
}

// Signals of different sources within the window of the latest signalling
// instant are one change's: a joint event, whichever source came first.
TEST(PageTableTest, JointEventsMatchOneChangesSignalsFromSeveralSources) {
  PageTable table;
  const PageId a = table.Add(1);
  table.SetDigest(a, 7);
  table.RestartSourceSignals(a);
  constexpr double kWindow = 60.0;
  constexpr uint8_t kCdn = 1u << 1, kSitemap = 1u << 0, kOther = 1u << kOtherTrustSource;
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_CDN, 100, kWindow), 0);
  // The sitemap's signal of the same change, stamped 30 s later.
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_SITEMAP, 130, kWindow), kCdn);
  // IndexNow's, arriving later but stamped earlier: the same instant.
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_INDEXNOW, 90, kWindow), kCdn | kSitemap);
  IntervalSignals counts;
  ASSERT_TRUE(table.SourceSplit(a, 3, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{0, 0, 0, 0, 0}));
  EXPECT_EQ(counts.joint, 1);
  // A second CDN signal is another change (its source is in the instant
  // already), and starts the latest instant; "other" then joins it.
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_CDN, 150, kWindow), 0);
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_OTHER, 160, kWindow), kCdn);
  // Far from the latest instant: single-source events.
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_SITEMAP, 1000, kWindow), 0);
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_CDN, 10, kWindow), 0);  // late, and old
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_OTHER, 2000, kWindow), 0);
  ASSERT_TRUE(table.SourceSplit(a, 8, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{1, 1, 0, 0, 1}));
  EXPECT_EQ(counts.joint, 2);
  SignalSplit split;
  ASSERT_TRUE(table.SignalSplitOf(a, &split));
  EXPECT_EQ(split.joint_signals, 5);
  EXPECT_EQ(split.latest_sources, kOther);
  // An "other" single event joined by a named source.
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_WEBSUB, 2010, kWindow), kOther);
  ASSERT_TRUE(table.SourceSplit(a, 9, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{1, 1, 0, 0, 0}));
  EXPECT_EQ(counts.joint, 3);
  // A crawl starts the next interval with no instant to join.
  table.RestartSourceSignals(a);
  table[a].latest_signal = -1.0f;
  EXPECT_EQ(CountSignal(&table, a, SIGNAL_SOURCE_CDN, 5, kWindow), 0);
  ASSERT_TRUE(table.SourceSplit(a, 1, &counts));
  EXPECT_EQ(counts.single, (SourceCounts{0, 1, 0, 0, 0}));
  EXPECT_EQ(counts.joint, 0);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
