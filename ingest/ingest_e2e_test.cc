// The gateway end to end, over real HTTP on loopback: a local cluster (two
// shard_server processes and a coordinator_server), the ingest_server
// process in front of it, and a small site serving IndexNow key files and
// sitemaps.
// Requests are made with httplib::Client as a site or CDN would make them;
// what reached the shards is read back with GetUrlState.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/admin_client.h"
#include "client/credentials.h"
#include "deploy/local_cluster.h"
#include "gtest/gtest.h"
#include "ingest/feeds/gzip.h"
#include "ingest/feeds/hub_signature.h"
#include "ingest/test_http_server.h"
#include "services/server_process.h"
#include "services/test_certificates.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kKey[] = "e2e-key-0123456789";

// A <urlset> of (loc, lastmod) pairs.
std::string Urlset(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string xml =
      R"(<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">)";
  for (const auto& [loc, lastmod] : entries) {
    absl::StrAppend(&xml, "<url><loc>", loc, "</loc><lastmod>", lastmod, "</lastmod></url>");
  }
  return xml + "</urlset>";
}

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
                        "--indexnow_host_rate=1000", "--indexnow_host_burst=100000",
                        "--sitemap_poll_interval=0.5", "--sitemap_error_backoff=0.5",
                        // Hubs are told this; the hub stand-in calls the gateway itself.
                        "--websub_callback_base=http://gateway.test/websub"},
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
  // The value of the /metrics sample `name{labels}` (0 when absent).
  double Metric(const std::string& sample) {
    httplib::Result r = http_->Get("/metrics");
    if (!r) return -1;
    const size_t at = r->body.find(sample + " ");
    if (at == std::string::npos) return 0;
    const size_t start = at + sample.size() + 1;
    double value = 0;
    if (!absl::SimpleAtod(r->body.substr(start, r->body.find('\n', start) - start), &value)) {
      return -1;
    }
    return value;
  }
  bool WaitForMetric(const std::string& sample, double at_least) {
    for (int i = 0; i < 3000; ++i) {
      if (Metric(sample) >= at_least) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
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

TEST_F(IngestEndToEndTest, SitemapChangesAreSignalledOnceOnTheirShards) {
  // The site: a plain sitemap index listing a gzip sitemap of /a../d, whose
  // lastmods the test moves; conditional GETs by ETag.
  struct Site {
    absl::Mutex mu;
    std::map<std::string, std::string> lastmods;
    int version = 1;
    int not_modified = 0;
    int served = 0;
  } state;
  for (const char* path : {"/a", "/b", "/c", "/d"}) {
    state.lastmods[SiteUrl(path)] = "2020-01-01T00:00:00Z";
  }
  // The gzip bomb's body; declared before the server so that it outlives
  // the handler, which the gateway may still be calling as the test ends.
  const std::string bomb = feeds::DeflateGzip(std::string(size_t{60} << 20, ' '));
  TestHttpServer site;
  site.server().Get("/sitemap_index.xml", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        absl::StrCat(R"(<?xml version="1.0"?><sitemapindex )",
                     R"(xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">)", "<sitemap><loc>",
                     site.Url("/pages.xml.gz"), "</loc></sitemap></sitemapindex>"),
        "application/xml");
  });
  site.server().Get("/pages.xml.gz", [&](const httplib::Request& req, httplib::Response& res) {
    absl::MutexLock lock(&state.mu);
    const std::string etag = absl::StrCat("\"v", state.version, "\"");
    if (req.get_header_value("If-None-Match") == etag) {
      ++state.not_modified;
      res.status = 304;
      return;
    }
    ++state.served;
    res.set_header("ETag", etag);
    res.set_content(feeds::DeflateGzip(Urlset({state.lastmods.begin(), state.lastmods.end()})),
                    "application/gzip");
  });
  // Bad sitemaps: not XML, a gzip bomb, a redirect to another host whose
  // sitemap would signal /b and /d.
  site.server().Get("/notxml.xml", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("this is not a sitemap", "text/plain");
  });
  site.server().Get("/bomb.xml.gz", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(bomb, "application/gzip");
  });
  site.server().Get("/moved.xml", [&](const httplib::Request&, httplib::Response& res) {
    res.set_redirect(absl::StrCat("http://localhost:", site.port(), "/fresh.xml"));
  });
  site.server().Get("/fresh.xml", [&](const httplib::Request&, httplib::Response& res) {
    const std::string now = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
    res.set_content(Urlset({{SiteUrl("/b"), now}, {SiteUrl("/d"), now}}), "application/xml");
  });
  ASSERT_GT(site.Start(), 0);
  // The pages' URLs are on site_ (known to the cluster); this site serves
  // their sitemaps from another port of the same host.
  const httplib::Headers op = {{"Authorization", Bearer(cluster::Role::kOperator)}};
  const std::string ok = R"(recrawl_ingest_feed_fetches_total{result="ok",source="sitemap"})";
  const std::string error = R"(recrawl_ingest_feed_fetches_total{result="error",source="sitemap"})";
  const std::string not_modified =
      R"(recrawl_ingest_feed_fetches_total{result="not_modified",source="sitemap"})";

  // Registration: bad URL, wrong token, then the index.
  httplib::Result r =
      http_->Post("/admin/sitemaps", op, R"({"url":"ftp://x/"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  r = http_->Post("/admin/sitemaps", {{"Authorization", Bearer(cluster::Role::kPinger)}},
                  absl::StrCat(R"({"url":")", site.Url("/sitemap_index.xml"), "\"}"),
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  r = http_->Post("/admin/sitemaps", op,
                  absl::StrCat(R"({"url":")", site.Url("/sitemap_index.xml"), "\"}"),
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;

  // The first polls (index, then its gzip child) record the lastmods and
  // signal nothing.
  ASSERT_TRUE(WaitForMetric(ok, 2)) << Log();
  r = http_->Get("/admin/sitemaps", op);
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find(R"("kind":"sitemapindex")"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find(absl::StrCat(R"("url":")", site.Url("/pages.xml.gz"))), std::string::npos)
      << r->body;
  ASSERT_TRUE(WaitForMetric(not_modified, 1)) << Log();
  for (const char* path : {"/a", "/b", "/c", "/d"}) EXPECT_EQ(SignalsOf(SiteUrl(path)), 0) << path;

  // /a and /c change (after the registration, at the second's precision).
  absl::SleepFor(absl::Milliseconds(1100));
  {
    absl::MutexLock lock(&state.mu);
    const std::string now = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
    state.lastmods[SiteUrl("/a")] = now;
    state.lastmods[SiteUrl("/c")] = now;
    ++state.version;
  }
  ASSERT_TRUE(WaitForSignals(SiteUrl("/a"), 1)) << Log();
  ASSERT_TRUE(WaitForSignals(SiteUrl("/c"), 1)) << Log();
  // Further polls get 304 and signal nothing more.
  const double seen = Metric(not_modified);
  ASSERT_TRUE(WaitForMetric(not_modified, seen + 2)) << Log();
  EXPECT_EQ(SignalsOf(SiteUrl("/a")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/c")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/b")), 0);
  EXPECT_EQ(SignalsOf(SiteUrl("/d")), 0);

  // The bad sitemaps are errors and change nothing.
  const double errors = Metric(error);
  for (const char* path : {"/notxml.xml", "/bomb.xml.gz", "/moved.xml"}) {
    r = http_->Post("/admin/sitemaps", op, absl::StrCat(R"({"url":")", site.Url(path), "\"}"),
                    "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  ASSERT_TRUE(WaitForMetric(error, errors + 3)) << Log();
  // Each has failed once (the error count alone may come from two of them
  // retried before the third's first poll).
  const std::vector<std::string> reasons = {"redirect to another host (localhost) refused",
                                            "not well-formed XML", "gzip inflates to more than"};
  const auto listed = [&](const std::string& body) {
    for (const std::string& reason : reasons) {
      if (body.find(reason) == std::string::npos) return false;
    }
    return true;
  };
  for (int i = 0; i < 3000; ++i) {
    r = http_->Get("/admin/sitemaps", op);
    ASSERT_TRUE(r);
    if (listed(r->body)) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  for (const std::string& reason : reasons) {
    EXPECT_NE(r->body.find(reason), std::string::npos) << reason << "\n" << r->body;
  }
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(SignalsOf(SiteUrl("/a")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/c")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/b")), 0);
  EXPECT_EQ(SignalsOf(SiteUrl("/d")), 0);

  // Removal.
  r = http_->Delete(absl::StrCat("/admin/sitemaps?url=", site.Url("/moved.xml")), op);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = http_->Delete(absl::StrCat("/admin/sitemaps?url=", site.Url("/moved.xml")), op);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_TRUE(
      WaitForMetric(R"(recrawl_ingest_signals_total{outcome="accepted",source="sitemap"})", 2));
}

TEST_F(IngestEndToEndTest, WebSubDeliveriesAreSignalledOnceAndForgeriesChangeNothing) {
  // The hub stand-in: takes the subscription request (202) and keeps its form.
  absl::Mutex mu;
  httplib::Params form;
  TestHttpServer hub;
  hub.server().Post("/hub", [&](const httplib::Request& req, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    form = req.params;
    res.status = 202;
  });
  ASSERT_GT(hub.Start(), 0);
  auto param = [&](const std::string& name) {
    absl::MutexLock lock(&mu);
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const std::string topic = SiteUrl("/a");
  const httplib::Headers op = {{"Authorization", Bearer(cluster::Role::kOperator)}};

  httplib::Result r =
      http_->Post("/admin/websub", op,
                  absl::StrCat(R"({"hub":")", hub.Url("/hub"), R"(","topic":")", topic, "\"}"),
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const size_t at = r->body.find(R"("callbackId":")");
  ASSERT_NE(at, std::string::npos) << r->body;
  const std::string id = r->body.substr(at + 14, 16);

  // The gateway POSTs the subscription to the hub.
  for (int i = 0; i < 3000 && param("hub.mode").empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(param("hub.mode"), "subscribe") << Log();
  EXPECT_EQ(param("hub.topic"), topic);
  EXPECT_EQ(param("hub.callback"), absl::StrCat("http://gateway.test/websub/", id));
  const std::string secret = param("hub.secret");
  EXPECT_EQ(secret.size(), 64u) << secret;

  // Deliveries before the intent is verified are refused.
  const std::string atom = absl::StrCat(
      R"(<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>)",
      "<entry><link href=\"", SiteUrl("/b"), "\"/></entry><entry><link href=\"", SiteUrl("/c"),
      "\"/></entry></feed>");
  const std::string signature = *feeds::SignHubBody("sha256", secret, atom);
  r = http_->Post(absl::StrCat("/websub/", id), {{"X-Hub-Signature", signature}}, atom,
                  "application/atom+xml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;

  // Intent verification: a wrong topic is refused, the right one echoed.
  r = http_->Get(absl::StrCat("/websub/", id, "?hub.mode=subscribe&hub.topic=",
                              httplib::detail::encode_query_param(SiteUrl("/other")),
                              "&hub.challenge=c1&hub.lease_seconds=3600"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  r = http_->Get(absl::StrCat(
      "/websub/", id, "?hub.mode=subscribe&hub.topic=", httplib::detail::encode_query_param(topic),
      "&hub.challenge=c2-challenge&hub.lease_seconds=3600"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body, "c2-challenge");
  r = http_->Get("/admin/websub", op);
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find(R"("active":true)"), std::string::npos) << r->body;

  // A signed delivery: the topic and the entries, once each.
  r = http_->Post(absl::StrCat("/websub/", id), {{"X-Hub-Signature", signature}}, atom,
                  "application/atom+xml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  EXPECT_NE(r->body.find(R"("accepted":3)"), std::string::npos) << r->body;
  EXPECT_EQ(SignalsOf(topic), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/b")), 1);
  EXPECT_EQ(SignalsOf(SiteUrl("/c")), 1);

  // A forged one (bad HMAC, another entry) is acknowledged and changes nothing.
  const std::string forged = absl::StrCat(
      R"(<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>)",
      "<entry><link href=\"", SiteUrl("/d"), "\"/></entry></feed>");
  r = http_->Post(absl::StrCat("/websub/", id),
                  {{"X-Hub-Signature", *feeds::SignHubBody("sha256", "not-the-secret", forged)}},
                  forged, "application/atom+xml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  r = http_->Post(absl::StrCat("/websub/", id), forged, "application/atom+xml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  EXPECT_EQ(SignalsOf(SiteUrl("/d")), 0);
  EXPECT_EQ(SignalsOf(topic), 1);
  EXPECT_EQ(Metric(R"(recrawl_ingest_signals_total{outcome="forged",source="websub"})"), 2);

  // Unsubscribing asks the hub.
  r = http_->Delete(
      absl::StrCat("/admin/websub?hub=", httplib::detail::encode_query_param(hub.Url("/hub")),
                   "&topic=", httplib::detail::encode_query_param(topic)),
      op);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  for (int i = 0; i < 3000 && param("hub.mode") != "unsubscribe"; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(param("hub.mode"), "unsubscribe");
}

// TLS everywhere, and shards that ask their clients for a certificate (as
// the Kubernetes tls overlay runs them): the gateway sends straight to the
// shards over channels of its own --shard_tls_* flags. The coordinator's
// certificate-less channel would not reach them, so a purge answered 200
// with its signal on the shard went the straight way.
TEST(IngestTlsTest, StraightToShardsThatAskForClientCertificates) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "ingest_tls");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(services::MakeCertificate(dir, "localhost").ok());
  const std::string cert = dir + "/localhost.pem";
  const std::string key = dir + "/localhost.key";
  const std::string pinger = "pinger-token-0123456789";
  const std::string operator_token = "operator-token-0123456789";
  std::ofstream(dir + "/tokens") << "internal internal-token-0123456789\npinger " << pinger
                                 << "\noperator " << operator_token << "\n";
  auto log = [&](const std::string& name) {
    std::ifstream in(absl::StrCat(dir, "/", name, ".log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };

  constexpr int kShards = 2;
  services::ServerProcess shards[kShards];
  std::vector<std::string> addresses;
  for (int s = 0; s < kShards; ++s) {
    const std::string name = absl::StrCat("shard", s);
    ASSERT_TRUE(
        shards[s]
            .Start("services/shard_server",
                   {"--data_dir=" + dir + "/" + name, "--port=0", "--host=127.0.0.1",
                    absl::StrCat("--shard_index=", s), absl::StrCat("--num_shards=", kShards),
                    "--token_file=" + dir + "/tokens", "--drain_seconds=1", "--tls_cert=" + cert,
                    "--tls_key=" + key, "--tls_client_ca=" + cert, "--tls_require_client_cert"},
                   dir + "/" + name + ".port", dir + "/" + name + ".log", 120)
            .ok())
        << log(name);
    addresses.push_back(absl::StrCat("127.0.0.1:", shards[s].port()));
  }
  const std::vector<std::string> client_tls = {"--shard_tls_ca=" + cert, "--shard_tls_cert=" + cert,
                                               "--shard_tls_key=" + key,
                                               "--shard_tls_server_name=localhost"};
  std::vector<std::string> flags = {"--shards=" + absl::StrJoin(addresses, ","),
                                    absl::StrCat("--num_shards=", kShards),
                                    "--port=0",
                                    "--host=127.0.0.1",
                                    "--token_file=" + dir + "/tokens",
                                    "--drain_seconds=1",
                                    "--tls_cert=" + cert,
                                    "--tls_key=" + key};
  flags.insert(flags.end(), client_tls.begin(), client_tls.end());
  services::ServerProcess coordinator;
  ASSERT_TRUE(coordinator
                  .Start("services/coordinator_server", flags, dir + "/coordinator.port",
                         dir + "/coordinator.log", 120)
                  .ok())
      << log("coordinator");

  client::ClientOptions options;
  options.target = absl::StrCat("127.0.0.1:", coordinator.port());
  options.token = operator_token;
  client::ClientTlsOptions tls;
  tls.ca_file = cert;
  tls.server_name = "localhost";
  options.credentials = *client::ChannelCredentialsFor(tls);
  options.tls_server_name = "localhost";
  options.max_attempts = 100;
  client::AdminClient admin(options);
  bool live = false;
  for (int i = 0; i < 1200 && !live; ++i) {
    absl::StatusOr<ShardMap> map = admin.GetShardMap();
    live = map.ok() && std::count(map->live().begin(), map->live().end(), true) == kShards;
    if (!live) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(live) << log("coordinator");
  std::vector<UrlSpec> specs;
  for (int i = 0; i < 4; ++i) {
    UrlSpec& spec = specs.emplace_back();
    spec.set_url(absl::StrCat("https://host", i, ".example/page"));
    spec.set_importance(1.0);
  }
  absl::StatusOr<UpsertUrlsResponse> upserted = admin.UpsertUrls(specs);
  ASSERT_TRUE(upserted.ok()) << upserted.status();
  ASSERT_EQ(upserted->result().applied(), specs.size());

  flags = {"--port=0",
           "--coordinator=" + options.target,
           "--coordinator_tls_ca=" + cert,
           "--coordinator_tls_server_name=localhost",
           "--token_file=" + dir + "/tokens",
           "--drain_seconds=1",
           "--route_to_shards"};
  flags.insert(flags.end(), client_tls.begin(), client_tls.end());
  services::ServerProcess gateway;
  ASSERT_TRUE(
      gateway.Start("ingest/ingest_server", flags, dir + "/ingest.port", dir + "/ingest.log", 120)
          .ok())
      << log("ingest");
  EXPECT_NE(log("ingest").find("2 shards straight"), std::string::npos) << log("ingest");

  httplib::Client http("127.0.0.1", gateway.port());
  http.set_read_timeout(120, 0);
  std::string body = R"({"urls":[)";
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&body, i > 0 ? "," : "", "\"https://host", i, ".example/page\"");
  }
  httplib::Result r = http.Post("/cdn/purge", {{"Authorization", "Bearer " + pinger}}, body + "]}",
                                "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200) << r->body << "\n" << log("ingest");
  EXPECT_NE(r->body.find(R"("accepted":4)"), std::string::npos) << r->body;
  for (const UrlSpec& spec : specs) {
    absl::StatusOr<UrlState> state = admin.GetUrlState(spec.url());
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->signals_since_crawl(), 1u) << spec.url();
  }

  for (services::ServerProcess* p : {&gateway, &coordinator, &shards[0], &shards[1]}) {
    const int status = p->Stop(SIGTERM, 30);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
