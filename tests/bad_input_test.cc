// Bad input end to end against real processes: malformed URLs, NaN or
// negative importance, oversized batches, wrong or missing tokens, and
// garbage bytes on the servers' ports. Each gets a clear error that names
// the field; the servers stay up and the state they hold is intact.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/admin_client.h"
#include "client/credentials.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/coordinator.grpc.pb.h"
#include "proto/shard.grpc.pb.h"
#include "tests/cluster_fixture.h"

namespace recrawl {
namespace tests {
namespace {

using cluster::Role;
using ::testing::HasSubstr;

constexpr int kMaxBatch = 100;

class BadInputTest : public ClusterTest {
 protected:
  void SetUp() override {
    deploy::LocalClusterOptions o = TestClusterOptions(2);
    o.bandwidth = 50;
    o.coordinator_flags.push_back(absl::StrCat("--max_batch_items=", kMaxBatch));
    o.coordinator_flags.push_back("--max_lease_batch=50");
    StartCluster(std::move(o));
    UpsertHosts(0, 10, cluster_->Now() - 3600);
  }

  // The operator's options with `token` instead. Calls are still retried
  // after UNAVAILABLE (a connection that failed on a busy machine), never
  // after the refusals these tests look for.
  client::ClientOptions WithToken(const std::string& token) const {
    client::ClientOptions o = Options(cluster::Role::kOperator);
    o.token = token;
    return o;
  }

  // What the servers hold about hosts 0..9, as a string to compare.
  std::string Snapshot() {
    std::string all;
    for (int i = 0; i < 10; ++i) {
      absl::StatusOr<UrlState> s = Admin().GetUrlState(HostUrl(i));
      EXPECT_TRUE(s.ok()) << HostUrl(i) << ": " << s.status();
      if (!s.ok()) continue;
      absl::StrAppend(&all, s->url(), " ", s->importance(), " ", s->last_crawl_time(), " ",
                      s->signals_since_crawl(), " ", s->observed_crawls(), "\n");
    }
    return all;
  }

  // Every process still runs, and the cluster answers with every shard.
  void ExpectAllUp() {
    for (int s = 0; s < cluster_->num_shards(); ++s) {
      EXPECT_EQ(kill(cluster_->shard_pid(s), 0), 0) << "shard " << s << LogTail("shard0");
    }
    EXPECT_EQ(kill(cluster_->coordinator_pid(), 0), 0) << LogTail("coordinator");
    absl::StatusOr<ClusterStats> stats = Admin().GetClusterStats();
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->live_shards(), 2u);
  }
};

TEST_F(BadInputTest, MalformedUrlsAndImportanceAreRejectedByItem) {
  const std::string before = Snapshot();
  std::vector<UrlSpec> urls(8);
  urls[0] = HostSpec(20, cluster_->Now());
  urls[1].set_url("not a url");
  urls[2].set_url("ftp://host21.example/");
  urls[3].set_url("");
  urls[4] = HostSpec(22, cluster_->Now());
  urls[4].set_importance(std::nan(""));
  urls[5] = HostSpec(23, cluster_->Now());
  urls[5].set_importance(-1);
  urls[6] = HostSpec(24, cluster_->Now());
  urls[6].set_importance(std::numeric_limits<double>::infinity());
  urls[7] = HostSpec(25, cluster_->Now());
  urls[7].mutable_prior()->set_recall(1.5);
  absl::StatusOr<UpsertUrlsResponse> response = Admin().UpsertUrls(urls);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().applied(), 1u);
  ASSERT_EQ(response->result().rejected_size(), 7);
  const char* fields[] = {"url",        "scheme",     "url",   "importance",
                          "importance", "importance", "recall"};
  for (int k = 0; k < 7; ++k) {
    const ItemStatus& r = response->result().rejected(k);
    EXPECT_EQ(r.index(), static_cast<uint32_t>(k + 1));
    EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r.message();
    EXPECT_THAT(r.message(), HasSubstr(fields[k])) << "item " << k + 1;
  }
  for (int i : {22, 23, 24, 25}) {
    EXPECT_EQ(Admin().GetUrlState(HostUrl(i)).status().code(), absl::StatusCode::kNotFound);
  }

  // Reports and signals with bad fields, by item.
  client::FetcherClient fetcher(Options(cluster::Role::kFetcher), {});
  std::vector<CrawlReport> reports(4);
  reports[0].set_url(HostUrl(1));
  reports[0].set_fetch_time(std::nan(""));
  reports[1].set_url(HostUrl(2));
  reports[1].set_fetch_time(-5);
  reports[2].set_lease_id(uint64_t{200} << 56);  // names shard 200
  reports[3].set_url("https://");
  absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report(reports);
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->result().applied(), 0u);
  ASSERT_EQ(reported->result().rejected_size(), 4);
  EXPECT_THAT(reported->result().rejected(0).message(), HasSubstr("fetch_time"));
  EXPECT_THAT(reported->result().rejected(1).message(), HasSubstr("fetch_time"));
  EXPECT_THAT(reported->result().rejected(2).message(), HasSubstr("names shard 200"));
  EXPECT_THAT(reported->result().rejected(3).message(), HasSubstr("url"));

  auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), {});
  ASSERT_TRUE(pinger.ok()) << pinger.status();
  Signal nan_time;
  nan_time.set_url(HostUrl(3));
  nan_time.set_time(std::nan(""));
  Signal future;
  future.set_url(HostUrl(3));
  future.set_time(cluster_->Now() + 1e6);
  Signal no_host;
  no_host.set_url("http:///path");
  for (const Signal& s : {nan_time, future, no_host}) {
    ASSERT_TRUE((*pinger)->Add(s).ok());
  }
  ASSERT_TRUE((*pinger)->Flush().ok());
  const std::vector<client::RejectedSignal> rejected = (*pinger)->TakeRejected();
  ASSERT_EQ(rejected.size(), 3u);
  EXPECT_THAT(rejected[0].status.message(), HasSubstr("time"));
  EXPECT_THAT(rejected[1].status.message(), HasSubstr("time"));
  EXPECT_THAT(rejected[2].status.message(), HasSubstr("url"));
  EXPECT_EQ((*pinger)->stats().counted, 0u);

  EXPECT_EQ(Snapshot(), before);
  ExpectAllUp();
}

// A string field with invalid UTF-8 does not parse: the answer is
// INVALID_ARGUMENT naming the field, on the coordinator and on a shard, and
// a client repeating it does not flood the servers' logs.
TEST_F(BadInputTest, InvalidUtf8IsAnInvalidArgumentNamingTheField) {
  const std::string bad_url = "https://host1.example/\xff";
  auto coordinator = CoordinatorService::NewStub(
      grpc::CreateChannel(cluster_->coordinator_address(), grpc::InsecureChannelCredentials()));
  auto shard = ShardService::NewStub(
      grpc::CreateChannel(cluster_->shard_address(0), grpc::InsecureChannelCredentials()));
  constexpr int kTimes = 200;
  for (int i = 0; i < kTimes; ++i) {
    UpsertUrlsRequest request;
    request.add_urls()->set_url(bad_url);
    {
      grpc::ClientContext context;
      client::AttachToken(&context, cluster_->TokenOf(cluster::Role::kOperator));
      UpsertUrlsResponse response;
      const grpc::Status status = coordinator->UpsertUrls(&context, request, &response);
      ASSERT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr("url: not valid UTF-8"));
    }
    if (i > 0) continue;
    grpc::ClientContext context;
    client::AttachToken(&context, cluster_->TokenOf(cluster::Role::kInternal));
    UpsertUrlsResponse response;
    const grpc::Status status = shard->UpsertUrls(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("url: not valid UTF-8"));
  }
  // A signal stream whose batch does not parse ends with the reason.
  {
    grpc::ClientContext context;
    client::AttachToken(&context, cluster_->TokenOf(cluster::Role::kPinger));
    auto stream = coordinator->StreamSignals(&context);
    SignalBatch batch;
    batch.add_signals()->set_url(bad_url);
    stream->Write(batch);
    stream->WritesDone();
    SignalBatchAck ack;
    while (stream->Read(&ack)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("url: not valid UTF-8"));
  }
  // protobuf's line about each of them reaches the log at most 20 times in
  // any minute.
  std::ifstream in(absl::StrCat(cluster_->options().data_dir, "/coordinator.log"));
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t lines = 0;
  for (size_t at = log.find("invalid UTF-8"); at != std::string::npos;
       at = log.find("invalid UTF-8", at + 1)) {
    ++lines;
  }
  EXPECT_GT(lines, 0u);
  EXPECT_LE(lines, 25u) << LogTail("coordinator");
  ExpectAllUp();
}

TEST_F(BadInputTest, OversizedBatchesAreRefusedWhole) {
  const std::string before = Snapshot();
  client::ClientOptions big = Options(cluster::Role::kOperator);
  big.max_batch_items = 10 * kMaxBatch;
  std::vector<UrlSpec> urls;
  for (int i = 100; i < 100 + kMaxBatch + 1; ++i) {
    urls.push_back(HostSpec(i, cluster_->Now()));
  }
  absl::StatusOr<UpsertUrlsResponse> response = client::AdminClient(big).UpsertUrls(urls);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(response.status().message(), HasSubstr("urls: 101 items"));
  EXPECT_EQ(Admin().GetUrlState(HostUrl(100)).status().code(), absl::StatusCode::kNotFound);
  // Split into batches the coordinator takes, the same URLs all go in.
  client::ClientOptions split = Options(cluster::Role::kOperator);
  split.max_batch_items = kMaxBatch;
  response = client::AdminClient(split).UpsertUrls(urls);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().applied(), static_cast<uint32_t>(kMaxBatch + 1));

  client::FetcherClient fetcher(Options(cluster::Role::kFetcher), {});
  absl::StatusOr<FetchLeaseResponse> lease = fetcher.LeaseOnce(51);
  EXPECT_EQ(lease.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(lease.status().message(), HasSubstr("max_urls"));

  // A signal batch over the limit ends the stream; its signals come back
  // rejected with the reason, none counted.
  client::PingOptions p;
  p.batch_size = kMaxBatch + 1;
  auto pinger = client::PingClient::Create(Options(cluster::Role::kPinger), p);
  ASSERT_TRUE(pinger.ok()) << pinger.status();
  for (int k = 0; k < kMaxBatch + 1; ++k) {
    Signal s;
    s.set_url(HostUrl(k % 10));
    s.set_time(cluster_->Now() - 100 + k * 1e-3);
    (*pinger)->Add(s).IgnoreError();
  }
  (*pinger)->Flush().IgnoreError();
  const std::vector<client::RejectedSignal> rejected = (*pinger)->TakeRejected();
  ASSERT_EQ(rejected.size(), static_cast<size_t>(kMaxBatch + 1));
  EXPECT_EQ(rejected[0].status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(rejected[0].status.message(), HasSubstr("signals: 101 items"));
  EXPECT_EQ((*pinger)->stats().counted, 0u);

  EXPECT_EQ(Snapshot(), before);
  ExpectAllUp();
}

// Role tokens, at the coordinator and at the shards.
TEST_F(BadInputTest, WrongOrMissingTokensAreRefused) {
  const std::string before = Snapshot();
  auto set = client::AdminClient(WithToken(cluster_->TokenOf(cluster::Role::kFetcher)))
                 .SetBandwidth(5, {});
  EXPECT_EQ(set.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(set.status().message(), HasSubstr("SetBandwidth needs a token of role operator"));
  set = client::AdminClient(WithToken("no-such-token-0123456789")).SetBandwidth(5, {});
  EXPECT_EQ(set.status().code(), absl::StatusCode::kUnauthenticated);
  set = client::AdminClient(WithToken("")).SetBandwidth(5, {});
  EXPECT_EQ(set.status().code(), absl::StatusCode::kUnauthenticated);
  // A pinger may not lease, a fetcher may not delete URLs.
  client::FetcherOptions f;
  f.holder = "intruder";
  EXPECT_EQ(client::FetcherClient(WithToken(cluster_->TokenOf(cluster::Role::kPinger)), f)
                .LeaseOnce(1)
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(client::AdminClient(WithToken(cluster_->TokenOf(cluster::Role::kFetcher)))
                .DeleteUrls({HostUrl(1)})
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  // A signal stream with a wrong token: rejected with the reason.
  auto pinger = client::PingClient::Create(WithToken("no-such-token-0123456789"), {});
  if (pinger.ok()) {
    Signal s;
    s.set_url(HostUrl(1));
    (*pinger)->Add(s).IgnoreError();
    EXPECT_FALSE((*pinger)->Flush().ok() && (*pinger)->TakeRejected().empty());
    EXPECT_EQ((*pinger)->stats().counted, 0u);
  } else {
    EXPECT_EQ(pinger.status().code(), absl::StatusCode::kUnauthenticated);
  }

  // A shard takes only the internal role: not even an operator's token.
  for (int s = 0; s < cluster_->num_shards(); ++s) {
    auto shard = ShardService::NewStub(
        grpc::CreateChannel(cluster_->shard_address(s), grpc::InsecureChannelCredentials()));
    for (const std::string& token : {std::string(), cluster_->TokenOf(cluster::Role::kOperator)}) {
      grpc::ClientContext context;
      client::AttachToken(&context, token);
      DeleteUrlsRequest request;
      request.add_urls(HostUrl(1));
      DeleteUrlsResponse response;
      const grpc::Status status = shard->DeleteUrls(&context, request, &response);
      EXPECT_EQ(status.error_code(), token.empty() ? grpc::StatusCode::UNAUTHENTICATED
                                                   : grpc::StatusCode::PERMISSION_DENIED)
          << "shard " << s << ": " << status.error_message();
    }
  }
  // The operator still can, and nothing changed.
  set = Admin().SetBandwidth(60, COORDINATOR_MODE_SPLIT_ADAPTIVE);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->bandwidth(), 60.0);
  EXPECT_EQ(set->mode(), COORDINATOR_MODE_SPLIT_ADAPTIVE);
  EXPECT_EQ(Snapshot(), before);
  ExpectAllUp();
}

// Connects to 127.0.0.1:`port`, writes `bytes`, reads what comes back for
// a moment, and closes. Returns what was read.
std::string RawExchange(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    (void)!write(fd, bytes.data(), bytes.size());
    timeval timeout{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) answer.assign(buffer, n);
  }
  close(fd);
  return answer;
}

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

TEST_F(BadInputTest, GarbageOnThePortsLeavesTheServersUpAndTheStateIntact) {
  const std::string before = Snapshot();
  std::vector<int> ports = {PortOf(cluster_->coordinator_address())};
  for (int s = 0; s < cluster_->num_shards(); ++s) {
    ports.push_back(PortOf(cluster_->shard_address(s)));
  }
  std::mt19937 rng(7);
  std::string noise(64 << 10, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  // The HTTP/2 preface, then a frame header claiming a huge frame.
  const std::string preface("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\xff\xff\xff\x01", 28);
  for (int port : ports) {
    RawExchange(port, noise);
    RawExchange(port, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    RawExchange(port, preface + noise.substr(0, 1024));
    RawExchange(port, "");  // connect and hang up
  }
  // A connection left open with half a frame does not block the others.
  const int idle = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(ports[0]));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(idle, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  (void)!write(idle, preface.data(), 20);

  ExpectAllUp();
  EXPECT_EQ(Snapshot(), before);
  // And the crawl cycle still works.
  client::FetcherOptions f;
  f.holder = "after-garbage";
  f.lookahead = 1.0;
  f.max_wait = absl::Seconds(30);
  client::FetcherClient fetcher(Options(cluster::Role::kFetcher), f);
  absl::StatusOr<std::vector<CoordinatorLease>> leased = fetcher.Lease(3);
  ASSERT_TRUE(leased.ok()) << leased.status();
  ASSERT_FALSE(leased->empty());
  CrawlReport report;
  report.set_lease_id((*leased)[0].lease_id());
  report.set_fetch_time(cluster_->Now());
  report.set_outcome(CRAWL_OUTCOME_CHANGED);
  absl::StatusOr<ReportCrawlsResponse> reported = fetcher.Report({report});
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->result().applied(), 1u);
  close(idle);
  EXPECT_TRUE(cluster_->Stop().ok()) << LogTail("coordinator");
}

}  // namespace
}  // namespace tests
}  // namespace recrawl
