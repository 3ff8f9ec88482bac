// A shard on a fresh store in a temporary directory, with shorthands for
// its requests, shared by the shard's tests.
#ifndef RECRAWL_SHARD_SHARD_TEST_UTIL_H_
#define RECRAWL_SHARD_SHARD_TEST_UTIL_H_

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {
namespace testing {

class ShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = absl::StrCat(::testing::TempDir(), "shard_", info->test_suite_name(), "_", info->name());
    std::filesystem::remove_all(dir_);
    options_.t_delay = 0.0;
    Open();
  }
  void TearDown() override {
    shard_.reset();
    std::filesystem::remove_all(dir_);
  }

  // (Re)opens the shard on the directory at now_; the previous one, if any,
  // is closed first, as a restart would. The store is opened as
  // shard_server opens it.
  void Open() {
    shard_.reset();
    store_ = nullptr;
    UrlStoreOptions store_options;
    store_options.defer_compactions = true;
    absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir_, store_options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = store->get();
    absl::StatusOr<std::unique_ptr<Shard>> shard = Shard::Open(*std::move(store), options_, now_);
    ASSERT_TRUE(shard.ok()) << shard.status();
    shard_ = *std::move(shard);
  }

  // A new shard on an empty directory (for options a store remembers).
  void Recreate() {
    shard_.reset();
    std::filesystem::remove_all(dir_);
    Open();
  }

  UpsertUrlsResponse Upsert(const std::vector<UrlSpec>& specs) {
    UpsertUrlsRequest req;
    for (const UrlSpec& s : specs) *req.add_urls() = s;
    absl::StatusOr<UpsertUrlsResponse> r = shard_->UpsertUrls(req, now_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : UpsertUrlsResponse();
  }
  static UrlSpec Spec(const std::string& url, double importance = 1.0) {
    UrlSpec s;
    s.set_url(url);
    s.set_importance(importance);
    return s;
  }
  static UrlSpec Spec(const std::string& url, double importance, double change_rate, double recall,
                      double false_rate) {
    UrlSpec s = Spec(url, importance);
    s.mutable_prior()->set_change_rate(change_rate);
    s.mutable_prior()->set_recall(recall);
    s.mutable_prior()->set_false_rate(false_rate);
    return s;
  }
  // One URL, checked to be applied.
  void Add(const std::string& url, double importance = 1.0) {
    ASSERT_EQ(Upsert({Spec(url, importance)}).result().applied(), 1u);
  }

  static Signal MakeSignal(const std::string& url, double time,
                           SignalSource source = SIGNAL_SOURCE_SITEMAP) {
    Signal s;
    s.set_url(url);
    s.set_time(time);
    s.set_source(source);
    return s;
  }
  SignalBatchAck Signals(const std::vector<Signal>& signals) {
    SignalBatch batch;
    batch.set_sequence(++sequence_);
    for (const Signal& s : signals) *batch.add_signals() = s;
    absl::StatusOr<SignalBatchAck> ack = shard_->IngestSignals(batch, now_);
    EXPECT_TRUE(ack.ok()) << ack.status();
    return ack.ok() ? *ack : SignalBatchAck();
  }

  PeekTopResponse Peek(int k) {
    PeekTopRequest req;
    req.set_k(k);
    absl::StatusOr<PeekTopResponse> r = shard_->PeekTop(req, now_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : PeekTopResponse();
  }
  std::vector<std::string> PeekUrls(int k) {
    std::vector<std::string> urls;
    const PeekTopResponse peek = Peek(k);
    for (const Candidate& c : peek.candidates()) urls.push_back(c.url());
    return urls;
  }

  LeaseResponse Lease(int slots, double duration = 0.0, const std::string& holder = "fetcher") {
    LeaseRequest req;
    for (int i = 0; i < slots; ++i) req.add_slot_times(now_);
    req.set_holder(holder);
    req.set_lease_duration(duration);
    absl::StatusOr<LeaseResponse> r = shard_->Lease(req, now_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : LeaseResponse();
  }

  static CrawlReport ByLease(uint64_t lease_id, double fetch_time, CrawlOutcome outcome) {
    CrawlReport r;
    r.set_lease_id(lease_id);
    r.set_fetch_time(fetch_time);
    r.set_outcome(outcome);
    return r;
  }
  static CrawlReport ByUrl(const std::string& url, double fetch_time, CrawlOutcome outcome) {
    CrawlReport r;
    r.set_url(url);
    r.set_fetch_time(fetch_time);
    r.set_outcome(outcome);
    return r;
  }
  ReportCrawlsResponse Report(const std::vector<CrawlReport>& reports) {
    ReportCrawlsRequest req;
    for (const CrawlReport& r : reports) *req.add_reports() = r;
    absl::StatusOr<ReportCrawlsResponse> r = shard_->ReportCrawls(req, now_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : ReportCrawlsResponse();
  }

  UrlState State(const std::string& url) {
    GetUrlStateRequest req;
    req.set_url(url);
    absl::StatusOr<UrlState> s = shard_->GetUrlState(req, now_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : UrlState();
  }
  absl::StatusCode StateCode(const std::string& url) {
    GetUrlStateRequest req;
    req.set_url(url);
    return shard_->GetUrlState(req, now_).status().code();
  }

  std::string dir_;
  ShardOptions options_;
  double now_ = 1000.0;
  uint64_t sequence_ = 0;
  std::unique_ptr<Shard> shard_;
  UrlStore* store_ = nullptr;  // shard_'s
};

}  // namespace testing
}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SHARD_TEST_UTIL_H_
