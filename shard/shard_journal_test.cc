// The journal: counted signals and lease grants survive restarts
// whether they were folded or replayed from the journal, and entries from
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
  SignalBatchAck again =
      Signals({MakeSignal("https://a.com/", a_latest), MakeSignal("https://b.com/", now_)});
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
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), a.signals_since_crawl());
  EXPECT_EQ(State("https://b.com/").signals_since_crawl(), 500u);
  EXPECT_EQ(State("https://b.com/").signals_since_crawl(), b.signals_since_crawl());
}

TEST_F(ShardJournalTest, LeasesAreReplayedAndEndedByReports) {
  Upsert({Spec("https://a.com/"), Spec("https://b.com/"), Spec("https://c.com/")});
  const LeaseResponse leases = Lease(3, 500, "f1");
  ASSERT_EQ(leases.leases_size(), 3);
  auto id_of = [&](const std::string& url) -> uint64_t {
    for (const LeasedUrl& l : leases.leases()) {
      if (l.url() == url) return l.lease_id();
    }
    return 0;
  };
  now_ += 1;
  // a: crawled; b: failed (held back, no lease); c: still leased.
  Report({ByLease(id_of("https://a.com/"), now_, CRAWL_OUTCOME_CHANGED),
          ByLease(id_of("https://b.com/"), now_, CRAWL_OUTCOME_FAILED)});
  Open();
  EXPECT_EQ(shard_->startup().leases, 1);
  EXPECT_EQ(shard_->startup().holds, 1);
  EXPECT_FALSE(State("https://a.com/").has_lease());
  const UrlState b = State("https://b.com/");
  EXPECT_FALSE(b.has_lease());
  EXPECT_GT(b.retry_after(), now_);
  const UrlState c = State("https://c.com/");
  ASSERT_TRUE(c.has_lease());
  EXPECT_EQ(c.lease().lease_id(), id_of("https://c.com/"));
  EXPECT_EQ(c.lease().holder(), "f1");
  EXPECT_EQ(c.lease().deadline(), leases.leases(0).deadline());
  // Nothing to lease: a was crawled just now (its value is ~0 but it is
  // eligible), so one URL at most.
  EXPECT_LE(Lease(3).leases_size(), 1);
  // Reported after the restart by its id.
  EXPECT_EQ(
      Report({ByLease(id_of("https://c.com/"), now_, CRAWL_OUTCOME_UNCHANGED)}).result().applied(),
      1u);
  Open();
  EXPECT_FALSE(State("https://c.com/").has_lease());
}

TEST_F(ShardJournalTest, ALeaseOutlivesTheWindowAndItsDeadline) {
  Upsert({Spec("https://a.com/"), Spec("https://b.com/")});
  const LeaseResponse lease = Lease(1, 50, "f2");
  ASSERT_EQ(lease.leases_size(), 1);
  const std::string leased = lease.leases(0).url();
  const std::string other = leased == "https://a.com/" ? "https://b.com/" : "https://a.com/";
  // Many batches: the grant's entry leaves the window of 2 and is truncated;
  // the lease is folded, again and again.
  for (int i = 0; i < 600; ++i) Signal(other);
  EXPECT_GT(now_, lease.leases(0).deadline());
  Open();
  EXPECT_LE(shard_->startup().journal_entries, 256 + 2);
  // Expired, so not active, but a late report by its id is still taken.
  EXPECT_EQ(shard_->startup().leases, 0);
  EXPECT_EQ(
      Report({ByLease(lease.leases(0).lease_id(), now_, CRAWL_OUTCOME_CHANGED)}).result().applied(),
      1u);
  EXPECT_EQ(State(leased).last_crawl_time(), now_);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
