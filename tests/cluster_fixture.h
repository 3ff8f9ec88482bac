// What the end-to-end tests share: a LocalCluster of the real shard_server
// and coordinator_server binaries under the test's temporary directory,
// clients patient enough to ride out a restart on a loaded machine, and
// the URLs they register.
#ifndef RECRAWL_TESTS_CLUSTER_FIXTURE_H_
#define RECRAWL_TESTS_CLUSTER_FIXTURE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/admin_client.h"
#include "client/client_options.h"
#include "deploy/local_cluster.h"
#include "gtest/gtest.h"
#include "proto/coordinator.pb.h"
#include "services/auth.h"

namespace recrawl {
namespace tests {

// Options for a cluster of `shards` shards under
// TempDir()/e2e_<test name> (emptied first), the binaries from this test's
// runfiles, tokens on, real time. Servers drain for one second on SIGTERM.
deploy::LocalClusterOptions TestClusterOptions(int shards);

// Polls `done` every 20 ms for up to `seconds` of real time: a generous
// bound for a loaded machine, not a measurement.
bool WaitFor(const std::function<bool()>& done, double seconds = 60);

// "https://host<i>.example/page<page>": one host per i, so hosts spread
// over the shards.
std::string HostUrl(int i, int page = 0);
// i of a HostUrl.
int HostOfUrl(const std::string& url);

// A URL of host i with importance 1 + i % 5, last crawled at `last_crawl`.
UrlSpec HostSpec(int i, double last_crawl, int page = 0);

// The sum of VmRSS (kB) of process `pid` from /proc; -1 if unreadable.
long RssKb(pid_t pid);

class ClusterTest : public ::testing::Test {
 protected:
  // Starts `options`' cluster; fails the test (fatally) on error.
  void StartCluster(deploy::LocalClusterOptions options);

  // The cluster's client options for `role`, retrying UNAVAILABLE for
  // about a minute (a process restarting under ASan on a loaded machine).
  client::ClientOptions Options(cluster::Role role) const;

  // An operator's client.
  client::AdminClient Admin() const;

  // Upserts HostSpec(first .. first + n - 1, last_crawl); every one must be
  // applied.
  void UpsertHosts(int first, int n, double last_crawl);

  // The tail of a process's log ("coordinator", "shard0", ...), for
  // failure messages.
  std::string LogTail(const std::string& name) const;

  std::unique_ptr<deploy::LocalCluster> cluster_;
};

}  // namespace tests
}  // namespace recrawl

#endif  // RECRAWL_TESTS_CLUSTER_FIXTURE_H_
