// recrawlctl's `ingest keys`, `ingest sitemaps` and `ingest websub` commands end to end: the
// recrawlctl binary against a real ingest_server (HTTP and HTTPS, with role tokens), its output,
// exit codes, and no token ever printed.
#include <stdio.h>
#include <sys/wait.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/server_process.h"
#include "services/test_certificates.h"

namespace recrawl {
namespace ingest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kServer[] = "ingest/ingest_server";
constexpr char kOperatorToken[] = "operator-token-0123456789";
constexpr char kPingerToken[] = "pinger-token-0123456789";
constexpr char kKey[] = "abcdef0123456789";

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
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class RecrawlctlIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    tokens_ = dir_ + "/tokens";
    std::ofstream(tokens_) << "operator " << kOperatorToken << "\npinger " << kPingerToken << "\n";
  }
  // Starts the gateway (HTTPS with `tls`); no coordinator behind it.
  void Start(bool tls) {
    std::vector<std::string> args = {"--host=127.0.0.1", "--port=0", "--coordinator=127.0.0.1:1",
                                     "--token_file=" + tokens_,
                                     "--websub_callback_base=https://gateway.test/websub"};
    if (tls) {
      ASSERT_TRUE(services::MakeCertificate(dir_, "gateway").ok());
      args.push_back(absl::StrCat("--tls_cert=", dir_, "/gateway.pem"));
      args.push_back(absl::StrCat("--tls_key=", dir_, "/gateway.key"));
    }
    const absl::Status started = server_.Start(kServer, args, dir_ + "/gw.port", dir_ + "/gw.log");
    ASSERT_TRUE(started.ok()) << started;
  }
  std::string Flags() {
    return absl::StrCat("--gateway=127.0.0.1:", server_.port(), " --token_file=", tokens_);
  }

  std::string dir_;
  std::string tokens_;
  services::ServerProcess server_;
};

TEST_F(RecrawlctlIngestTest, AddsListsAndRemovesKeys) {
  Start(/*tls=*/false);
  Result r = RunCtl(absl::StrCat(Flags(), " ingest keys add Example.COM ", kKey));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("registered"));
  r = RunCtl(absl::StrCat(Flags(), " ingest keys add other.example ", kKey));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCtl(Flags() + " ingest keys list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, absl::StrCat("example.com\t", kKey, "\nother.example\t", kKey, "\n"));
  r = RunCtl(Flags() + " ingest keys list example.com");
  EXPECT_EQ(r.output, absl::StrCat("example.com\t", kKey, "\n"));

  r = RunCtl(absl::StrCat(Flags(), " ingest keys rm example.com ", kKey));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCtl(absl::StrCat(Flags(), " ingest keys rm example.com ", kKey));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("NOT_FOUND"));
  r = RunCtl(Flags() + " ingest keys list example.com");
  EXPECT_EQ(r.output, "no IndexNow key registered\n");
}

TEST_F(RecrawlctlIngestTest, AddsListsAndRemovesSitemaps) {
  Start(/*tls=*/false);
  // Loopback is refused to this gateway's fetches: its polls fail, locally.
  const std::string url = "http://127.0.0.1:1/sitemap.xml";
  Result r = RunCtl(absl::StrCat(Flags(), " ingest sitemaps add ", url));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("registered"));
  r = RunCtl(Flags() + " ingest sitemaps list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat(url, "\tregistered\t")));
  r = RunCtl(Flags() + " ingest sitemaps add ftp://example.com/sitemap.xml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("INVALID_ARGUMENT"));
  r = RunCtl(absl::StrCat(Flags(), " ingest sitemaps rm ", url));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCtl(absl::StrCat(Flags(), " ingest sitemaps rm ", url));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("NOT_FOUND"));
  r = RunCtl(Flags() + " ingest sitemaps list");
  EXPECT_EQ(r.output, "no sitemap registered\n");
}

TEST_F(RecrawlctlIngestTest, SubscribesListsAndUnsubscribesWebSub) {
  Start(/*tls=*/false);
  // Loopback is refused to this gateway's fetches: the hub is never reached.
  const std::string hub = "http://127.0.0.1:1/hub";
  const std::string topic = "https://example.com/feed";
  Result r = RunCtl(absl::StrCat(Flags(), " ingest websub add ", hub, " ", topic));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("callback id"));
  r = RunCtl(Flags() + " ingest websub list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat(hub, "\t", topic, "\tinactive\tsubscribe\t")));
  r = RunCtl(absl::StrCat(Flags(), " ingest websub add ", hub, " not-a-url"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("INVALID_ARGUMENT"));
  r = RunCtl(absl::StrCat(Flags(), " ingest websub rm ", hub, " https://example.com/other"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("NOT_FOUND"));
  r = RunCtl(absl::StrCat(Flags(), " ingest websub rm ", hub, " ", topic));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(RecrawlctlIngestTest, RefusalsNameTheProblemAndShowNoToken) {
  Start(/*tls=*/false);
  std::string shown;
  Result r = RunCtl(Flags() + " ingest keys add example.com short");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.output, HasSubstr("key:"));
  shown += r.output;
  r = RunCtl(Flags() + " --role=pinger ingest keys list");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PERMISSION_DENIED"));
  shown += r.output;
  r = RunCtl(absl::StrCat("--gateway=127.0.0.1:", server_.port(),
                          " --token=unknown-token-0123456789 ingest keys list"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("UNAUTHENTICATED"));
  shown += r.output;
  r = RunCtl(Flags() + " ingest keys add example.com");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const char* secret : {kOperatorToken, kPingerToken, "unknown-token-0123456789"}) {
    EXPECT_THAT(shown, Not(HasSubstr(secret)));
  }
  server_.Stop(SIGTERM);
  r = RunCtl(Flags() + " --deadline=5 ingest keys list");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("UNAVAILABLE"));
}

TEST_F(RecrawlctlIngestTest, SpeaksHttpsWithTheCa) {
  Start(/*tls=*/true);
  Result r = RunCtl(
      absl::StrCat(Flags(), " --tls_ca=", dir_, "/gateway.pem ingest keys add a.example ", kKey));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCtl(absl::StrCat(Flags(), " --tls_ca=", dir_, "/gateway.pem ingest keys list"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, absl::StrCat("a.example\t", kKey, "\n"));
  // Plain HTTP to an HTTPS gateway gets no answer.
  r = RunCtl(Flags() + " --deadline=5 ingest keys list");
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
