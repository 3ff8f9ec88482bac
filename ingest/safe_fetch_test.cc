#include "ingest/safe_fetch.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "ingest/test_http_server.h"

namespace recrawl {
namespace ingest {
namespace {

class SafeFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    httplib::Server& s = server_.server();
    s.Get("/key.txt", [](const httplib::Request&, httplib::Response& res) {
      res.set_header("ETag", "\"v1\"");
      res.set_header("Last-Modified", "Wed, 21 Oct 2026 07:28:00 GMT");
      res.set_content("abcdef123456", "text/plain");
    });
    s.Get("/conditional", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("If-None-Match") == "\"v1\"" &&
          req.get_header_value("If-Modified-Since") == "Wed, 21 Oct 2026 07:28:00 GMT") {
        res.status = 304;
        return;
      }
      res.set_header("ETag", "\"v1\"");
      res.set_content("fresh", "text/plain");
    });
    s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(10000, 'x'), "text/plain");
    });
    auto slow = [this](const httplib::Request&, httplib::Response& res) {
      {
        absl::MutexLock lock(&mu_);
        ++slow_requests_;
      }
      release_slow_.WaitForNotificationWithTimeout(absl::Seconds(30));
      res.set_content("late", "text/plain");
    };
    s.Get("/slow", slow);
    s.Post("/slow-hub", slow);
    s.Get("/hop",
          [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/key.txt"); });
    s.Get("/loop",
          [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/loop"); });
    s.Get("/elsewhere", [this](const httplib::Request&, httplib::Response& res) {
      res.set_redirect(absl::StrCat("http://localhost:", server_.port(), "/key.txt"));
    });
    s.Post("/hub", [this](const httplib::Request& req, httplib::Response& res) {
      posted_ = absl::StrCat(req.get_header_value("Content-Type"), " ", req.body);
      res.status = 202;
    });
    s.Post("/moved-hub",
           [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/hub"); });
    ASSERT_GT(server_.Start(), 0);
    options_.policy = AddressPolicy::AllowingLoopback();
  }
  void TearDown() override {
    release_slow_.Notify();
    server_.Stop();
  }

  absl::StatusOr<FetchResponse> Get(const std::string& path) {
    return SafeFetch({server_.Url(path), "", ""}, options_);
  }

  // Waits until the server holds `n` requests to the slow routes.
  void AwaitSlowRequests(int n) {
    absl::MutexLock lock(&mu_);
    auto held = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return slow_requests_ >= n; };
    mu_.Await(absl::Condition(&held));
  }

  absl::Mutex mu_;
  int slow_requests_ ABSL_GUARDED_BY(mu_) = 0;
  std::string posted_;
  absl::Notification release_slow_;
  FetchOptions options_;
  TestHttpServer server_;  // last: it stops before what its handlers use goes
};

TEST_F(SafeFetchTest, FetchesBodyAndValidators) {
  absl::StatusOr<FetchResponse> r = Get("/key.txt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abcdef123456");
  EXPECT_EQ(r->etag, "\"v1\"");
  EXPECT_EQ(r->last_modified, "Wed, 21 Oct 2026 07:28:00 GMT");
  EXPECT_EQ(r->content_type, "text/plain");
  EXPECT_EQ(r->redirects, 0);
}

TEST_F(SafeFetchTest, PostsAFormBodyAndFollowsNoRedirect) {
  const std::string form = "hub.mode=subscribe&hub.topic=x";
  absl::StatusOr<FetchResponse> r = SafePostForm(server_.Url("/hub"), form, options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 202);
  EXPECT_EQ(posted_, "application/x-www-form-urlencoded hub.mode=subscribe&hub.topic=x");

  posted_.clear();
  r = SafePostForm(server_.Url("/moved-hub"), form, options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->redirects, 0);
  EXPECT_EQ(posted_, "");

  r = SafePostForm(server_.Url("/hub"), form, FetchOptions());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
  EXPECT_EQ(posted_, "");
}

TEST_F(SafeFetchTest, NotFoundIsAResponse) {
  absl::StatusOr<FetchResponse> r = Get("/missing");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 404);
}

TEST_F(SafeFetchTest, LoopbackRefusedWithoutAllowlist) {
  options_.policy = AddressPolicy();
  absl::StatusOr<FetchResponse> r = Get("/key.txt");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
  EXPECT_NE(r.status().message().find("127.0.0.1"), std::string::npos) << r.status();
  // A name is judged by the address it resolves to.
  r = SafeFetch({absl::StrCat("http://localhost:", server_.port(), "/key.txt"), "", ""}, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
}

TEST_F(SafeFetchTest, BodyLargerThanTheBoundIsRefused) {
  options_.max_body_bytes = 1000;
  absl::StatusOr<FetchResponse> r = Get("/big");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  options_.max_body_bytes = 10000;
  r = Get("/big");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body.size(), 10000u);
}

TEST_F(SafeFetchTest, SlowServerTimesOut) {
  options_.total_timeout = absl::Milliseconds(300);
  absl::StatusOr<FetchResponse> r = Get("/slow");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
}

// The server holds the answer for 30 s and the fetch may take 60: only the
// cancellation ends it early.
TEST_F(SafeFetchTest, CancellingEndsAFetchInFlight) {
  options_.total_timeout = absl::Seconds(60);
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  absl::StatusOr<FetchResponse> got;
  absl::StatusOr<FetchResponse> posted;
  std::thread get([&] { got = Get("/slow"); });
  std::thread post([&] { posted = SafePostForm(server_.Url("/slow-hub"), "a=b", options_); });
  AwaitSlowRequests(2);
  cancel = true;
  get.join();
  post.join();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled) << got.status();
  EXPECT_NE(got.status().message().find("/slow"), std::string::npos) << got.status();
  EXPECT_EQ(posted.status().code(), absl::StatusCode::kCancelled) << posted.status();
  // Once set, nothing more is fetched.
  EXPECT_EQ(Get("/key.txt").status().code(), absl::StatusCode::kCancelled);
}

TEST_F(SafeFetchTest, SameHostRedirectFollowed) {
  absl::StatusOr<FetchResponse> r = Get("/hop");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abcdef123456");
  EXPECT_EQ(r->redirects, 1);
  EXPECT_EQ(r->final_url, server_.Url("/key.txt"));
}

TEST_F(SafeFetchTest, RedirectsAreBounded) {
  options_.max_redirects = 3;
  EXPECT_EQ(Get("/loop").status().code(), absl::StatusCode::kOutOfRange);
  options_.max_redirects = 0;
  EXPECT_EQ(Get("/hop").status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(SafeFetchTest, RedirectToAnotherHostRefused) {
  absl::StatusOr<FetchResponse> r = Get("/elsewhere");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << r.status();
  EXPECT_NE(r.status().message().find("another host"), std::string::npos) << r.status();
  options_.allow_cross_host_redirects = true;
  r = Get("/elsewhere");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "abcdef123456");
}

TEST_F(SafeFetchTest, ConditionalGetAnswers304) {
  absl::StatusOr<FetchResponse> r = Get("/conditional");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  r = SafeFetch({server_.Url("/conditional"), r->etag, "Wed, 21 Oct 2026 07:28:00 GMT"}, options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 304);
  EXPECT_EQ(r->body, "");
}

TEST_F(SafeFetchTest, OnlyHttpAndHttpsUrls) {
  for (const char* url : {"file:///etc/passwd", "gopher://127.0.0.1/", "not a url", "http://"}) {
    EXPECT_EQ(SafeFetch({url, "", ""}, options_).status().code(),
              absl::StatusCode::kInvalidArgument)
        << url;
  }
}

TEST_F(SafeFetchTest, UnreachableIsUnavailable) {
  const int port = server_.port();
  server_.Stop();
  absl::StatusOr<FetchResponse> r =
      SafeFetch({absl::StrCat("http://127.0.0.1:", port, "/"), "", ""}, options_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
