// recrawlctl's commands against a fake coordinator: what they send, what
// they print, per-line errors of an import, and the exit codes.
#include "client/cli_commands.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
#include "client/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

using ::testing::HasSubstr;

class CliCommandsTest : public ::testing::Test {
 protected:
  CliCommandsTest() : server_(&fake_) { server_.Start(); }

  int Run(const std::vector<std::string>& args, const std::string& input = "") {
    in_.str(input);
    in_.clear();
    out_.str("");
    err_.str("");
    ClientOptions options = TestOptions(server_.target(), &waits_);
    options.max_attempts = 2;
    options.max_batch_items = flags_.batch_size;
    return RunCommand(args, options, flags_, CliIo{&in_, &out_, &err_});
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(::testing::TempDir(), name);
    std::ofstream(path) << text;
    return path;
  }

  FakeCoordinator fake_;
  FakeServer server_;
  RecordedWaits waits_;
  CliFlags flags_;
  std::istringstream in_;
  std::ostringstream out_, err_;
};

TEST_F(CliCommandsTest, BandwidthAndMode) {
  EXPECT_EQ(Run({"bandwidth", "set", "250"}), kExitOk);
  EXPECT_EQ(Run({"mode", "set", "adaptive"}), kExitOk);
  EXPECT_EQ(Run({"bandwidth", "get"}), kExitOk);
  EXPECT_EQ(out_.str(), "bandwidth 250 /s, mode adaptive\n");
  const auto requests = fake_.bandwidth_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].bandwidth(), 250.0);
  EXPECT_EQ(requests[1].mode(), COORDINATOR_MODE_SPLIT_ADAPTIVE);
  EXPECT_FALSE(requests[1].has_bandwidth());
}

TEST_F(CliCommandsTest, UsageErrorsExitTwoAndSendNothing) {
  EXPECT_EQ(Run({}), kExitUsage);
  EXPECT_EQ(Run({"bandwidth", "set", "fast"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("not a number: fast"));
  EXPECT_EQ(Run({"mode", "set", "split"}), kExitUsage);
  EXPECT_EQ(Run({"frobnicate"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("unknown command: frobnicate"));
  EXPECT_THAT(err_.str(), HasSubstr("bandwidth set R"));  // the command list
  EXPECT_EQ(Run({"urls", "get"}), kExitUsage);
  EXPECT_EQ(Run({"lease", "0"}), kExitUsage);
  EXPECT_EQ(Run({"report", "https://a.com/", "maybe"}), kExitUsage);
  EXPECT_EQ(Run({"urls", "add", "/nonexistent/file.csv"}), kExitUsage);
  EXPECT_EQ(fake_.calls("SetBandwidth") + fake_.calls("UpsertUrls"), 0);
}

TEST_F(CliCommandsTest, RpcErrorsExitOne) {
  fake_.FailNext(1, grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Run({"bandwidth", "set", "5"}), kExitRpcError);
  EXPECT_THAT(err_.str(), HasSubstr("PERMISSION_DENIED"));
  EXPECT_EQ(Run({"urls", "get", "https://a.com/unknown"}), kExitRpcError);
  EXPECT_THAT(err_.str(), HasSubstr("NOT_FOUND"));
}

TEST_F(CliCommandsTest, StatsAsTableAndJson) {
  EXPECT_EQ(Run({"stats"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("shards 1 live of 2"));
  flags_.json = true;
  EXPECT_EQ(Run({"stats"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("\"slots_handed_out\": \"42\""));
}

TEST_F(CliCommandsTest, UrlsAddReportsErrorsByLineNumber) {
  flags_.batch_size = 2;
  const std::string file = WriteFile("import.csv",
                                     "url,importance,change_rate\n"
                                     "https://a.com/1,1\n"
                                     "https://a.com/2,x\n"
                                     "{\"url\": \"https://a.com/3\", \"importance\": 2}\n"
                                     "\n"
                                     "https://bad.com/4,1\n"
                                     "https://a.com/5,1,1e-5\n");
  EXPECT_EQ(Run({"urls", "add", file}), kExitRpcError);
  EXPECT_THAT(err_.str(), HasSubstr("import.csv:3: importance: not a number"));
  EXPECT_THAT(err_.str(), HasSubstr("import.csv:6: INVALID_ARGUMENT: url: bad by"));
  EXPECT_EQ(out_.str(), "3 URLs upserted (3 new), 2 lines with errors\n");
  const auto requests = fake_.upsert_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].urls_size(), 2);
  EXPECT_EQ(requests[1].urls(1).prior().change_rate(), 1e-5);
}

TEST_F(CliCommandsTest, UrlsAddFromStdinAndRemove) {
  EXPECT_EQ(Run({"urls", "add", "-"}, "https://a.com/1,1\nhttps://a.com/2,1\n"), kExitOk);
  EXPECT_EQ(out_.str(), "2 URLs upserted (2 new), 0 lines with errors\n");
  EXPECT_EQ(Run({"urls", "rm", "https://a.com/1", "https://a.com/9"}), kExitRpcError);
  EXPECT_THAT(err_.str(), HasSubstr("https://a.com/9: NOT_FOUND"));
  EXPECT_EQ(out_.str(), "1 URLs removed\n");
}

TEST_F(CliCommandsTest, PingFromArgumentsAndStdin) {
  flags_.source = "sitemap";
  EXPECT_EQ(Run({"ping", "https://a.com/1", "https://a.com/2"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("2 counted"));
  EXPECT_EQ(Run({"ping"}, "https://a.com/3\n\nhttps://bad.com/\n"), kExitRpcError);
  EXPECT_THAT(out_.str(), HasSubstr("1 counted"));
  EXPECT_THAT(err_.str(), HasSubstr("https://bad.com/: INVALID_ARGUMENT"));
  flags_.source = "carrier-pigeon";
  EXPECT_EQ(Run({"ping", "https://a.com/1"}), kExitUsage);
}

TEST_F(CliCommandsTest, LeaseAndReport) {
  FetchLeaseResponse response;
  CoordinatorLease* lease = response.add_leases();
  lease->set_url("https://a.com/1");
  lease->set_lease_id(77);
  fake_.ScriptLease(response);
  EXPECT_EQ(Run({"lease", "3"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("77\t"));
  EXPECT_THAT(out_.str(), HasSubstr("https://a.com/1"));
  EXPECT_EQ(fake_.lease_requests()[0].max_urls(), 3u);
  EXPECT_EQ(Run({"lease", "1"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("no URL leased"));

  EXPECT_EQ(Run({"report", "https://a.com/1", "changed"}), kExitOk);
  const auto reports = fake_.report_requests();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].reports(0).url(), "https://a.com/1");
  EXPECT_EQ(reports[0].reports(0).outcome(), CRAWL_OUTCOME_CHANGED);
  EXPECT_EQ(Run({"report", "https://bad.com/", "gone"}), kExitRpcError);
}

TEST_F(CliCommandsTest, HostDelay) {
  EXPECT_EQ(Run({"host", "delay", "example.com", "2.5"}), kExitOk);
  ASSERT_EQ(fake_.politeness_requests().size(), 1u);
  EXPECT_EQ(fake_.politeness_requests()[0].hosts(0).host(), "example.com");
  EXPECT_EQ(fake_.politeness_requests()[0].hosts(0).min_delay(), 2.5);
}

}  // namespace
}  // namespace client
}  // namespace recrawl
