// A recrawl cluster on this machine: N shard_server processes and one
// coordinator_server on loopback (and, when asked, an ingest_server in
// front of the coordinator), each shard's RocksDB store under the data
// directory, role tokens generated into it (docs/design.md,
// "Processes"): the main job, the end-to-end tests and the benchmarks
// start their clusters with it.
//
//   LocalClusterOptions o;
//   o.data_dir = "./data";
//   LocalCluster cluster(o);
//   absl::Status s = cluster.Start();
//   client::FetcherClient fetcher(cluster.ClientOptionsFor(Role::kFetcher), ...);
//   ...
//   cluster.Stop();  // SIGTERM: drain, flush, close; also in the destructor
//
// Every process shares one scaled clock (--time_scale, --time_origin and
// --time_epoch fixed at Start), so a shard or a coordinator restarted by
// RestartShard / RestartCoordinator resumes the cluster's time, and on its
// old port, where the others still look for it.
#ifndef RECRAWL_DEPLOY_LOCAL_CLUSTER_H_
#define RECRAWL_DEPLOY_LOCAL_CLUSTER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "services/auth.h"
#include "services/clock.h"
#include "services/server_process.h"

namespace recrawl {
namespace deploy {

struct LocalClusterOptions {
  // Holds tokens, shard<i>/ (a store each), *.log and *.port. Created if
  // missing; a second Start on it reopens the same stores.
  std::string data_dir = "./data";
  std::string shard_server = "bazel-bin/services/shard_server";
  std::string coordinator_server = "bazel-bin/services/coordinator_server";
  int shards = 4;
  // The coordinator's --bandwidth (crawls per clock second) and --mode.
  double bandwidth = 100.0;
  std::string mode = "merge";
  // Clock seconds per real second, for every process.
  double time_scale = 1.0;
  // Clock time at Start (< 0: Unix time).
  double time_origin = -1.0;
  // The coordinator's port (0: any free one). Shards take free ports.
  int coordinator_port = 0;
  // Role tokens in data_dir/tokens (made on first use, then reused) that
  // every RPC must carry; false: no token file, checks off.
  bool tokens = true;
  // The ingestion gateway's binary: started last, on loopback, sending to
  // the coordinator with the cluster's tokens, keeping its keys in
  // data_dir/ingest. Empty: no gateway.
  std::string ingest_server;
  // Extra flags, appended to each shard's / the coordinator's / the
  // gateway's own.
  std::vector<std::string> shard_flags;
  std::vector<std::string> coordinator_flags;
  std::vector<std::string> ingest_flags;
  // How long a process may take to serve.
  double start_timeout = 60.0;
};

class LocalCluster {
 public:
  explicit LocalCluster(LocalClusterOptions options);
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  // Stops what still runs (SIGTERM, then SIGKILL after a deadline).
  ~LocalCluster();

  // Writes the token file if missing, starts the shards, then the
  // coordinator, and waits until the coordinator sees every shard live (it
  // serves from its first health probes, and under load one can miss its
  // deadline; until the next it refuses that shard's items). On error the
  // processes already started are stopped and the message names the
  // process and its log.
  absl::Status Start();

  // Waits up to options().start_timeout real seconds until the coordinator
  // reports every shard live; DEADLINE_EXCEEDED saying how many it sees.
  absl::Status WaitUntilAllLive() const;

  // SIGTERM to the gateway, the coordinator, then the shards, each waited for. Returns
  // the first process that did not exit 0 as an error.
  absl::Status Stop();

  // Sends `sig` to shard `s` / the coordinator and waits for it to end
  // (its wait status, -1 if it had to be killed).
  int StopShard(int s, int sig);
  int StopCoordinator(int sig);
  // Starts a stopped shard / coordinator again on its port.
  absl::Status RestartShard(int s);
  absl::Status RestartCoordinator();

  // "127.0.0.1:port".
  std::string coordinator_address() const;
  std::string shard_address(int s) const;
  // The gateway's HTTP address, "127.0.0.1:port"; "" without one.
  std::string ingest_address() const;
  int coordinator_metrics_port() const;
  int shard_metrics_port(int s) const;
  pid_t shard_pid(int s) const;
  pid_t coordinator_pid() const;
  int num_shards() const { return options_.shards; }
  const LocalClusterOptions& options() const { return options_; }

  // The cluster's clock now (as every process reads it).
  double Now() const;
  // A token of `role` ("" with tokens off).
  std::string TokenOf(cluster::Role role) const;
  // Options for the client library: the coordinator's address, the token of
  // `role`, the cluster's clock and time scale.
  client::ClientOptions ClientOptionsFor(cluster::Role role) const;

 private:
  absl::Status StartShard(int s, int port);
  absl::Status StartCoordinator(int port);
  absl::Status StartIngest();
  std::string PathOf(const std::string& name) const;

  LocalClusterOptions options_;
  double origin_ = 0.0;
  double epoch_ = 0.0;
  // The clock every process runs (the servers' Clock with the same origin
  // and epoch); set by Start.
  std::optional<services::Clock> clock_;
  cluster::TokenTable tokens_;
  std::vector<std::unique_ptr<services::ServerProcess>> shards_;
  std::vector<int> shard_ports_;
  services::ServerProcess coordinator_;
  int coordinator_port_ = 0;
  services::ServerProcess ingest_;
};

// Reads data_dir/tokens, or writes one with a fresh random token per role
// (mode 0600) when there is none.
absl::StatusOr<cluster::TokenTable> LoadOrCreateTokens(const std::string& path);

}  // namespace deploy
}  // namespace recrawl

#endif  // RECRAWL_DEPLOY_LOCAL_CLUSTER_H_
