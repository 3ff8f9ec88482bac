// The gateway's throughput to a durable acknowledgement: IndexNow POSTs of
// 10,000 URLs each through ingest_server, against the same number of
// signals sent with PingClient straight to the coordinator's StreamSignals
// (the same batches of 1000, 8 in flight, fsync before each
// acknowledgement as the gateway asks), in the same run on a local
// cluster. Clients and servers share the machine's cores. With
// --route_to_shards the gateway sends straight to the shards (the
// baseline still goes through the coordinator).
//
//   bazel build //ingest:ingest_benchmark //ingest:ingest_server
//       //services:shard_server //services:coordinator_server
//   bazel-bin/ingest/ingest_benchmark
//       --ingest_server=bazel-bin/ingest/ingest_server
//       --shard_server=bazel-bin/services/shard_server
//       --coordinator_server=bazel-bin/services/coordinator_server
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/admin_client.h"
#include "client/ping_client.h"
#include "deploy/local_cluster.h"
#include "services/server_process.h"

ABSL_FLAG(std::string, shard_server, "services/shard_server", "Shard binary");
ABSL_FLAG(std::string, coordinator_server, "services/coordinator_server", "Coordinator binary");
ABSL_FLAG(std::string, ingest_server, "ingest/ingest_server", "Gateway binary");
ABSL_FLAG(int, shards, 4, "Shard processes");
ABSL_FLAG(int, hosts, 8, "Hosts (one IndexNow key each)");
ABSL_FLAG(int, posts, 24, "IndexNow POSTs of 10,000 URLs");
ABSL_FLAG(int, clients, 4, "Concurrent HTTP clients");
ABSL_FLAG(std::string, dir, "", "Data directory (default: a temporary one)");
ABSL_FLAG(bool, route_to_shards, false,
          "Start the gateway with --route_to_shards (signals straight to the shards)");

namespace recrawl {
namespace ingest {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kUrlsPerPost = 10000;
constexpr int kUrlsPerHost = 12500;
constexpr char kKey[] = "benchmark-key-0123";

void Check(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string Url(int host, int page) {
  return absl::StrCat("https://site", host, ".example/page?id=", page);
}

// POST p's URLs: 10,000 distinct pages of host p % hosts, starting where
// POST p - hosts stopped.
std::vector<std::string> PostUrls(int p, int hosts) {
  std::vector<std::string> urls;
  const int host = p % hosts;
  const int first = (p / hosts) * 997;
  for (int i = 0; i < kUrlsPerPost; ++i) urls.push_back(Url(host, (first + i) % kUrlsPerHost));
  return urls;
}

int Main() {
  const int hosts = absl::GetFlag(FLAGS_hosts);
  const int posts = absl::GetFlag(FLAGS_posts);
  deploy::LocalClusterOptions o;
  o.data_dir = absl::GetFlag(FLAGS_dir).empty()
                   ? absl::StrCat(std::filesystem::temp_directory_path().string(),
                                  "/ingest_benchmark_", getpid())
                   : absl::GetFlag(FLAGS_dir);
  o.shard_server = absl::GetFlag(FLAGS_shard_server);
  o.coordinator_server = absl::GetFlag(FLAGS_coordinator_server);
  o.shards = absl::GetFlag(FLAGS_shards);
  o.start_timeout = 120;
  deploy::LocalCluster cluster(o);
  Check(cluster.Start());

  client::AdminClient admin(cluster.ClientOptionsFor(cluster::Role::kOperator));
  std::vector<UrlSpec> specs;
  for (int h = 0; h < hosts; ++h) {
    for (int i = 0; i < kUrlsPerHost; ++i) {
      UrlSpec& s = specs.emplace_back();
      s.set_url(Url(h, i));
      s.set_importance(1.0);
      s.set_last_crawl_time(cluster.Now() - 3600);
    }
  }
  Check(admin.UpsertUrls(specs).status());

  std::vector<std::string> gateway_flags = {
      "--host=127.0.0.1",
      "--port=0",
      absl::StrCat("--coordinator=", cluster.coordinator_address()),
      absl::StrCat("--token_file=", o.data_dir, "/tokens"),
      "--indexnow_host_rate=1000",
      "--indexnow_host_burst=100000",
      "--max_body_bytes=8000000"};
  if (absl::GetFlag(FLAGS_route_to_shards)) gateway_flags.push_back("--route_to_shards");
  services::ServerProcess gateway;
  Check(gateway.Start(absl::GetFlag(FLAGS_ingest_server), gateway_flags,
                      o.data_dir + "/ingest.port", o.data_dir + "/ingest.log", 120));
  httplib::Client setup("127.0.0.1", gateway.port());
  const httplib::Headers op = {
      {"Authorization", "Bearer " + cluster.TokenOf(cluster::Role::kOperator)}};
  for (int h = 0; h < hosts; ++h) {
    auto r = setup.Post("/admin/indexnow/keys", op,
                        absl::StrCat(R"({"host":"site)", h, R"(.example","key":")", kKey, "\"}"),
                        "application/json");
    if (!r || r->status != 200) Check(absl::InternalError("registering a key failed"));
  }

  // The bodies are made before the clock starts.
  std::vector<std::string> bodies;
  for (int p = 0; p < posts; ++p) {
    bodies.push_back(absl::StrCat(R"({"host":"site)", p % hosts, R"(.example","key":")", kKey,
                                  R"(","urlList":[")", absl::StrJoin(PostUrls(p, hosts), "\",\""),
                                  "\"]}"));
  }
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < absl::GetFlag(FLAGS_clients); ++c) {
    clients.emplace_back([&] {
      httplib::Client http("127.0.0.1", gateway.port());
      http.set_read_timeout(300, 0);
      for (int p = next++; p < posts; p = next++) {
        auto r = http.Post("/indexnow", bodies[p], "application/json; charset=utf-8");
        if (!r || r->status != 200) ++failed;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  const double gateway_seconds = Since(start);
  const double gateway_rate = static_cast<double>(posts) * kUrlsPerPost / gateway_seconds;
  std::printf(
      "gateway (%s): %d POSTs of %d URLs by %d clients in %.2f s: %.0f URLs/s (%d failed)\n",
      absl::GetFlag(FLAGS_route_to_shards) ? "straight to the shards" : "through the coordinator",
      posts, kUrlsPerPost, absl::GetFlag(FLAGS_clients), gateway_seconds, gateway_rate,
      failed.load());

  client::PingOptions ping;
  ping.batch_size = 1000;
  ping.max_in_flight = 8;
  ping.sync = true;
  auto pinger = client::PingClient::Create(cluster.ClientOptionsFor(cluster::Role::kPinger), ping);
  Check(pinger.status());
  const Clock::time_point direct_start = Clock::now();
  for (int p = 0; p < posts; ++p) {
    for (const std::string& url : PostUrls(p, hosts)) {
      Signal s;
      s.set_url(url);
      s.set_source(SIGNAL_SOURCE_INDEXNOW);
      Check((*pinger)->Add(std::move(s)));
    }
  }
  Check((*pinger)->Flush());
  const double direct_seconds = Since(direct_start);
  const double direct_rate = static_cast<double>(posts) * kUrlsPerPost / direct_seconds;
  const client::PingStats stats = (*pinger)->stats();
  std::printf(
      "StreamSignals (PingClient, batches of 1000, 8 in flight, sync): %.2f s: %.0f URLs/s "
      "(counted %llu, rejected %llu)\n",
      direct_seconds, direct_rate, static_cast<unsigned long long>(stats.counted),
      static_cast<unsigned long long>(stats.rejected));
  std::printf("gateway / StreamSignals: %.2f\n", gateway_rate / direct_rate);

  gateway.Stop(SIGTERM);
  Check(cluster.Stop());
  if (absl::GetFlag(FLAGS_dir).empty()) std::filesystem::remove_all(o.data_dir);
  return failed.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return recrawl::ingest::Main();
}
