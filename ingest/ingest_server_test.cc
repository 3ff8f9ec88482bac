// The ingest_server binary as a process: HTTPS with --tls_cert/--tls_key
// (and client certificates with --tls_client_ca), refusal of bad flags, a clean exit on SIGTERM,
// and operator keys kept in
// --state_dir across a SIGKILL, and the wait for an unreachable coordinator
// at start. No cluster: nothing here reaches the signal path.
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/server_process.h"
#include "services/test_certificates.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kBinary[] = "ingest/ingest_server";

TEST(IngestServerTest, ServesHttpsAndDrainsOnSigterm) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(services::MakeCertificate(dir, "gateway").ok());
  services::ServerProcess server;
  const absl::Status started =
      server.Start(kBinary,
                   {"--host=127.0.0.1", "--port=0", "--coordinator=127.0.0.1:1",
                    absl::StrCat("--tls_cert=", dir, "/gateway.pem"),
                    absl::StrCat("--tls_key=", dir, "/gateway.key")},
                   dir + "/tls.port", dir + "/tls.log");
  ASSERT_TRUE(started.ok()) << started;

  httplib::SSLClient client("127.0.0.1", server.port());
  client.set_ca_cert_path((dir + "/gateway.pem").c_str());
  client.enable_server_certificate_verification(true);
  httplib::Result r = client.Get("/healthz");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  r = client.Post("/indexnow", "{", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  // Plain HTTP gets no answer.
  httplib::Client plain("127.0.0.1", server.port());
  EXPECT_FALSE(plain.Get("/healthz"));

  const int status = server.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// Starts the gateway on `dir`'s state directory, plain HTTP, no tokens.
void StartWithState(const std::string& dir, services::ServerProcess* server) {
  const absl::Status started =
      server->Start(kBinary,
                    {"--host=127.0.0.1", "--port=0", "--coordinator=127.0.0.1:1",
                     absl::StrCat("--state_dir=", dir, "/state")},
                    dir + "/state.port", dir + "/state.log");
  ASSERT_TRUE(started.ok()) << started;
}

std::string ListedKeys(int port) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result r = client.Get("/admin/indexnow/keys");
  if (!r) return "no answer";
  return absl::StrCat(r->status, " ", r->body);
}

TEST(IngestServerTest, RegisteredKeysSurviveSigkill) {
  const std::string dir = ::testing::TempDir();
  services::ServerProcess first;
  StartWithState(dir, &first);
  httplib::Client client("127.0.0.1", first.port());
  for (const char* body : {R"({"host":"a.example","key":"aaaaaaaa1111"})",
                           R"({"host":"B.example","key":"bbbbbbbb2222"})",
                           R"({"host":"c.example","key":"cccccccc3333"})"}) {
    httplib::Result r = client.Post("/admin/indexnow/keys", body, "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  httplib::Result r = client.Delete("/admin/indexnow/keys?host=c.example&key=cccccccc3333");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  // Acknowledged writes are on disk: no graceful stop needed.
  first.Stop(SIGKILL);

  services::ServerProcess second;
  StartWithState(dir, &second);
  EXPECT_EQ(ListedKeys(second.port()), R"(200 {"keys":[{"host":"a.example","key":"aaaaaaaa1111"},)"
                                       R"({"host":"b.example","key":"bbbbbbbb2222"}]})");
  const int status = second.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(IngestServerTest, AsksForClientCertificatesAsTheGrpcServersDo) {
  // A refused handshake closes the socket under the client's writes.
  signal(SIGPIPE, SIG_IGN);
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(services::MakeCertificate(dir, "gateway").ok());
  ASSERT_TRUE(services::MakeCertificate(dir, "client").ok());
  for (const bool required : {false, true}) {
    services::ServerProcess server;
    std::vector<std::string> args = {"--host=127.0.0.1",
                                     "--port=0",
                                     "--coordinator=127.0.0.1:1",
                                     absl::StrCat("--tls_cert=", dir, "/gateway.pem"),
                                     absl::StrCat("--tls_key=", dir, "/gateway.key"),
                                     absl::StrCat("--tls_client_ca=", dir, "/client.pem")};
    if (required) args.push_back("--tls_require_client_cert");
    const absl::Status started = server.Start(kBinary, args, dir + "/mtls.port", dir + "/mtls.log");
    ASSERT_TRUE(started.ok()) << started;

    httplib::SSLClient with_cert("127.0.0.1", server.port(), dir + "/client.pem",
                                 dir + "/client.key");
    with_cert.set_ca_cert_path((dir + "/gateway.pem").c_str());
    with_cert.enable_server_certificate_verification(true);
    httplib::Result r = with_cert.Get("/healthz");
    ASSERT_TRUE(r) << required << ": " << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);

    // Another certificate (not signed by the client CA) is refused either way.
    httplib::SSLClient wrong_cert("127.0.0.1", server.port(), dir + "/gateway.pem",
                                  dir + "/gateway.key");
    wrong_cert.set_ca_cert_path((dir + "/gateway.pem").c_str());
    wrong_cert.enable_server_certificate_verification(true);
    EXPECT_FALSE(wrong_cert.Get("/healthz")) << required;

    httplib::SSLClient without_cert("127.0.0.1", server.port());
    without_cert.set_ca_cert_path((dir + "/gateway.pem").c_str());
    without_cert.enable_server_certificate_verification(true);
    r = without_cert.Get("/healthz");
    EXPECT_EQ(static_cast<bool>(r), !required) << required;
    server.Stop(SIGTERM);
  }
}

TEST(IngestServerTest, RefusesBadFlags) {
  const std::string dir = ::testing::TempDir();
  for (const std::string flag : {"--fetch_allow_networks=10.0.0.0/99", "--fetch_timeout=0",
                                 "--max_body_bytes=0", "--indexnow_host_burst=0.5"}) {
    const std::string command = absl::StrCat(kBinary, " --port=0 --coordinator=127.0.0.1:1 ", flag,
                                             " 2>", dir, "/flags.log");
    const int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << flag << ": " << status;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs the gateway with `flags` and its log in `log`; returns its pid.
pid_t Spawn(const std::vector<std::string>& flags, const std::string& log) {
  std::vector<std::string> args = {kBinary};
  args.insert(args.end(), flags.begin(), flags.end());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kBinary, argv.data());
    _exit(127);
  }
  return pid;
}

// A coordinator that cannot be reached at start (still starting, or its
// TLS handshake slow) is tried again each second for --coordinator_wait
// seconds, a log line a try; then the gateway exits 1, saying why. (A try
// takes the client's own retries, about 5 s here: 6 s allow two.)
TEST(IngestServerTest, WaitsForItsCoordinatorThenGivesUp) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/wait.log";
  const pid_t pid = Spawn({"--host=127.0.0.1", "--port=0", "--coordinator=127.0.0.1:1",
                           "--route_to_shards", "--coordinator_wait=6"},
                          log);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string text = ReadFile(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << "\n" << text;
  EXPECT_NE(text.find("not reachable yet"), std::string::npos) << text;
  EXPECT_NE(text.find("gave up after --coordinator_wait=6 s"), std::string::npos) << text;
}

// SIGTERM while waiting for the coordinator ends the wait and the process
// cleanly.
TEST(IngestServerTest, StopsWhileWaitingForItsCoordinator) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/wait_stop.log";
  const pid_t pid = Spawn({"--host=127.0.0.1", "--port=0", "--coordinator=127.0.0.1:1",
                           "--route_to_shards", "--coordinator_wait=600"},
                          log);
  ASSERT_GT(pid, 0);
  // Until its first retry line (the first call gives up within the client's
  // own retries, seconds).
  for (int i = 0; i < 600 && ReadFile(log).find("not reachable yet") == std::string::npos; ++i) {
    usleep(100000);
  }
  if (ReadFile(log).find("not reachable yet") == std::string::npos) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "no retry line in a minute:\n" << ReadFile(log);
  }
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("while waiting for the coordinator"), std::string::npos);
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
