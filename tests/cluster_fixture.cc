#include "tests/cluster_fixture.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace tests {

deploy::LocalClusterOptions TestClusterOptions(int shards) {
  deploy::LocalClusterOptions o;
  o.data_dir = absl::StrCat(::testing::TempDir(), "e2e_",
                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(o.data_dir);
  // Runfiles paths: the test runs from the workspace's runfiles root.
  o.shard_server = "services/shard_server";
  o.coordinator_server = "services/coordinator_server";
  o.shards = shards;
  o.shard_flags = {"--drain_seconds=1"};
  o.coordinator_flags = {"--drain_seconds=1"};
  // Under ASan on two busy cores a store takes a while to open.
  o.start_timeout = 120;
  return o;
}

bool WaitFor(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::string HostUrl(int i, int page) {
  return absl::StrCat("https://host", i, ".example/page", page);
}

int HostOfUrl(const std::string& url) {
  return std::stoi(url.substr(std::string("https://host").size()));
}

UrlSpec HostSpec(int i, double last_crawl, int page) {
  UrlSpec spec;
  spec.set_url(HostUrl(i, page));
  spec.set_importance(1.0 + i % 5);
  spec.set_last_crawl_time(last_crawl);
  return spec;
}

long RssKb(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

void ClusterTest::StartCluster(deploy::LocalClusterOptions options) {
  cluster_ = std::make_unique<deploy::LocalCluster>(std::move(options));
  // Start waits until the coordinator sees every shard live.
  const absl::Status started = cluster_->Start();
  ASSERT_TRUE(started.ok()) << started << "\n" << LogTail("coordinator");
}

client::ClientOptions ClusterTest::Options(cluster::Role role) const {
  client::ClientOptions o = cluster_->ClientOptionsFor(role);
  o.deadline = absl::Seconds(20);
  o.backoff.initial = absl::Milliseconds(20);
  o.backoff.max = absl::Milliseconds(250);
  o.max_attempts = 300;  // ~a minute of 200 ms waits
  return o;
}

client::AdminClient ClusterTest::Admin() const {
  return client::AdminClient(Options(cluster::Role::kOperator));
}

void ClusterTest::UpsertHosts(int first, int n, double last_crawl) {
  std::vector<UrlSpec> urls;
  for (int i = first; i < first + n; ++i) {
    urls.push_back(HostSpec(i, last_crawl));
  }
  absl::StatusOr<UpsertUrlsResponse> response = Admin().UpsertUrls(urls);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->result().applied(), static_cast<uint32_t>(n))
      << (response->result().rejected().empty() ? std::string()
                                                : response->result().rejected(0).message());
}

std::string ClusterTest::LogTail(const std::string& name) const {
  std::ifstream in(absl::StrCat(cluster_->options().data_dir, "/", name, ".log"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  constexpr size_t kTail = 4000;
  return all.size() > kTail ? all.substr(all.size() - kTail) : all;
}

}  // namespace tests
}  // namespace recrawl
