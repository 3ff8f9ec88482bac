// The recrawlctl binary end to end against a fake coordinator on loopback:
// output, the token it sends, and its exit codes.
#include <stdio.h>
#include <sys/wait.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "client/fake_services.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

using ::testing::HasSubstr;

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

Result RunCtl(const std::string& args) {
  const std::string command = "client/recrawlctl " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Result result{-1, ""};
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class RecrawlctlTest : public ::testing::Test {
 protected:
  RecrawlctlTest() : server_(&fake_) { server_.Start(); }
  std::string Target() { return "--target=" + server_.target(); }

  FakeCoordinator fake_;
  FakeServer server_;
};

TEST_F(RecrawlctlTest, SetsBandwidthWithTheToken) {
  const Result r =
      RunCtl(absl::StrCat(Target(), " --token=op-secret bandwidth set 42"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bandwidth 42 /s"));
  ASSERT_EQ(fake_.tokens().size(), 1u);
  EXPECT_EQ(fake_.tokens()[0], "Bearer op-secret");
}

TEST_F(RecrawlctlTest, StatsJson) {
  const Result r = RunCtl(Target() + " stats --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"live_shards\": 1"));
}

TEST_F(RecrawlctlTest, ExitCodes) {
  fake_.FailNext(1, grpc::StatusCode::UNAUTHENTICATED);
  Result r = RunCtl(Target() + " --max_attempts=1 stats");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // no such flag: usage
  EXPECT_THAT(r.output, HasSubstr("unknown flag --max_attempts"));
  r = RunCtl(Target() + " stats");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("UNAUTHENTICATED"));
  r = RunCtl(Target() + " mode set fastest");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = RunCtl("--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("urls add FILE"));
  EXPECT_THAT(r.output, HasSubstr("--token_file"));
}

}  // namespace
}  // namespace client
}  // namespace recrawl
