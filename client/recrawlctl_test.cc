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
  const Result r = RunCtl(absl::StrCat(Target(), " --token=op-secret-0123456789 bandwidth set 42"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bandwidth 42 /s"));
  ASSERT_EQ(fake_.tokens().size(), 1u);
  EXPECT_EQ(fake_.tokens()[0], "Bearer op-secret-0123456789");
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  FILE* f = fopen(path.c_str(), "w");
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
  return path;
}

// The token file `recrawl_local serve` writes (the servers' format): the
// token of the command's role is taken, or --role's.
TEST_F(RecrawlctlTest, TakesItsRolesTokenFromARoleTokenFile) {
  const std::string file = WriteFile("tokens",
                                     "# recrawl role tokens\n"
                                     "fetcher fetcher-token-0123456789\n"
                                     "operator op-token-0123456789abcd\n"
                                     "internal internal-secret-0123456789\n");
  Result r = RunCtl(absl::StrCat(Target(), " --token_file=", file, " stats"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCtl(absl::StrCat(Target(), " --token_file=", file, " --role=fetcher stats"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(fake_.tokens().size(), 2u);
  EXPECT_EQ(fake_.tokens()[0], "Bearer op-token-0123456789abcd");
  EXPECT_EQ(fake_.tokens()[1], "Bearer fetcher-token-0123456789");
  // A bare token in a file still works.
  r = RunCtl(absl::StrCat(
      Target(), " --token_file=", WriteFile("one", "  single-token-0123456789\n"), " stats"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(fake_.tokens().size(), 3u);
  EXPECT_EQ(fake_.tokens()[2], "Bearer single-token-0123456789");
}

// A file or token that cannot be used is a usage error that names the
// problem and never shows a token.
TEST_F(RecrawlctlTest, ABadTokenIsAUsageErrorThatShowsNoSecret) {
  std::string shown;  // everything the bad runs printed
  const std::string no_pinger = WriteFile(
      "no_pinger", "operator op-token-0123456789abcd\ninternal internal-secret-0123456789\n");
  Result r = RunCtl(absl::StrCat(Target(), " --token_file=", no_pinger, " ping x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no token of role pinger"));
  shown += r.output;
  const std::string broken = WriteFile(
      "broken", "operator op-token-0123456789abcd extra\ninternal internal-secret-0123456789\n");
  r = RunCtl(absl::StrCat(Target(), " --token_file=", broken, " stats"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("line 1"));
  shown += r.output;
  const std::string long_token(300, 'k');
  r = RunCtl(absl::StrCat(Target(), " --token_file=", WriteFile("long", long_token), " stats"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("has 300"));
  shown += r.output;
  r = RunCtl(absl::StrCat(Target(), " --token=short stats"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const std::string& secret : {std::string("op-token-0123456789abcd"),
                                    std::string("internal-secret-0123456789"), long_token}) {
    EXPECT_THAT(shown, ::testing::Not(HasSubstr(secret)));
  }
  EXPECT_TRUE(fake_.tokens().empty());
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
