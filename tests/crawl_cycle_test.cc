// The crawl cycle end to end, through the client library and recrawlctl
// against real shard_server and coordinator_server processes (LocalCluster,
// role tokens on): lease and report, signals (through the coordinator and
// straight to the shards) raising a URL's rank, URLs nobody registered,
// and a host's politeness.
#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace recrawl {
namespace tests {
namespace {

using cluster::Role;
using ::testing::HasSubstr;

class CrawlCycleTest : public ClusterTest {
 protected:
  void SetUp() override {
    deploy::LocalClusterOptions o = TestClusterOptions(2);
    o.bandwidth = 200;
    StartCluster(std::move(o));
  }

  client::FetcherClient Fetcher(double lookahead = 1.0) const {
    client::FetcherOptions f;
    f.holder = "crawl-cycle-test";
    f.lookahead = lookahead;
    f.max_wait = absl::Seconds(30);
    return client::FetcherClient(Options(cluster::Role::kFetcher), f);
  }

  // Leases until `count` URLs are out (or the fetcher gives up).
  std::vector<CoordinatorLease> LeaseAtLeast(client::FetcherClient& fetcher, int count) {
    std::vector<CoordinatorLease> leased;
    while (static_cast<int>(leased.size()) < count) {
      absl::StatusOr<std::vector<CoordinatorLease>> urls =
          fetcher.Lease(count - static_cast<int>(leased.size()));
      EXPECT_TRUE(urls.ok()) << urls.status();
      if (!urls.ok() || urls->empty()) break;
      leased.insert(leased.end(), urls->begin(), urls->end());
    }
    return leased;
  }

  CrawlReport ReportOf(const CoordinatorLease& lease, CrawlOutcome outcome) {
    CrawlReport r;
    r.set_lease_id(lease.lease_id());
    r.set_fetch_time(cluster_->Now());
    r.set_outcome(outcome);
    return r;
  }
};

TEST_F(CrawlCycleTest, LeaseAndReportThroughTheFetcherClient) {
  UpsertHosts(0, 6, cluster_->Now() - 3600);
  client::FetcherClient fetcher = Fetcher();
  const std::vector<CoordinatorLease> leased = LeaseAtLeast(fetcher, 6);
  ASSERT_EQ(leased.size(), 6u);
  // The URL's state shows the lease with the id the fetcher holds.
  for (const CoordinatorLease& lease : leased) {
    absl::StatusOr<UrlState> state = Admin().GetUrlState(lease.url());
    ASSERT_TRUE(state.ok()) << state.status();
    ASSERT_TRUE(state->has_lease()) << lease.url();
    EXPECT_EQ(state->lease().lease_id(), lease.lease_id()) << lease.url();
    EXPECT_EQ(state->lease().holder(), "crawl-cycle-test");
  }
  std::vector<CrawlReport> reports;
  for (const CoordinatorLease& lease : leased) {
    reports.push_back(ReportOf(lease, CRAWL_OUTCOME_CHANGED));
  }
  absl::StatusOr<ReportCrawlsResponse> response = fetcher.Report(reports);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().applied(), 6u);
  EXPECT_EQ(response->changed(), 6u);
  // A second report of the same lease is refused, not counted twice.
  response = fetcher.Report({reports[0]});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->result().rejected_size(), 1);
  EXPECT_EQ(response->result().rejected(0).code(), static_cast<int>(absl::StatusCode::kNotFound));

  absl::StatusOr<UrlState> state = Admin().GetUrlState(leased[0].url());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->observed_crawls(), 1u);
  EXPECT_EQ(state->last_crawl_time(), reports[0].fetch_time());
  EXPECT_FALSE(state->has_lease());
}

TEST_F(CrawlCycleTest, SignalsThroughTheCoordinatorAndStraightToTheShards) {
  UpsertHosts(0, 10, cluster_->Now() - 3600);
  const double now = cluster_->Now();
  for (bool route : {false, true}) {
    client::PingOptions p;
    p.batch_size = 4;
    p.route_to_shards = route;
    p.shard_token = cluster_->TokenOf(cluster::Role::kInternal);
    auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), p);
    ASSERT_TRUE(pinger.ok()) << pinger.status();
    EXPECT_EQ((*pinger)->routed_shards(), route ? 2 : 0);
    for (int i = 0; i < 10; ++i) {
      Signal s;
      s.set_url(HostUrl(i));
      s.set_time(now - (route ? 100 : 200) + i);
      s.set_source(SIGNAL_SOURCE_CDN);
      ASSERT_TRUE((*pinger)->Add(s).ok());
    }
    Signal bad;
    bad.set_url("not a url");
    ASSERT_TRUE((*pinger)->Add(bad).ok());
    absl::Status flushed = (*pinger)->Flush();
    ASSERT_TRUE(flushed.ok()) << flushed;
    EXPECT_EQ((*pinger)->stats().counted, 10u) << "route " << route;
    const auto rejected = (*pinger)->TakeRejected();
    ASSERT_EQ(rejected.size(), 1u);
    EXPECT_EQ(rejected[0].signal.url(), "not a url");
    EXPECT_EQ(rejected[0].status.code(), absl::StatusCode::kInvalidArgument);
  }
  absl::StatusOr<UrlState> state = Admin().GetUrlState(HostUrl(3));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->signals_since_crawl(), 2u);
}

TEST_F(CrawlCycleTest, ASignalRaisesAUrlsRank) {
  // Eight alike URLs; the one with signals must come first.
  std::vector<UrlSpec> urls;
  for (int i = 0; i < 8; ++i) {
    UrlSpec spec = HostSpec(i, cluster_->Now() - 3600);
    spec.set_importance(1.0);
    urls.push_back(spec);
  }
  ASSERT_TRUE(Admin().UpsertUrls(urls).ok());
  absl::StatusOr<UrlState> before = Admin().GetUrlState(HostUrl(5));
  ASSERT_TRUE(before.ok()) << before.status();

  auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), {});
  ASSERT_TRUE(pinger.ok()) << pinger.status();
  for (int k = 0; k < 3; ++k) {
    Signal s;
    s.set_url(HostUrl(5));
    s.set_time(cluster_->Now() - 60 + k);
    s.set_source(SIGNAL_SOURCE_INDEXNOW);
    ASSERT_TRUE((*pinger)->Add(s).ok());
  }
  ASSERT_TRUE((*pinger)->Flush().ok());
  EXPECT_EQ((*pinger)->stats().counted, 3u);

  absl::StatusOr<UrlState> after = Admin().GetUrlState(HostUrl(5));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->signals_since_crawl(), 3u);
  EXPECT_GT(after->effective_elapsed(), before->effective_elapsed());
  EXPECT_GT(after->crawl_value(), before->crawl_value());
  for (int i = 0; i < 8; ++i) {
    if (i == 5) continue;
    absl::StatusOr<UrlState> other = Admin().GetUrlState(HostUrl(i));
    ASSERT_TRUE(other.ok()) << other.status();
    EXPECT_GT(after->crawl_value(), other->crawl_value()) << HostUrl(i);
  }
  client::FetcherClient fetcher = Fetcher(/*lookahead=*/0.0);
  const std::vector<CoordinatorLease> first = LeaseAtLeast(fetcher, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].url(), HostUrl(5));
}

// What a fetcher can do with its leases besides reporting them: choose their
// duration, renew them, give them back, and read their URLs' state.
TEST_F(CrawlCycleTest, AFetcherChoosesRenewsAndReleasesItsLeases) {
  UpsertHosts(0, 4, cluster_->Now() - 3600);
  client::FetcherOptions f;
  f.holder = "lease-owner";
  f.lookahead = 1.0;
  f.max_wait = absl::Seconds(30);
  f.lease_duration = 30;
  client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
  const std::vector<CoordinatorLease> leased = LeaseAtLeast(fetcher, 4);
  ASSERT_EQ(leased.size(), 4u);
  for (const CoordinatorLease& l : leased) {
    EXPECT_DOUBLE_EQ(l.deadline(), l.slot_time() + 30) << l.url();
  }
  // The fetcher reads the state of a URL it holds.
  absl::StatusOr<UrlState> state = fetcher.GetUrlState(leased[0].url());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->lease().lease_id(), leased[0].lease_id());

  absl::StatusOr<FetchRenewResponse> renewed =
      fetcher.Renew({leased[0].lease_id(), leased[1].lease_id()}, 3600);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_EQ(renewed->result().applied(), 2u);
  ASSERT_EQ(renewed->deadlines_size(), 2);
  EXPECT_GT(renewed->deadlines(0), cluster_->Now() + 3500);

  // Given back, the others are leased again at once; the renewed ones not.
  absl::StatusOr<FetchReleaseResponse> released =
      fetcher.Release({leased[2].lease_id(), leased[3].lease_id()});
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(released->released(), 2u);
  const std::vector<CoordinatorLease> again = LeaseAtLeast(fetcher, 2);
  ASSERT_EQ(again.size(), 2u);
  std::set<std::string> urls = {again[0].url(), again[1].url()};
  EXPECT_EQ(urls, (std::set<std::string>{leased[2].url(), leased[3].url()}));
  // A released lease is not active any more.
  renewed = fetcher.Renew({leased[2].lease_id()}, 60);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  ASSERT_EQ(renewed->result().rejected_size(), 1);
  EXPECT_EQ(renewed->result().rejected(0).code(), static_cast<int>(absl::StatusCode::kNotFound));
}

TEST_F(CrawlCycleTest, UrlsNobodyRegisteredAreNamedAndNeverLeased) {
  UpsertHosts(0, 3, cluster_->Now() - 3600);
  const std::string unknown = HostUrl(777);
  absl::StatusOr<UrlState> state = Admin().GetUrlState(unknown);
  EXPECT_EQ(state.status().code(), absl::StatusCode::kNotFound) << state.status();

  // A signal for it is acknowledged and skipped (the shards run without
  // --register_unknown_urls), not counted; the pinger learns which one it
  // was.
  auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), {});
  ASSERT_TRUE(pinger.ok()) << pinger.status();
  Signal s;
  s.set_url(HostUrl(1));
  ASSERT_TRUE((*pinger)->Add(s).ok());
  s.set_url(unknown);
  ASSERT_TRUE((*pinger)->Add(s).ok());
  ASSERT_TRUE((*pinger)->Flush().ok());
  EXPECT_EQ((*pinger)->stats().unknown, 1u);
  EXPECT_EQ((*pinger)->stats().counted, 1u);
  const std::vector<Signal> skipped = (*pinger)->TakeUnknown();
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].url(), unknown);

  // A crawl report for it is rejected by item with NOT_FOUND; the known
  // URL beside it is applied.
  client::FetcherClient fetcher = Fetcher();
  std::vector<CrawlReport> reports(2);
  reports[0].set_url(unknown);
  reports[1].set_url(HostUrl(1));
  for (CrawlReport& r : reports) {
    r.set_fetch_time(cluster_->Now());
    r.set_outcome(CRAWL_OUTCOME_UNCHANGED);
  }
  absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->result().applied(), 1u);
  ASSERT_EQ(reported->result().rejected_size(), 1);
  EXPECT_EQ(reported->result().rejected(0).index(), 0u);
  EXPECT_EQ(reported->result().rejected(0).code(), static_cast<int>(absl::StatusCode::kNotFound));

  // Deleting it is NOT_FOUND too; and it is never leased: every lease is
  // one of the three registered URLs.
  absl::StatusOr<DeleteUrlsResponse> deleted = Admin().DeleteUrls({unknown});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_EQ(deleted->result().rejected_size(), 1);
  EXPECT_EQ(deleted->result().rejected(0).code(), static_cast<int>(absl::StatusCode::kNotFound));
  const std::vector<CoordinatorLease> leased = LeaseAtLeast(fetcher, 3);
  ASSERT_EQ(leased.size(), 3u);
  for (const CoordinatorLease& l : leased) EXPECT_LT(HostOfUrl(l.url()), 3);
  EXPECT_EQ(Admin().GetUrlState(unknown).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CrawlCycleTest, AHostsMinimumDelayAndBlockAreRespected) {
  // Host 0 holds four important pages that may be crawled once every
  // kDelay seconds; host 1 is blocked; hosts 2.. fill the other slots.
  constexpr double kDelay = 0.5;
  const double long_ago = cluster_->Now() - 3600;
  std::vector<UrlSpec> urls;
  for (int page = 0; page < 4; ++page) {
    UrlSpec spec = HostSpec(0, long_ago, page);
    spec.set_importance(50.0);
    urls.push_back(spec);
  }
  UrlSpec blocked = HostSpec(1, long_ago);
  blocked.set_importance(100.0);
  urls.push_back(blocked);
  for (int i = 2; i < 60; ++i) urls.push_back(HostSpec(i, long_ago));
  ASSERT_TRUE(Admin().UpsertUrls(urls).ok());
  std::vector<HostPoliteness> hosts(2);
  hosts[0].set_host("host0.example");
  hosts[0].set_min_delay(kDelay);
  hosts[1].set_host("host1.example");
  hosts[1].set_blocked_until(cluster_->Now() + 1e6);
  absl::StatusOr<SetHostPolitenessResponse> set = Admin().SetHostPoliteness(hosts);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->result().applied(), 2u);

  // Lease (and report at once) until host 0's four pages are out.
  client::FetcherClient fetcher = Fetcher();
  std::vector<double> host0_slots;
  int leased = 0;
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<std::vector<CoordinatorLease>> urls = fetcher.Lease(20);
    EXPECT_TRUE(urls.ok()) << urls.status();
    if (!urls.ok()) return true;
    std::vector<CrawlReport> reports;
    for (const CoordinatorLease& l : *urls) {
      ++leased;
      const int host = HostOfUrl(l.url());
      EXPECT_NE(host, 1) << "a blocked host was leased: " << l.url();
      if (host == 0) host0_slots.push_back(l.slot_time());
      reports.push_back(ReportOf(l, CRAWL_OUTCOME_UNCHANGED));
    }
    EXPECT_TRUE(fetcher.Report(reports).ok());
    return host0_slots.size() >= 4;
  })) << host0_slots.size()
      << " of host 0's pages leased";
  std::sort(host0_slots.begin(), host0_slots.end());
  for (size_t k = 1; k < host0_slots.size(); ++k) {
    EXPECT_GE(host0_slots[k] - host0_slots[k - 1], kDelay - 1e-6)
        << "host 0 leased at " << host0_slots[k - 1] << " and " << host0_slots[k];
  }
  // The other hosts filled the slots in between.
  EXPECT_GT(leased, 4);
  absl::StatusOr<UrlState> state = Admin().GetUrlState(HostUrl(1));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_FALSE(state->has_lease());
  EXPECT_GE(state->host_allowed_from(), cluster_->Now() + 1e5);
}

// recrawlctl against the real coordinator: a usage error, an RPC error, and
// a working command, by exit code.
int RunCtl(const std::string& args, std::string* output) {
  FILE* pipe = popen(("client/recrawlctl " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output->append(buffer, n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(CrawlCycleTest, RecrawlctlExitCodes) {
  const std::string target = "--target=" + cluster_->coordinator_address();
  const std::string operator_token = " --token=" + cluster_->TokenOf(cluster::Role::kOperator);
  const std::string csv = cluster_->options().data_dir + "/urls.csv";
  std::ofstream(csv) << "url,importance\n" << HostUrl(1) << ",2\nftp://x/,1\n";
  std::string out;
  EXPECT_EQ(RunCtl(absl::StrCat(target, operator_token, " urls add ", csv), &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("urls.csv:3: INVALID_ARGUMENT"));
  EXPECT_THAT(out, HasSubstr("1 URLs upserted (1 new)"));
  out.clear();
  EXPECT_EQ(RunCtl(absl::StrCat(target, " --token=", cluster_->TokenOf(cluster::Role::kFetcher),
                                " bandwidth set 3"),
                   &out),
            1)
      << out;
  EXPECT_THAT(out, HasSubstr("PERMISSION_DENIED"));
  out.clear();
  EXPECT_EQ(RunCtl(absl::StrCat(target, operator_token, " stats"), &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("shards 2 live of 2"));
  out.clear();
  EXPECT_EQ(RunCtl(target + " urls", &out), 2) << out;
}

}  // namespace
}  // namespace tests
}  // namespace recrawl
