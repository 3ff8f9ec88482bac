// The gateway end to end, over real HTTP on loopback: a local cluster (two
// shard_server processes and a coordinator_server), the ingest_server
// process in front of it, and a small site serving IndexNow key files.
// Requests are made with httplib::Client as a site or CDN would make them;
// what reached the shards is read back with GetUrlState.
#include <signal.h>
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
#include "deploy/local_cluster.h"
#include "gtest/gtest.h"
#include "ingest/test_http_server.h"
#include "services/server_process.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kKey[] = "e2e-key-0123456789";

class IngestEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deploy::LocalClusterOptions o;
    dir_ = absl::StrCat(::testing::TempDir(), "ingest_e2e");
    std::filesystem::remove_all(dir_);
    o.data_dir = dir_;
    o.shard_server = "services/shard_server";
    o.coordinator_server = "services/coordinator_server";
    o.shards = 2;
    o.shard_flags = {"--drain_seconds=1"};
    o.coordinator_flags = {"--drain_seconds=1"};
    o.start_timeout = 120;
    cluster_ = std::make_unique<deploy::LocalCluster>(o);
    const absl::Status started = cluster_->Start();
    ASSERT_TRUE(started.ok()) << started;

    site_.server().Get(absl::StrCat("/", kKey, ".txt"),
                       [](const httplib::Request&, httplib::Response& res) {
                         res.set_content(kKey, "text/plain");
                       });
    site_.server().Get("/wrong.txt", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("another-key-123", "text/plain");
    });
    ASSERT_GT(site_.Start(), 0);

    const absl::Status gateway =
        gateway_.Start("ingest/ingest_server",
                       {"--port=0", absl::StrCat("--coordinator=", cluster_->coordinator_address()),
                        absl::StrCat("--token_file=", dir_, "/tokens"), "--fetch_allow_loopback",
                        "--max_body_bytes=2000000", "--drain_seconds=2",
                        // The tests poll until key checks end; no 429 on a slow machine.
                        "--indexnow_host_rate=1000", "--indexnow_host_burst=100000"},
                       absl::StrCat(dir_, "/ingest.port"), absl::StrCat(dir_, "/ingest.log"), 120);
    ASSERT_TRUE(gateway.ok()) << gateway << "\n" << Log();
    http_ = std::make_unique<httplib::Client>("127.0.0.1", gateway_.port());
    http_->set_read_timeout(120, 0);

    // The site's pages and a few other hosts' pages, crawled a while ago.
    std::vector<UrlSpec> specs;
    for (const std::string& url : {SiteUrl("/a"), SiteUrl("/b"), SiteUrl("/c"), SiteUrl("/d"),
                                   Other(0), Other(1), Other(2), Other(3)}) {
      UrlSpec& spec = specs.emplace_back();
      spec.set_url(url);
      spec.set_importance(1.0);
      spec.set_last_crawl_time(cluster_->Now() - 1000);
    }
    absl::StatusOr<UpsertUrlsResponse> upserted = Admin().UpsertUrls(specs);
    ASSERT_TRUE(upserted.ok()) << upserted.status();
    ASSERT_EQ(upserted->result().applied(), specs.size());
  }

  void TearDown() override {
    if (gateway_.pid() > 0) {
      const int status = gateway_.Stop(SIGTERM, 30);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << Log();
    }
    site_.Stop();
    if (cluster_ != nullptr) {
      EXPECT_TRUE(cluster_->Stop().ok());
    }
  }

  client::AdminClient Admin() const {
    client::ClientOptions o = cluster_->ClientOptionsFor(cluster::Role::kOperator);
    o.deadline = absl::Seconds(20);
    o.max_attempts = 100;
    return client::AdminClient(o);
  }
  std::string SiteUrl(const std::string& path) const { return site_.Url(path); }
  static std::string Other(int i) { return absl::StrCat("https://host", i, ".example/page"); }

  // n_cis of `url` on its shard (-1 if unknown).
  int SignalsOf(const std::string& url) const {
    absl::StatusOr<UrlState> state = Admin().GetUrlState(url);
    return state.ok() ? static_cast<int>(state->signals_since_crawl()) : -1;
  }
  bool WaitForSignals(const std::string& url, int n) const {
    for (int i = 0; i < 3000; ++i) {
      if (SignalsOf(url) >= n) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  std::string IndexNowBody(const std::vector<std::string>& urls, const std::string& key = kKey,
                           const std::string& location = "") const {
    return absl::StrCat(R"({"host":"127.0.0.1","key":")", key, R"(","keyLocation":")",
                        location.empty() ? SiteUrl(absl::StrCat("/", key, ".txt")) : location,
                        R"(","urlList":[")", absl::StrJoin(urls, "\",\""), "\"]}");
  }
  httplib::Result PostIndexNow(const std::string& body) {
    return http_->Post("/indexnow", body, "application/json; charset=utf-8");
  }
  std::string Bearer(cluster::Role role) const {
    return absl::StrCat("Bearer ", cluster_->TokenOf(role));
  }
  std::string Log() const {
    std::ifstream in(absl::StrCat(dir_, "/ingest.log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
  std::unique_ptr<deploy::LocalCluster> cluster_;
  TestHttpServer site_;
  services::ServerProcess gateway_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(IngestEndToEndTest, IndexNowAndCdnSignalsReachTheirShardsOnce) {
  // First submission: the key is checked (202), then the held URLs flow.
  httplib::Result r = PostIndexNow(IndexNowBody({SiteUrl("/a"), SiteUrl("/b"), SiteUrl("/a")}));
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 202) << r->body;
  ASSERT_TRUE(WaitForSignals(SiteUrl("/a"), 1)) << Log();
  ASSERT_TRUE(WaitForSignals(SiteUrl("/b"), 1)) << Log();

  // Now the key is proven: 200 once the signal is acknowledged.
  r = PostIndexNow(IndexNowBody({SiteUrl("/c"), SiteUrl("/c"), SiteUrl("/unknown")}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find(R"("accepted":1)"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find(R"("unknown":1)"), std::string::npos) << r->body;
  EXPECT_EQ(SignalsOf(SiteUrl("/c")), 1);

  // The GET form.
  const httplib::Params params = {{"url", SiteUrl("/d")},
                                  {"key", kKey},
                                  {"keyLocation", SiteUrl(absl::StrCat("/", kKey, ".txt"))}};
  r = http_->Get("/indexnow", params, httplib::Headers());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(SignalsOf(SiteUrl("/d")), 1);

  // An operator registers a key for the other hosts (spread over the
  // shards): no key file needed.
  httplib::Headers op = {{"Authorization", Bearer(cluster::Role::kOperator)}};
  for (int i = 0; i < 2; ++i) {
    r = http_->Post("/admin/indexnow/keys", op,
                    absl::StrCat(R"({"host":"host)", i, R"(.example","key":")", kKey, "\"}"),
                    "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  r = http_->Get("/admin/indexnow/keys", op);
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("host1.example"), std::string::npos) << r->body;
  for (int i = 0; i < 2; ++i) {
    r = http_->Post("/indexnow",
                    absl::StrCat(R"({"host":"host)", i, R"(.example","key":")", kKey,
                                 R"(","urlList":[")", Other(i), "\"]}"),
                    "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(SignalsOf(Other(i)), 1);
  }

  // A CDN purge, with a pinger token.
  r = http_->Post(
      "/cdn/purge", {{"Authorization", Bearer(cluster::Role::kPinger)}},
      absl::StrCat(R"({"urls":[")", Other(2), "\",\"", Other(3), "\",\"", Other(2), "\"]}"),
      "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(SignalsOf(Other(2)), 1);
  EXPECT_EQ(SignalsOf(Other(3)), 1);

  // Everything counted once.
  for (const std::string& url : {SiteUrl("/a"), SiteUrl("/b"), SiteUrl("/c"), SiteUrl("/d")}) {
    EXPECT_EQ(SignalsOf(url), 1) << url;
  }

  r = http_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find(R"(recrawl_ingest_requests_total{code="ACCEPTED",source="indexnow"} 1)"),
            std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find(R"(recrawl_ingest_requests_total{code="OK",source="cdn"} 1)"),
            std::string::npos)
      << r->body;
  r = http_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(IngestEndToEndTest, BadInputGetsTheProtocolsAnswerAndChangesNothing) {
  // Prove the key first, so that what follows is judged on its own merits.
  ASSERT_EQ(PostIndexNow(IndexNowBody({SiteUrl("/a")}))->status, 202);
  ASSERT_TRUE(WaitForSignals(SiteUrl("/a"), 1)) << Log();

  EXPECT_EQ(PostIndexNow("{\"host\": \"127.0.0.1\", urlList: [")->status, 400);
  EXPECT_EQ(PostIndexNow(IndexNowBody({SiteUrl("/b")}, "bad key!"))->status, 422);
  EXPECT_EQ(PostIndexNow(IndexNowBody({SiteUrl("/b"), "https://host0.example/page"}))->status, 422);
  std::vector<std::string> many;
  for (int i = 0; i <= 10000; ++i) many.push_back(SiteUrl(absl::StrCat("/many/", i)));
  many.push_back(SiteUrl("/b"));
  EXPECT_EQ(PostIndexNow(IndexNowBody(many))->status, 400);
  // Larger than --max_body_bytes.
  EXPECT_EQ(PostIndexNow(IndexNowBody({SiteUrl("/b"), SiteUrl(std::string(2000000, 'x'))}))->status,
            400);
  // A key file that holds another key: 202 while it is checked, then 403.
  const std::string wrong = IndexNowBody({SiteUrl("/b")}, "another-key-456", SiteUrl("/wrong.txt"));
  int status = PostIndexNow(wrong)->status;
  EXPECT_EQ(status, 202);
  for (int i = 0; i < 3000 && status == 202; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
    status = PostIndexNow(wrong)->status;
  }
  EXPECT_EQ(status, 403);
  // Webhook and admin routes without the right token.
  EXPECT_EQ(
      http_->Post("/cdn/purge", R"({"urls":["https://host0.example/page"]})", "application/json")
          ->status,
      401);
  EXPECT_EQ(http_
                ->Post("/cdn/purge", {{"Authorization", Bearer(cluster::Role::kFetcher)}},
                       R"({"urls":["https://host0.example/page"]})", "application/json")
                ->status,
            403);
  EXPECT_EQ(http_
                ->Post("/cdn/purge", {{"Authorization", Bearer(cluster::Role::kPinger)}},
                       R"({"urls":"oops"})", "application/json")
                ->status,
            400);
  EXPECT_EQ(http_
                ->Post("/admin/indexnow/keys", {{"Authorization", Bearer(cluster::Role::kPinger)}},
                       R"({"host":"host0.example","key":"abcdefgh"})", "application/json")
                ->status,
            403);

  // None of it reached a shard.
  EXPECT_EQ(SignalsOf(SiteUrl("/a")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/b")), 0);
  EXPECT_EQ(SignalsOf(Other(0)), 0);
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
