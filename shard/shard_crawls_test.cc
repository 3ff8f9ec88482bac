// Peek, lease and crawl reports of the shard core.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using ShardCrawlsTest = testing::ShardTest;

// Three URLs of decreasing importance on different hosts.
class ShardPickTest : public ShardCrawlsTest {
 protected:
  void SetUp() override {
    ShardCrawlsTest::SetUp();
    Upsert({Spec("https://a.com/", 3.0), Spec("https://b.com/", 2.0), Spec("https://c.com/", 1.0)});
    now_ += 3600;
  }
};

TEST_F(ShardPickTest, PeekRanksByValueAndLeasesNothing) {
  const PeekTopResponse peek = Peek(10);
  EXPECT_EQ(peek.time(), now_);
  ASSERT_EQ(peek.candidates_size(), 3);
  EXPECT_EQ(peek.candidates(0).url(), "https://a.com/");
  EXPECT_EQ(peek.candidates(1).url(), "https://b.com/");
  EXPECT_EQ(peek.candidates(2).url(), "https://c.com/");
  EXPECT_GT(peek.candidates(0).value(), peek.candidates(1).value());
  // The values are the URLs' crawl values.
  EXPECT_DOUBLE_EQ(peek.candidates(0).value(), State("https://a.com/").crawl_value());
  EXPECT_EQ(PeekUrls(2), std::vector<std::string>({"https://a.com/", "https://b.com/"}));
  EXPECT_EQ(Peek(10).candidates_size(), 3);
  EXPECT_EQ(Peek(0).candidates_size(), 0);
}

TEST_F(ShardPickTest, PeekOfValuesOnlyLeavesTheUrlsOut) {
  const PeekTopResponse full = Peek(10);
  PeekTopRequest req;
  req.set_k(10);
  req.set_values_only(true);
  absl::StatusOr<PeekTopResponse> values = shard_->PeekTop(req, now_);
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->candidates_size(), full.candidates_size());
  for (int i = 0; i < full.candidates_size(); ++i) {
    EXPECT_TRUE(values->candidates(i).url().empty());
    EXPECT_EQ(values->candidates(i).value(), full.candidates(i).value());
  }
}

TEST_F(ShardPickTest, PeekTimeNeverGoesBack) {
  PeekTopRequest req;
  req.set_k(1);
  req.set_time(now_ + 60);
  ASSERT_EQ(shard_->PeekTop(req, now_)->time(), now_ + 60);
  req.set_time(now_ - 60);
  EXPECT_EQ(shard_->PeekTop(req, now_)->time(), now_ + 60);
  req.set_time(now_ + 1e9);  // beyond max_lookahead
  EXPECT_EQ(shard_->PeekTop(req, now_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ShardPickTest, LeasedUrlsAreNotOfferedUntilTheLeaseExpires) {
  const LeaseResponse lease = Lease(1, /*duration=*/100, "f1");
  ASSERT_EQ(lease.leases_size(), 1);
  const LeasedUrl& l = lease.leases(0);
  EXPECT_EQ(l.url(), "https://a.com/");
  EXPECT_EQ(l.slot_time(), now_);
  EXPECT_EQ(l.deadline(), now_ + 100);
  EXPECT_GT(l.lease_id(), 0u);
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://b.com/", "https://c.com/"}));
  const UrlState s = State("https://a.com/");
  ASSERT_TRUE(s.has_lease());
  EXPECT_EQ(s.lease().lease_id(), l.lease_id());
  EXPECT_EQ(s.lease().holder(), "f1");
  EXPECT_EQ(shard_->GetStats(now_).leases_in_flight(), 1u);

  // The lease expires: the URL is offered again with its state as it was.
  now_ += 101;
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://a.com/"}));
  EXPECT_FALSE(State("https://a.com/").has_lease());
  const ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.leases_in_flight(), 0u);
  EXPECT_EQ(stats.expired_leases_total(), 1u);
  EXPECT_EQ(State("https://a.com/").last_crawl_time(), 1000.0);

  // A late report for the expired lease is still accepted ...
  const ReportCrawlsResponse r =
      Report({ByLease(l.lease_id(), now_ - 50, CRAWL_OUTCOME_UNCHANGED)});
  EXPECT_EQ(r.result().applied(), 1u);
  EXPECT_EQ(State("https://a.com/").last_crawl_time(), now_ - 50);
}

TEST_F(ShardPickTest, ExpiredLeaseIsRefusedOnceTheUrlIsLeasedAgain) {
  const uint64_t first = Lease(1, 100).leases(0).lease_id();
  now_ += 200;
  const LeaseResponse again = Lease(1, 100);
  ASSERT_EQ(again.leases(0).url(), "https://a.com/");
  EXPECT_NE(again.leases(0).lease_id(), first);
  const ReportCrawlsResponse r = Report({ByLease(first, now_, CRAWL_OUTCOME_CHANGED)});
  ASSERT_EQ(r.result().rejected_size(), 1);
  EXPECT_EQ(r.result().rejected(0).code(), 5);  // NOT_FOUND
  EXPECT_THAT(r.result().rejected(0).message(), HasSubstr("lease_id"));
}

// A caller that gave up waiting for a Lease answer releases what the
// request granted by its request id: the URLs are offered again at once,
// unchanged, and the request, if it arrives only now, grants nothing.
TEST_F(ShardPickTest, ReleasedLeasesAreOfferedAgainAtOnce) {
  LeaseRequest req;
  req.add_slot_times(now_);
  req.add_slot_times(now_);
  req.set_holder("coordinator");
  req.set_request_id(41);
  absl::StatusOr<LeaseResponse> granted = shard_->Lease(req, now_);
  ASSERT_TRUE(granted.ok()) << granted.status();
  ASSERT_EQ(granted->leases_size(), 2);
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://c.com/"}));

  ReleaseLeasesRequest release;
  release.add_request_ids(41);
  release.add_request_ids(42);  // never seen: only marked released
  absl::StatusOr<ReleaseLeasesResponse> r = shard_->ReleaseLeases(release, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->released(), 2u);
  EXPECT_EQ(PeekUrls(10),
            std::vector<std::string>({"https://a.com/", "https://b.com/", "https://c.com/"}));
  EXPECT_FALSE(State("https://a.com/").has_lease());
  EXPECT_EQ(State("https://a.com/").consecutive_failures(), 0u);
  const ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.leases_in_flight(), 0u);
  EXPECT_EQ(stats.leases_total(), 2u);
  EXPECT_EQ(stats.released_leases_total(), 2u);

  // The released lease's report is refused; the late request leases nothing.
  const ReportCrawlsResponse late =
      Report({ByLease(granted->leases(0).lease_id(), now_, CRAWL_OUTCOME_CHANGED)});
  EXPECT_EQ(late.result().rejected_size(), 1);
  req.set_request_id(42);
  absl::StatusOr<LeaseResponse> delayed = shard_->Lease(req, now_);
  EXPECT_EQ(delayed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(delayed.status().message(), HasSubstr("request_id"));

  // By lease id, once; an inactive one is skipped.
  const uint64_t id = Lease(1).leases(0).lease_id();
  release.Clear();
  release.add_lease_ids(id);
  release.add_lease_ids(id);
  release.add_lease_ids(999999);
  r = shard_->ReleaseLeases(release, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->released(), 1u);
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://a.com/"}));
}

// A fetch that takes longer renews its lease: the deadline moves out (never
// in), the URL stays leased past the old deadline, and after a restart too.
// A lease that is not active cannot be renewed.
TEST_F(ShardPickTest, RenewedLeasesLastLonger) {
  const LeasedUrl l = Lease(1, /*duration=*/100).leases(0);
  now_ += 50;
  RenewLeasesRequest renew;
  renew.add_lease_ids(l.lease_id());
  renew.add_lease_ids(424242);
  renew.set_lease_duration(300);
  absl::StatusOr<RenewLeasesResponse> r = shard_->RenewLeases(renew, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deadlines_size(), 2);
  EXPECT_EQ(r->deadlines(0), now_ + 300);
  EXPECT_EQ(r->deadlines(1), 0.0);
  ASSERT_EQ(r->result().rejected_size(), 1);
  EXPECT_EQ(r->result().rejected(0).index(), 1u);
  EXPECT_EQ(r->result().rejected(0).code(), 5);  // NOT_FOUND
  // A shorter renewal leaves the later deadline.
  renew.set_lease_duration(10);
  r = shard_->RenewLeases(renew, now_);
  EXPECT_EQ(r->deadlines(0), now_ + 300);
  now_ += 100;  // past the first deadline
  Open();
  EXPECT_EQ(State("https://a.com/").lease().deadline(), now_ - 100 + 300);
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://b.com/", "https://c.com/"}));
}

// A release survives a restart: the lease's end is journaled after its
// grant.
TEST_F(ShardPickTest, ReleasesAreDurable) {
  const uint64_t id = Lease(1).leases(0).lease_id();
  ReleaseLeasesRequest release;
  release.add_lease_ids(id);
  ASSERT_TRUE(shard_->ReleaseLeases(release, now_).ok());
  Open();
  EXPECT_EQ(shard_->GetStats(now_).leases_in_flight(), 0u);
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://a.com/"}));
}

TEST_F(ShardPickTest, LeaseTakesOneUrlPerSlot) {
  LeaseRequest req;
  req.add_slot_times(now_);
  req.add_slot_times(now_ + 1);
  req.add_slot_times(now_ + 2);
  req.add_slot_times(now_ + 3);  // nothing left for this one
  req.set_holder("f");
  absl::StatusOr<LeaseResponse> r = shard_->Lease(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 3);
  std::set<uint64_t> ids;
  for (const LeasedUrl& l : r->leases()) ids.insert(l.lease_id());
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(r->leases(1).slot_time(), now_ + 1);
  EXPECT_EQ(r->leases(0).deadline(), now_ + options_.default_lease_duration);
  EXPECT_EQ(shard_->GetStats(now_).leases_total(), 3u);
  EXPECT_GT(shard_->GetStats(now_).crawl_value_level(), 0.0);
}

// A Lease naming a peek (the coordinator's merge) leases that peek's
// candidates, best first, at the values peeked, without searching the index
// again; slots beyond them are picked afresh.
TEST_F(ShardPickTest, LeaseNamingAPeekLeasesItsCandidates) {
  const PeekTopResponse peek = Peek(2);
  ASSERT_EQ(peek.candidates_size(), 2);
  EXPECT_NE(peek.peek_id(), 0u);
  now_ += 0.5;
  LeaseRequest req;
  req.add_slot_times(now_);
  req.add_slot_times(now_ + 1);
  req.add_slot_times(now_ + 2);
  req.set_holder("f");
  req.set_peek_id(peek.peek_id());
  const uint64_t valuations = shard_->index().stats().valuations;
  absl::StatusOr<LeaseResponse> r = shard_->Lease(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 3);
  EXPECT_EQ(r->leases(0).url(), "https://a.com/");
  EXPECT_EQ(r->leases(0).value(), peek.candidates(0).value());
  EXPECT_EQ(r->leases(1).url(), "https://b.com/");
  EXPECT_EQ(r->leases(1).value(), peek.candidates(1).value());
  EXPECT_EQ(r->leases(1).slot_time(), now_ + 1);
  EXPECT_EQ(r->leases(1).deadline(), now_ + 1 + options_.default_lease_duration);
  EXPECT_EQ(r->leases(2).url(), "https://c.com/");  // picked afresh
  // Only the fresh pick was valued.
  EXPECT_EQ(shard_->index().stats().valuations - valuations, 1u);
  const ShardStats stats = shard_->GetStats(now_);
  EXPECT_EQ(stats.leases_total(), 3u);
  EXPECT_EQ(stats.peeked_leases_total(), 2u);
  EXPECT_TRUE(State("https://b.com/").has_lease());
}

// A peek is named once; a candidate leased, crawled, removed or replaced
// since the peek is passed over; an unknown peek counts as none.
TEST_F(ShardPickTest, LeaseNamingAPeekTakesOnlyWhatIsStillEligible) {
  const PeekTopResponse peek = Peek(3);
  ASSERT_EQ(peek.candidates_size(), 3);
  // Another fetcher leases a, crawls it and reports it: a is eligible
  // again, but its peeked value is moot (and the crawl is later than the
  // slot this lease would give it).
  const LeaseResponse other = Lease(1);
  ASSERT_EQ(other.leases(0).url(), "https://a.com/");
  ASSERT_EQ(Report({ByLease(other.leases(0).lease_id(), now_ + 0.5, CRAWL_OUTCOME_CHANGED)})
                .result()
                .applied(),
            1u);
  DeleteUrlsRequest del;
  del.add_urls("https://b.com/");
  ASSERT_TRUE(shard_->DeleteUrls(del, now_).ok());
  Upsert({Spec("https://d.com/", 0.5)});  // may take b's page id
  LeaseRequest req;
  req.add_slot_times(now_);
  req.set_holder("f");
  req.set_peek_id(peek.peek_id());
  absl::StatusOr<LeaseResponse> r = shard_->Lease(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 1);
  EXPECT_EQ(r->leases(0).url(), "https://c.com/");
  EXPECT_EQ(shard_->GetStats(now_).peeked_leases_total(), 1u);

  // Named again, or never made: picked afresh (a and d are left).
  std::set<std::string> afresh;
  r = shard_->Lease(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 1);
  afresh.insert(r->leases(0).url());
  req.set_peek_id(peek.peek_id() + 1000);
  r = shard_->Lease(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 1);
  afresh.insert(r->leases(0).url());
  EXPECT_EQ(afresh, std::set<std::string>({"https://a.com/", "https://d.com/"}));
  EXPECT_EQ(shard_->GetStats(now_).peeked_leases_total(), 1u);
}

// Two fetchers' Lease calls can reach the shard out of slot order; each
// lease keeps the slot it was asked for (the coordinator paces by them),
// though the shard values it at its later pick time.
TEST_F(ShardPickTest, LeasesKeepTheSlotAskedForBehindThePickTime) {
  LeaseRequest later;
  later.add_slot_times(now_ + 0.5);
  later.set_holder("f1");
  ASSERT_TRUE(shard_->Lease(later, now_).ok());
  LeaseRequest earlier;
  earlier.add_slot_times(now_ + 0.1);
  earlier.add_slot_times(now_ + 0.2);
  earlier.set_holder("f2");
  absl::StatusOr<LeaseResponse> r = shard_->Lease(earlier, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 2);
  EXPECT_EQ(r->leases(0).slot_time(), now_ + 0.1);
  EXPECT_EQ(r->leases(1).slot_time(), now_ + 0.2);
  // Valued, and so due, from the pick time on.
  EXPECT_EQ(r->leases(0).deadline(), now_ + 0.5 + options_.default_lease_duration);
}

TEST_F(ShardPickTest, BadLeaseRequestsAreRejectedWhole) {
  LeaseRequest req;
  req.add_slot_times(now_ + 2);
  req.add_slot_times(now_ + 1);  // decreasing
  EXPECT_EQ(shard_->Lease(req, now_).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(shard_->Lease(req, now_).status().message()), HasSubstr("slot_times[1]"));
  req.clear_slot_times();
  req.add_slot_times(now_);
  req.set_holder(std::string(1000, 'h'));
  EXPECT_THAT(std::string(shard_->Lease(req, now_).status().message()), HasSubstr("holder"));
  req.set_holder("f");
  req.set_lease_duration(-1);
  EXPECT_THAT(std::string(shard_->Lease(req, now_).status().message()),
              HasSubstr("lease_duration"));
  req.set_lease_duration(0);
  req.set_slot_times(0, -1);
  EXPECT_THAT(std::string(shard_->Lease(req, now_).status().message()),
              HasSubstr("slot_times[0]: must be finite, >= 0"));
  EXPECT_EQ(Peek(10).candidates_size(), 3);  // nothing was leased
  PeekTopRequest peek;
  peek.set_k(1);
  peek.set_time(-1);
  EXPECT_EQ(shard_->PeekTop(peek, now_).status().code(), absl::StatusCode::kInvalidArgument);
}

// Two times a message must tell apart print apart (not as 1.79569e+09).
TEST_F(ShardPickTest, TimesInMessagesAreExact) {
  ReportCrawlsRequest req;
  *req.add_reports() = ByUrl("https://a.com/", 1000.25, CRAWL_OUTCOME_CHANGED);
  ASSERT_EQ(shard_->ReportCrawls(req, now_)->result().applied(), 1u);
  *req.mutable_reports(0) = ByUrl("https://a.com/", 1000.125, CRAWL_OUTCOME_CHANGED);
  const ReportCrawlsResponse r = *shard_->ReportCrawls(req, now_);
  ASSERT_EQ(r.result().rejected_size(), 1);
  EXPECT_THAT(r.result().rejected(0).message(),
              HasSubstr("fetch_time: 1000.125 is before the URL's last crawl "
                        "at 1000.25"));
}

TEST_F(ShardPickTest, ReportRestartsTauAndSignals) {
  Signals({MakeSignal("https://a.com/", now_ - 10)});
  const uint64_t id = Lease(1).leases(0).lease_id();
  now_ += 5;
  const ReportCrawlsResponse r = Report({ByLease(id, now_ - 1, CRAWL_OUTCOME_CHANGED)});
  EXPECT_EQ(r.result().applied(), 1u);
  EXPECT_EQ(r.changed(), 1u);
  const UrlState s = State("https://a.com/");
  EXPECT_EQ(s.last_crawl_time(), now_ - 1);
  EXPECT_EQ(s.signals_since_crawl(), 0u);
  EXPECT_FALSE(s.has_lease());
  EXPECT_EQ(s.observed_crawls(), 1u);
  ASSERT_EQ(s.recent_outcomes_size(), 1);
  EXPECT_EQ(s.recent_outcomes(0).outcome(), CRAWL_OUTCOME_CHANGED);
  EXPECT_NEAR(s.recent_outcomes(0).elapsed(), 3604.0, 1e-3);
  EXPECT_EQ(s.recent_outcomes(0).signals(), 1u);
  EXPECT_EQ(s.recent_outcomes(0).fetch_time(), now_ - 1);
  // The lease is over: the id is no longer valid, the URL is offered.
  EXPECT_EQ(Report({ByLease(id, now_, CRAWL_OUTCOME_CHANGED)}).result().rejected(0).code(), 5);
  EXPECT_EQ(shard_->GetStats(now_).leases_in_flight(), 0u);
  EXPECT_EQ(shard_->GetStats(now_).estimator().urls_learning(), 1u);
}

TEST_F(ShardPickTest, ReportsByUrlAndTheirErrors) {
  const ReportCrawlsResponse r = Report({
      ByUrl("https://B.com/", now_, CRAWL_OUTCOME_UNCHANGED),      // 0 ok
      ByUrl("https://nope.com/", now_, CRAWL_OUTCOME_CHANGED),     // 1
      ByUrl("https://c.com/", 500, CRAWL_OUTCOME_CHANGED),         // 2: < last
      ByUrl("https://c.com/", now_ + 1e6, CRAWL_OUTCOME_CHANGED),  // 3
      ByUrl("https://c.com/", now_, CRAWL_OUTCOME_UNSPECIFIED),    // 4
      CrawlReport(),                                               // 5
      ByLease(999999, now_, CRAWL_OUTCOME_CHANGED),                // 6
  });
  EXPECT_EQ(r.result().applied(), 1u);
  EXPECT_EQ(r.unchanged(), 1u);
  ASSERT_EQ(r.result().rejected_size(), 6);
  const int codes[] = {5, 9, 11, 3, 3, 5};
  const char* fields[] = {"url", "fetch_time", "fetch_time", "outcome", "target", "lease_id"};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(r.result().rejected(k).index(), static_cast<uint32_t>(k + 1));
    EXPECT_EQ(r.result().rejected(k).code(), codes[k]);
    EXPECT_THAT(r.result().rejected(k).message(), HasSubstr(fields[k]));
  }
  EXPECT_EQ(State("https://b.com/").last_crawl_time(), now_);
  EXPECT_EQ(shard_->GetStats(now_).reports_total(), 1u);
}

// With a digest the shard decides "changed" itself.
TEST_F(ShardPickTest, DigestsDecideChanged) {
  auto report = [&](const std::string& digest, CrawlOutcome outcome) {
    CrawlReport r = ByUrl("https://a.com/", now_, outcome);
    r.set_content_digest(digest);
    now_ += 10;
    return Report({r});
  };
  // No earlier digest: the fetcher's word, or undecided.
  EXPECT_EQ(report("d1", CRAWL_OUTCOME_UNSPECIFIED).undecided(), 1u);
  EXPECT_EQ(State("https://a.com/").observed_crawls(), 0u);
  EXPECT_EQ(report("d1", CRAWL_OUTCOME_CHANGED).unchanged(), 1u);
  EXPECT_EQ(report("d2", CRAWL_OUTCOME_UNCHANGED).changed(), 1u);
  EXPECT_EQ(report("d2", CRAWL_OUTCOME_UNSPECIFIED).unchanged(), 1u);
  EXPECT_EQ(State("https://a.com/").content_digest(), "d2");
  EXPECT_EQ(State("https://a.com/").observed_crawls(), 3u);
  CrawlReport big = ByUrl("https://a.com/", now_, CRAWL_OUTCOME_CHANGED);
  big.set_content_digest(std::string(65, 'x'));
  EXPECT_THAT(Report({big}).result().rejected(0).message(), HasSubstr("content_digest"));
}

TEST_F(ShardPickTest, FailedFetchesBackOffExponentially) {
  options_.failure_backoff = 100;
  Open();
  const uint64_t id = Lease(1).leases(0).lease_id();
  EXPECT_EQ(Report({ByLease(id, now_, CRAWL_OUTCOME_FAILED)}).failed(), 1u);
  UrlState s = State("https://a.com/");
  EXPECT_EQ(s.consecutive_failures(), 1u);
  EXPECT_EQ(s.retry_after(), now_ + 100);
  EXPECT_EQ(s.last_crawl_time(), 1000.0);  // a failure is not a crawl
  EXPECT_FALSE(s.has_lease());
  EXPECT_THAT(PeekUrls(10), UnorderedElementsAre("https://b.com/", "https://c.com/"));
  now_ += 101;
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://a.com/"}));
  // The second failure in a row doubles the wait.
  Report({ByUrl("https://a.com/", now_, CRAWL_OUTCOME_FAILED)});
  EXPECT_EQ(State("https://a.com/").retry_after(), now_ + 200);
  now_ += 150;
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://b.com/"}));
  // A success ends the backoff.
  Report({ByUrl("https://a.com/", now_, CRAWL_OUTCOME_UNCHANGED)});
  s = State("https://a.com/");
  EXPECT_EQ(s.consecutive_failures(), 0u);
  EXPECT_EQ(s.retry_after(), 0.0);
  EXPECT_EQ(s.last_crawl_time(), now_);
}

TEST_F(ShardPickTest, GoneUrlsLeave) {
  const uint64_t id = Lease(1).leases(0).lease_id();
  EXPECT_EQ(Report({ByLease(id, now_, CRAWL_OUTCOME_GONE)}).gone(), 1u);
  EXPECT_EQ(StateCode("https://a.com/"), absl::StatusCode::kNotFound);
  EXPECT_EQ(shard_->GetStats(now_).urls(), 2u);
  EXPECT_EQ(shard_->GetStats(now_).leases_in_flight(), 0u);
  Open();
  EXPECT_EQ(StateCode("https://a.com/"), absl::StatusCode::kNotFound);
}

TEST_F(ShardCrawlsTest, HostMinimumDelaySpacesCrawlsOfAHost) {
  Upsert({Spec("https://h.com/1", 2.0), Spec("https://h.com/2", 1.0),
          Spec("https://other.com/", 0.5)});
  SetHostPolitenessRequest req;
  HostPoliteness* h = req.add_hosts();
  h->set_host("H.com");
  h->set_min_delay(60);
  absl::StatusOr<SetHostPolitenessResponse> r = shard_->SetHostPoliteness(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result().applied(), 1u);
  now_ += 3600;
  // One page per host and pick while the host has a minimum delay.
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://h.com/1", "https://other.com/"}));
  Report({ByUrl("https://h.com/1", now_, CRAWL_OUTCOME_CHANGED)});
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://other.com/"}));
  EXPECT_EQ(State("https://h.com/2").host_allowed_from(), now_ + 60);
  now_ += 61;
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://h.com/2"}));
}

// A lease counts as a crawl of its host for politeness: a second URL of
// the host is not leased before the minimum delay has passed.
TEST_F(ShardCrawlsTest, LeasesRespectTheHostMinimumDelay) {
  Upsert({Spec("https://h.com/1", 2.0), Spec("https://h.com/2", 1.0)});
  SetHostPolitenessRequest req;
  req.add_hosts()->set_host("h.com");
  req.mutable_hosts(0)->set_min_delay(60);
  ASSERT_TRUE(shard_->SetHostPoliteness(req, now_).ok());
  now_ += 3600;
  LeaseRequest lease;
  for (double dt : {0.0, 0.0, 30.0, 61.0}) lease.add_slot_times(now_ + dt);
  absl::StatusOr<LeaseResponse> r = shard_->Lease(lease, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->leases_size(), 2);
  EXPECT_EQ(r->leases(0).url(), "https://h.com/1");
  EXPECT_EQ(r->leases(1).url(), "https://h.com/2");
  EXPECT_EQ(r->leases(1).slot_time(), now_ + 61.0);
}

TEST_F(ShardCrawlsTest, BlockedHostsAreNotOffered) {
  Upsert({Spec("https://h.com/", 2.0), Spec("https://other.com/", 1.0)});
  SetHostPolitenessRequest req;
  req.add_hosts()->set_host("h.com");
  req.mutable_hosts(0)->set_blocked_until(now_ + 500);
  req.add_hosts()->set_host("bad host");
  req.add_hosts()->set_host("x.com");
  req.mutable_hosts(2)->set_min_delay(-1);
  absl::StatusOr<SetHostPolitenessResponse> r = shard_->SetHostPoliteness(req, now_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->result().applied(), 1u);
  ASSERT_EQ(r->result().rejected_size(), 2);
  EXPECT_THAT(r->result().rejected(0).message(), HasSubstr("host"));
  EXPECT_THAT(r->result().rejected(1).message(), HasSubstr("min_delay"));
  now_ += 100;
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>({"https://other.com/"}));
  now_ += 401;
  EXPECT_EQ(PeekUrls(1), std::vector<std::string>({"https://h.com/"}));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
