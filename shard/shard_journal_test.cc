// The signal journal: counted signals survive restarts whether they were
// folded into their records or replayed from the journal, and entries from
// before a URL's crawl or removal are not replayed.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

class ShardJournalTest : public testing::ShardTest {
 protected:
  void SetUp() override {
    options_.journal_window = 2;
    ShardTest::SetUp();
  }
  void Signal(const std::string& url) {
    now_ += 1;
    ASSERT_EQ(Signals({MakeSignal(url, now_)}).counted(), 1u);
  }
};

TEST_F(ShardJournalTest, FoldedAndReplayedSignalsBothSurvive) {
  Upsert({Spec("https://a.com/"), Spec("https://b.com/")});
  Signal("https://a.com/");
  Signal("https://a.com/");
  // Three more batches: a's entries leave the window and a is folded.
  for (int i = 0; i < 3; ++i) Signal("https://b.com/");
  const double a_latest = State("https://a.com/").last_signal_time();
  Open();
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 2u);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), a_latest);
  EXPECT_EQ(State("https://b.com/").signals_since_crawl(), 3u);
  EXPECT_GT(shard_->startup().journal_entries, 0);
  // Redeliveries are still recognised, from the folded filter too.
  SignalBatchAck again = Signals({MakeSignal("https://a.com/", a_latest),
                                  MakeSignal("https://b.com/", now_)});
  EXPECT_EQ(again.duplicate(), 2u);
}

TEST_F(ShardJournalTest, ACrawlSupersedesTheJournal) {
  Add("https://a.com/");
  Signal("https://a.com/");
  Signal("https://a.com/");
  now_ += 1;
  Report({ByUrl("https://a.com/", now_, CRAWL_OUTCOME_CHANGED)});
  Open();
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 0u);
  Signal("https://a.com/");
  Open();
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 1u);
}

TEST_F(ShardJournalTest, ARemovedUrlLeavesItsSignalsBehind) {
  Add("https://a.com/");
  Signal("https://a.com/");
  DeleteUrlsRequest del;
  del.add_urls("https://a.com/");
  ASSERT_EQ(shard_->DeleteUrls(del, now_)->result().applied(), 1u);
  Add("https://a.com/");
  Open();
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 0u);
}

TEST_F(ShardJournalTest, TheJournalIsTruncated) {
  Upsert({Spec("https://a.com/"), Spec("https://b.com/")});
  for (int i = 0; i < 1000; ++i) {
    Signal(i % 2 ? "https://a.com/" : "https://b.com/");
    if (i % 10 == 9) {
      Report({ByUrl("https://a.com/", now_, CRAWL_OUTCOME_UNCHANGED)});
    }
  }
  const UrlState a = State("https://a.com/");
  const UrlState b = State("https://b.com/");
  Open();
  // Truncated in steps of 256 entries, behind the window of 2.
  EXPECT_LE(shard_->startup().journal_entries, 256 + 2);
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(),
            a.signals_since_crawl());
  EXPECT_EQ(State("https://b.com/").signals_since_crawl(), 500u);
  EXPECT_EQ(State("https://b.com/").signals_since_crawl(),
            b.signals_since_crawl());
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
