// The ingest_server binary as a process: HTTPS with --tls_cert/--tls_key,
// refusal of bad flags, and a clean exit on SIGTERM. No cluster: nothing
// here reaches the signal path.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

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

}  // namespace
}  // namespace ingest
}  // namespace recrawl
