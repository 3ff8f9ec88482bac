// Upsert, delete and GetUrlState of the shard core.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::HasSubstr;
using ShardUrlsTest = testing::ShardTest;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_F(ShardUrlsTest, UpsertCreatesThenUpdates) {
  UpsertUrlsResponse r = Upsert({Spec("HTTPS://Example.COM:443/a#frag", 2.0, 0.01, 0.3, 0.002),
                                 Spec("http://example.com/b")});
  EXPECT_EQ(r.result().applied(), 2u);
  EXPECT_EQ(r.created(), 2u);
  EXPECT_EQ(r.result().rejected_size(), 0);

  // Normalised form is the identity.
  UrlState a = State("https://example.com/a");
  EXPECT_EQ(a.url(), "https://example.com/a");
  EXPECT_EQ(a.politeness_host(), "example.com");
  EXPECT_EQ(a.importance(), 2.0);
  EXPECT_DOUBLE_EQ(a.prior().change_rate(), 0.01);
  EXPECT_DOUBLE_EQ(a.prior().recall(), 0.3);
  EXPECT_DOUBLE_EQ(a.prior().false_rate(), 0.002);
  EXPECT_NEAR(a.estimate().change_rate(), 0.01, 1e-8);
  EXPECT_EQ(a.last_crawl_time(), now_);  // registered now
  EXPECT_EQ(a.observed_crawls(), 0u);

  // Defaults where the prior is left out.
  UrlState b = State("http://example.com/b");
  EXPECT_DOUBLE_EQ(b.prior().change_rate(), options_.default_change_rate);
  EXPECT_DOUBLE_EQ(b.prior().recall(), options_.default_recall);

  // An update replaces the given fields and keeps the rest.
  UrlSpec update = Spec("https://example.com/a", 5.0);
  update.mutable_prior()->set_recall(0.9);
  update.set_politeness_host("Example.com.");
  now_ += 10;
  r = Upsert({update});
  EXPECT_EQ(r.result().applied(), 1u);
  EXPECT_EQ(r.created(), 0u);
  a = State("https://example.com/a");
  EXPECT_EQ(a.importance(), 5.0);
  EXPECT_DOUBLE_EQ(a.prior().change_rate(), 0.01);
  EXPECT_DOUBLE_EQ(a.prior().recall(), 0.9);
  EXPECT_NEAR(a.estimate().recall(), 0.9, 1e-6);
  EXPECT_EQ(a.last_crawl_time(), 1000.0);  // crawl state kept
}

TEST_F(ShardUrlsTest, NewUrlKeepsGivenLastCrawlTime) {
  UrlSpec s = Spec("https://example.com/");
  s.set_last_crawl_time(400.0);
  Upsert({s});
  EXPECT_EQ(State("https://example.com/").last_crawl_time(), 400.0);
}

// Each bad item gets its own status naming the field; the rest applies.
TEST_F(ShardUrlsTest, RejectsBadItemsAndAppliesTheRest) {
  UrlSpec future = Spec("https://ok.com/future");
  future.set_last_crawl_time(now_ + 1e6);
  UrlSpec infinite_time = Spec("https://ok.com/inf");
  infinite_time.set_last_crawl_time(kInf);
  UrlSpec bad_host = Spec("https://ok.com/host");
  bad_host.set_politeness_host("exa mple.com");
  const std::vector<UrlSpec> specs = {
      Spec("ftp://example.com/"),                        // 0
      Spec("https://ok.com/1", kNaN),                    // 1
      Spec("https://ok.com/2", -1.0),                    // 2
      Spec("https://ok.com/3", 1e300),                   // 3
      Spec("https://ok.com/4", 1.0, 0.1, 1.5, 0.0),      // 4
      Spec("https://ok.com/5", 1.0, -0.1, 0.5, 0.0),     // 5
      Spec("https://ok.com/6", 1.0, 0.1, 0.5, kNaN),     // 6
      Spec("https://ok.com/7", 1.0, kInf, 0.5, 0.0),     // 7
      future,                                            // 8
      infinite_time,                                     // 9
      bad_host,                                          // 10
      Spec("https://ok.com/good"),                       // 11
      Spec("https://OK.com/good"),                       // 12: same URL
      Spec(""),                                          // 13
      Spec("https://ok.com/" + std::string(5000, 'x')),  // 14
  };
  const UpsertUrlsResponse r = Upsert(specs);
  EXPECT_EQ(r.result().applied(), 1u);
  ASSERT_EQ(r.result().rejected_size(), 14);
  const struct {
    int code;
    const char* field;
  } want[] = {
      {3, "url:"},
      {3, "importance:"},
      {3, "importance:"},
      {3, "importance:"},
      {3, "prior.recall:"},
      {3, "prior.change_rate:"},
      {3, "prior.false_rate:"},
      {3, "prior.change_rate:"},
      {11, "last_crawl_time:"},
      {3, "last_crawl_time:"},
      {3, "politeness_host:"},
      {3, "item 11"},
      {3, "url:"},
      {3, "url:"},
  };
  const int index[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14};
  for (int k = 0; k < 14; ++k) {
    const ItemStatus& s = r.result().rejected(k);
    EXPECT_EQ(s.index(), static_cast<uint32_t>(index[k]));
    EXPECT_EQ(s.code(), want[k].code) << s.message();
    EXPECT_THAT(s.message(), HasSubstr(want[k].field));
  }
  EXPECT_EQ(State("https://ok.com/good").url(), "https://ok.com/good");
  EXPECT_EQ(shard_->GetStats(now_).urls(), 1u);
}

// A batch large enough that its new pages are made while it is written
// (Shard::CommitAlongside): updates, new URLs, a repeat and bad items in
// one, each answered for itself, all held in memory and after a restart.
TEST_F(ShardUrlsTest, ABulkBatchMixesNewExistingAndBadItems) {
  std::vector<UrlSpec> first;
  for (int i = 0; i < 100; ++i) {
    first.push_back(Spec(absl::StrCat("https://h", i % 7, ".com/old/", i), 1.0));
  }
  ASSERT_EQ(Upsert(first).created(), 100u);

  std::vector<UrlSpec> bulk;
  for (int i = 0; i < 100; ++i) {  // 0..99: updates
    bulk.push_back(Spec(absl::StrCat("https://h", i % 7, ".com/old/", i), 2.0 + i));
  }
  for (int i = 0; i < 200; ++i) {  // 100..299: new
    bulk.push_back(Spec(absl::StrCat("https://h", i % 13, ".com/new/", i), 0.5 + i));
  }
  bulk.push_back(Spec("https://H7.com/new/7", 9.0));  // 300: a repeat of 107
  bulk.push_back(Spec("ftp://h1.com/x"));             // 301: not http(s)
  bulk.push_back(Spec("https://h1.com/y", -1.0));     // 302: bad importance
  ASSERT_GE(bulk.size(), Shard::kOverlappedItems);
  const UpsertUrlsResponse r = Upsert(bulk);
  EXPECT_EQ(r.result().applied(), 300u);
  EXPECT_EQ(r.created(), 200u);
  ASSERT_EQ(r.result().rejected_size(), 3);
  EXPECT_EQ(r.result().rejected(0).index(), 300u);
  EXPECT_THAT(r.result().rejected(0).message(), HasSubstr("item 107"));
  EXPECT_EQ(r.result().rejected(1).index(), 301u);
  EXPECT_EQ(r.result().rejected(2).index(), 302u);

  auto check = [&] {
    EXPECT_EQ(shard_->GetStats(now_).urls(), 300u);
    for (int i = 0; i < 100; ++i) {
      EXPECT_EQ(State(absl::StrCat("https://h", i % 7, ".com/old/", i)).importance(), 2.0 + i);
    }
    for (int i = 0; i < 200; ++i) {
      const UrlState s = State(absl::StrCat("https://h", i % 13, ".com/new/", i));
      EXPECT_EQ(s.importance(), 0.5 + i);
      EXPECT_EQ(s.politeness_host(), absl::StrCat("h", i % 13, ".com"));
    }
  };
  check();
  // Every URL is leasable: the new pages are in the index.
  LeaseRequest lease;
  for (int i = 0; i < 301; ++i) lease.add_slot_times(now_);
  lease.set_holder("f");
  absl::StatusOr<LeaseResponse> leased = shard_->Lease(lease, now_);
  ASSERT_TRUE(leased.ok()) << leased.status();
  EXPECT_EQ(leased->leases_size(), 300);
  Open();  // a restart
  check();
}

TEST_F(ShardUrlsTest, OversizedBatchIsRejectedWhole) {
  options_.max_batch_items = 3;
  Open();
  UpsertUrlsRequest req;
  for (int i = 0; i < 4; ++i) {
    *req.add_urls() = Spec(absl::StrCat("https://a.com/", i));
  }
  absl::StatusOr<UpsertUrlsResponse> r = shard_->UpsertUrls(req, now_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("urls: 4 items"));
  EXPECT_EQ(shard_->GetStats(now_).urls(), 0u);
  // An empty batch is valid and does nothing.
  EXPECT_TRUE(shard_->UpsertUrls(UpsertUrlsRequest(), now_).ok());
}

TEST_F(ShardUrlsTest, DeleteRemovesEverything) {
  Add("https://a.com/1");
  Add("https://a.com/2");
  DeleteUrlsRequest req;
  req.add_urls("https://A.com/1");
  req.add_urls("https://a.com/unknown");
  req.add_urls("not a url");
  absl::StatusOr<DeleteUrlsResponse> r = shard_->DeleteUrls(req, now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result().applied(), 1u);
  ASSERT_EQ(r->result().rejected_size(), 2);
  EXPECT_EQ(r->result().rejected(0).code(), 5);  // NOT_FOUND
  EXPECT_EQ(r->result().rejected(1).code(), 3);
  EXPECT_EQ(StateCode("https://a.com/1"), absl::StatusCode::kNotFound);
  EXPECT_EQ(PeekUrls(10), std::vector<std::string>{"https://a.com/2"});
  // Gone after a restart too.
  Open();
  EXPECT_EQ(StateCode("https://a.com/1"), absl::StatusCode::kNotFound);
  EXPECT_EQ(shard_->GetStats(now_).urls(), 1u);
}

// A URL is owned by the shard of its site (registrable domain): a host of
// the site owned elsewhere is refused with FAILED_PRECONDITION.
TEST_F(ShardUrlsTest, OwnershipFollowsTheSitesJumpHash) {
  options_.num_shards = 4;
  options_.shard_index = 0;
  Recreate();
  int ours = 0, others = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string site = absl::StrCat("site", i, ".com");
    const UpsertUrlsResponse r = Upsert({Spec("https://www." + site + "/")});
    if (cluster::ShardOfHost(site, 4) == 0) {
      EXPECT_EQ(r.result().applied(), 1u);
      ++ours;
    } else {
      ASSERT_EQ(r.result().rejected_size(), 1);
      EXPECT_EQ(r.result().rejected(0).code(), 9);  // FAILED_PRECONDITION
      EXPECT_THAT(r.result().rejected(0).message(), HasSubstr("url: host"));
      ++others;
    }
  }
  EXPECT_GT(ours, 0);
  EXPECT_GT(others, 0);
  EXPECT_EQ(shard_->GetStats(now_).routing(), "site");
}

// A politeness group stays within the shard that owns its URLs: a host of
// the URL's site may be given, another site's is refused naming the field,
// and the URL keeps a single owner.
TEST_F(ShardUrlsTest, APolitenessHostMustBeOfTheUrlsSite) {
  options_.num_shards = 2;
  options_.shard_index = 0;
  Recreate();
  std::string site, other;
  for (int i = 0; site.empty() || other.empty(); ++i) {
    const std::string s = absl::StrCat("site", i, ".com");
    (cluster::ShardOfHost(s, 2) == 0 ? site : other) = s;
  }
  UrlSpec spec = Spec("https://num25." + site + "/x");
  spec.set_politeness_host(site);
  EXPECT_EQ(Upsert({spec}).result().applied(), 1u);
  EXPECT_EQ(State("https://num25." + site + "/x").politeness_host(), site);
  spec.set_politeness_host(other);
  const UpsertUrlsResponse r = Upsert({spec});
  ASSERT_EQ(r.result().rejected_size(), 1);
  EXPECT_EQ(r.result().rejected(0).code(), 3);  // INVALID_ARGUMENT
  EXPECT_THAT(r.result().rejected(0).message(), HasSubstr("politeness_host"));
}

// A store keeps the routing it was made with: one made by host routing
// (as every store before site routing) reopens by host, and a shard told
// to route it by site refuses to start rather than misplace its URLs.
TEST_F(ShardUrlsTest, AStoreKeepsItsRouting) {
  options_.routing = cluster::Routing::kHost;
  Recreate();
  EXPECT_EQ(shard_->GetStats(now_).routing(), "host");
  options_.routing.reset();
  Open();
  EXPECT_EQ(shard_->GetStats(now_).routing(), "host");
  shard_.reset();
  options_.routing = cluster::Routing::kSite;
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  absl::StatusOr<std::unique_ptr<Shard>> shard = Shard::Open(*std::move(store), options_, now_);
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(shard.status().message(), HasSubstr("routes URLs by host"));
}

TEST_F(ShardUrlsTest, StoreOfAnotherShardIsRefused) {
  shard_.reset();
  options_.num_shards = 2;
  options_.shard_index = 1;
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  absl::StatusOr<std::unique_ptr<Shard>> shard = Shard::Open(*std::move(store), options_, now_);
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(shard.status().message(), HasSubstr("shard 0 of 1"));
}

TEST_F(ShardUrlsTest, GetUrlStateDerivesValuesAtTheGivenTime) {
  Upsert({Spec("https://a.com/", 1.0, 0.01, 0.5, 0.001)});
  GetUrlStateRequest req;
  req.set_url("https://a.com/");
  req.set_time(now_ + 100);
  absl::StatusOr<UrlState> s = shard_->GetUrlState(req, now_);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->time(), now_ + 100);
  EXPECT_DOUBLE_EQ(s->effective_elapsed(), 100.0);
  // P(fresh) = exp(−α τ), α = (1 − λ)Δ.
  EXPECT_NEAR(s->fresh_probability(), std::exp(-0.005 * 100), 1e-6);
  EXPECT_GT(s->crawl_value(), 0.0);
  req.set_time(now_ + 1000);
  EXPECT_GT(shard_->GetUrlState(req, now_)->crawl_value(), s->crawl_value());
  EXPECT_FALSE(s->has_lease());
  EXPECT_EQ(StateCode("https://a.com/unknown"), absl::StatusCode::kNotFound);
  EXPECT_EQ(StateCode("mailto:x"), absl::StatusCode::kInvalidArgument);
  req.set_time(-1);
  absl::StatusOr<UrlState> negative = shard_->GetUrlState(req, now_);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.status().message(), HasSubstr("time: must be finite and >= 0"));
}

TEST_F(ShardUrlsTest, AnUnknownUrlIsSaidToBeUnknown) {
  GetUrlStateRequest req;
  req.set_url("https://nowhere.example/");
  absl::StatusOr<UrlState> s = shard_->GetUrlState(req, now_);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.status().message(), "url: not known");
}

TEST_F(ShardUrlsTest, NegativeZeroImportanceIsStoredAsZero) {
  Upsert({Spec("https://a.com/", -0.0)});
  const UrlState s = State("https://a.com/");
  EXPECT_EQ(s.importance(), 0.0);
  EXPECT_FALSE(std::signbit(s.importance()));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
