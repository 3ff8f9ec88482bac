// The client library and recrawlctl against real processes: two
// shard_servers and a coordinator_server on loopback with role tokens.
// A crawl cycle through the clients, signals through the coordinator and
// straight to the shards, role errors surfaced, and the clients carrying on
// across a coordinator restart on the same port.
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/clock.h"
#include "services/server_process.h"

namespace recrawl {
namespace client {
namespace {

using ::testing::HasSubstr;
using services::ServerProcess;

constexpr char kInternal[] = "internal-token-0123456789";
constexpr char kFetcher[] = "fetcher-token-0123456789";
constexpr char kPinger[] = "pinger-token-0123456789";
constexpr char kOperator[] = "operator-token-0123456789";
constexpr int kShards = 2;

std::string HostUrl(int i) {
  return absl::StrCat("https://host", i, ".example/page");
}

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "client_cluster_",
                        ::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/tokens")
        << "internal " << kInternal << "\nfetcher " << kFetcher << "\npinger "
        << kPinger << "\noperator " << kOperator << "\n";
    for (int s = 0; s < kShards; ++s) {
      const std::string name = absl::StrCat(dir_, "/shard", s);
      ASSERT_TRUE(shards_[s]
                      .Start("services/shard_server",
                             {"--data_dir=" + name, "--port=0",
                              "--host=127.0.0.1",
                              absl::StrCat("--shard_index=", s),
                              absl::StrCat("--num_shards=", kShards),
                              "--token_file=" + dir_ + "/tokens",
                              "--drain_seconds=1"},
                             name + ".port", name + ".log")
                      .ok());
    }
    StartCoordinator(0);
  }

  void StartCoordinator(int port) {
    ASSERT_TRUE(
        coordinator_
            .Start("services/coordinator_server",
                   {absl::StrCat("--shards=127.0.0.1:", shards_[0].port(),
                                 ",127.0.0.1:", shards_[1].port()),
                    absl::StrCat("--num_shards=", kShards), "--bandwidth=200",
                    absl::StrCat("--port=", port), "--host=127.0.0.1",
                    "--token_file=" + dir_ + "/tokens", "--drain_seconds=1"},
                   dir_ + "/coordinator.port", dir_ + "/coordinator.log")
            .ok());
  }

  ClientOptions Options(const std::string& token) const {
    ClientOptions o;
    o.target = absl::StrCat("127.0.0.1:", coordinator_.port());
    o.token = token;
    o.deadline = absl::Seconds(10);
    o.backoff.initial = absl::Milliseconds(20);
    o.backoff.max = absl::Milliseconds(200);
    o.max_attempts = 50;  // ~10 s: generous for a restart on a loaded machine
    return o;
  }

  // The URLs of hosts 0..n-1, crawled an hour ago.
  void Upsert(int n) {
    std::vector<UrlSpec> urls(n);
    for (int i = 0; i < n; ++i) {
      urls[i].set_url(HostUrl(i));
      urls[i].set_importance(1.0 + i);
      urls[i].set_last_crawl_time(services::Clock::UnixNow() - 3600);
    }
    auto response = AdminClient(Options(kOperator)).UpsertUrls(urls);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->created(), static_cast<uint32_t>(n));
  }

  std::string dir_;
  ServerProcess shards_[kShards];
  ServerProcess coordinator_;
};

TEST_F(ClusterTest, LeaseAndReportThroughTheFetcherClient) {
  Upsert(6);
  FetcherOptions f;
  f.holder = "cluster-test";
  f.lookahead = 1.0;
  f.max_wait = absl::Seconds(20);
  FetcherClient fetcher(Options(kFetcher), f);
  std::vector<CoordinatorLease> leased;
  while (leased.size() < 6) {
    auto urls = fetcher.Lease(6 - static_cast<int>(leased.size()));
    ASSERT_TRUE(urls.ok()) << urls.status();
    ASSERT_FALSE(urls->empty());
    leased.insert(leased.end(), urls->begin(), urls->end());
  }
  std::vector<CrawlReport> reports;
  for (const CoordinatorLease& lease : leased) {
    CrawlReport r;
    r.set_lease_id(lease.lease_id());
    r.set_fetch_time(lease.slot_time());
    r.set_outcome(CRAWL_OUTCOME_CHANGED);
    reports.push_back(r);
  }
  auto response = fetcher.Report(reports);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().applied(), 6u);
  // A second report of the same lease is refused, not counted twice.
  response = fetcher.Report({reports[0]});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->result().rejected_size(), 1);
  EXPECT_EQ(response->result().rejected(0).code(),
            static_cast<int>(absl::StatusCode::kNotFound));

  auto state = AdminClient(Options(kOperator)).GetUrlState(leased[0].url());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->observed_crawls(), 1u);
}

TEST_F(ClusterTest, RolesAreEnforcedAndSurfaced) {
  auto set = AdminClient(Options(kFetcher)).SetBandwidth(5, {});
  EXPECT_EQ(set.status().code(), absl::StatusCode::kPermissionDenied);
  set = AdminClient(Options("no-such-token-0123456789")).SetBandwidth(5, {});
  EXPECT_EQ(set.status().code(), absl::StatusCode::kUnauthenticated);
  set = AdminClient(Options(kOperator))
            .SetBandwidth(5, COORDINATOR_MODE_SPLIT_ADAPTIVE);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->bandwidth(), 5.0);
  EXPECT_EQ(set->mode(), COORDINATOR_MODE_SPLIT_ADAPTIVE);
}

TEST_F(ClusterTest, SignalsThroughTheCoordinatorAndStraightToTheShards) {
  Upsert(10);
  const double now = services::Clock::UnixNow();
  for (bool route : {false, true}) {
    PingOptions p;
    p.batch_size = 4;
    p.route_to_shards = route;
    p.shard_token = kInternal;
    auto pinger = PingClient::Create(Options(kPinger), p);
    ASSERT_TRUE(pinger.ok()) << pinger.status();
    EXPECT_EQ((*pinger)->routed_shards(), route ? kShards : 0);
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
  auto state = AdminClient(Options(kOperator)).GetUrlState(HostUrl(3));
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->signals_since_crawl(), 2u);
}

TEST_F(ClusterTest, ClientsCarryOnAcrossACoordinatorRestart) {
  Upsert(4);
  AdminClient admin(Options(kOperator));
  auto pinger = PingClient::Create(Options(kPinger), {});
  ASSERT_TRUE(pinger.ok());
  ASSERT_TRUE(admin.GetClusterStats().ok());
  Signal s;
  s.set_url(HostUrl(1));
  s.set_time(services::Clock::UnixNow() - 20);
  ASSERT_TRUE((*pinger)->Add(s).ok());
  ASSERT_TRUE((*pinger)->Flush().ok());  // its stream is open now
  const int port = coordinator_.port();
  EXPECT_EQ(coordinator_.Stop(SIGTERM), 0);
  StartCoordinator(port);
  ASSERT_EQ(coordinator_.port(), port);

  auto stats = admin.GetClusterStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->num_shards(), static_cast<uint32_t>(kShards));
  s.set_time(services::Clock::UnixNow() - 10);
  ASSERT_TRUE((*pinger)->Add(s).ok());
  absl::Status flushed = (*pinger)->Flush();
  ASSERT_TRUE(flushed.ok()) << flushed;
  EXPECT_EQ((*pinger)->stats().counted, 2u);
  EXPECT_TRUE((*pinger)->TakeRejected().empty());
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

TEST_F(ClusterTest, RecrawlctlExitCodes) {
  const std::string target =
      absl::StrCat("--target=127.0.0.1:", coordinator_.port());
  const std::string csv = dir_ + "/urls.csv";
  std::ofstream(csv) << "url,importance\n" << HostUrl(1) << ",2\nftp://x/,1\n";
  std::string out;
  EXPECT_EQ(RunCtl(absl::StrCat(target, " --token=", kOperator, " urls add ",
                                csv),
                   &out),
            1)
      << out;
  EXPECT_THAT(out, HasSubstr("urls.csv:3: INVALID_ARGUMENT"));
  EXPECT_THAT(out, HasSubstr("1 URLs upserted (1 new)"));
  out.clear();
  EXPECT_EQ(RunCtl(absl::StrCat(target, " --token=", kFetcher,
                                " bandwidth set 3"),
                   &out),
            1)
      << out;
  EXPECT_THAT(out, HasSubstr("PERMISSION_DENIED"));
  out.clear();
  EXPECT_EQ(RunCtl(absl::StrCat(target, " --token=", kOperator, " stats"),
                   &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("shards 2 live of 2"));
  out.clear();
  EXPECT_EQ(RunCtl(target + " urls", &out), 2) << out;
}

}  // namespace
}  // namespace client
}  // namespace recrawl
