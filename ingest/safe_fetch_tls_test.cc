// SafeFetch over https, against an httplib::SSLServer on 127.0.0.1 with a
// test certificate: the certificate is verified, and a redirect from https
// to http is refused.
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ingest/safe_fetch.h"
#include "services/test_certificates.h"

namespace recrawl {
namespace ingest {
namespace {

class SafeFetchTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    ASSERT_TRUE(services::MakeCertificate(dir_, "site").ok());
    server_ = std::make_unique<httplib::SSLServer>((dir_ + "/site.pem").c_str(),
                                                   (dir_ + "/site.key").c_str());
    ASSERT_TRUE(server_->is_valid());
    server_->Get("/key.txt", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("abcdefgh", "text/plain");
    });
    server_->Get("/down", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect(absl::StrCat("http://127.0.0.1:", port_, "/key.txt"));
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    options_.policy = AddressPolicy::AllowingLoopback();
    options_.ca_file = dir_ + "/site.pem";
  }
  void TearDown() override {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Url(const std::string& path) const {
    return absl::StrCat("https://127.0.0.1:", port_, path);
  }

  std::string dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
  FetchOptions options_;
};

TEST_F(SafeFetchTlsTest, VerifiesTheCertificate) {
  absl::StatusOr<FetchResponse> r = SafeFetch({Url("/key.txt"), "", ""}, options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abcdefgh");
  // Without the test CA the certificate is not trusted.
  options_.ca_file.clear();
  r = SafeFetch({Url("/key.txt"), "", ""}, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

TEST_F(SafeFetchTlsTest, RedirectFromHttpsToHttpRefused) {
  absl::StatusOr<FetchResponse> r = SafeFetch({Url("/down"), "", ""}, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
  EXPECT_NE(r.status().message().find("https to http"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
