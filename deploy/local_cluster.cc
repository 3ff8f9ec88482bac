#include "deploy/local_cluster.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/admin_client.h"
#include "cluster/tokens.h"
#include "services/clock.h"

namespace recrawl {
namespace deploy {
namespace {

using cluster::Role;

constexpr cluster::Role kRoles[] = {cluster::Role::kFetcher, cluster::Role::kPinger,
                                    cluster::Role::kOperator, cluster::Role::kInternal};

// 32 characters from the 62 of [0-9A-Za-z], drawn from std::random_device
// (the kernel's generator): about 190 bits.
std::string RandomToken() {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::random_device device;
  std::uniform_int_distribution<int> pick(0, sizeof(kAlphabet) - 2);
  std::string token(32, ' ');
  for (char& c : token) c = kAlphabet[pick(device)];
  return token;
}

std::string Local(int port) { return absl::StrCat("127.0.0.1:", port); }

}  // namespace

absl::StatusOr<cluster::TokenTable> LoadOrCreateTokens(const std::string& path) {
  if (std::filesystem::exists(path)) return cluster::TokenTable::Load(path);
  std::ostringstream text;
  text << "# recrawl local cluster role tokens (made by LocalCluster)\n";
  for (cluster::Role role : kRoles) {
    text << cluster::RoleName(role) << " " << RandomToken() << "\n";
  }
  // Written to a temporary file readable by the owner only, then renamed,
  // so a crash leaves either no file or a whole one.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) {
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
    chmod(tmp.c_str(), 0600);
    out << text.str();
    if (!out.flush()) {
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, ": ", error.message()));
  }
  return cluster::TokenTable::Parse(text.str());
}

LocalCluster::LocalCluster(LocalClusterOptions options) : options_(std::move(options)) {}

LocalCluster::~LocalCluster() {
  coordinator_.Stop(SIGTERM, 10);
  for (auto& shard : shards_) {
    if (shard != nullptr) shard->Stop(SIGTERM, 10);
  }
}

std::string LocalCluster::PathOf(const std::string& name) const {
  return absl::StrCat(options_.data_dir, "/", name);
}

absl::Status LocalCluster::Start() {
  if (options_.shards < 1) {
    return absl::InvalidArgumentError(absl::StrCat("shards: must be >= 1, got ", options_.shards));
  }
  if (!(options_.time_scale > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time_scale: must be > 0, got ", options_.time_scale));
  }
  std::error_code error;
  std::filesystem::create_directories(options_.data_dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", options_.data_dir, ": ", error.message()));
  }
  if (options_.tokens) {
    absl::StatusOr<cluster::TokenTable> tokens = LoadOrCreateTokens(PathOf("tokens"));
    if (!tokens.ok()) return tokens.status();
    tokens_ = *std::move(tokens);
  }
  epoch_ = services::Clock::UnixNow();
  origin_ = options_.time_origin >= 0.0 ? options_.time_origin : epoch_;
  clock_.emplace(options_.time_scale, origin_, epoch_);

  shards_.clear();
  shard_ports_.assign(options_.shards, 0);
  for (int s = 0; s < options_.shards; ++s) {
    shards_.push_back(std::make_unique<services::ServerProcess>());
    if (absl::Status status = StartShard(s, 0); !status.ok()) {
      Stop().IgnoreError();
      return status;
    }
  }
  absl::Status status = StartCoordinator(options_.coordinator_port);
  if (status.ok()) status = WaitUntilAllLive();
  if (status.ok() && !options_.ingest_server.empty()) status = StartIngest();
  if (!status.ok()) {
    Stop().IgnoreError();
    return status;
  }
  return absl::OkStatus();
}

absl::Status LocalCluster::WaitUntilAllLive() const {
  client::ClientOptions o = ClientOptionsFor(cluster::Role::kOperator);
  o.max_attempts = 1;
  o.deadline = absl::Seconds(5);
  client::AdminClient admin(o);
  const double deadline = services::Clock::UnixNow() + options_.start_timeout;
  uint32_t live = 0;
  for (;;) {
    absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
    if (stats.ok()) {
      live = stats->live_shards();
      if (live == static_cast<uint32_t>(options_.shards)) {
        return absl::OkStatus();
      }
    }
    if (services::Clock::UnixNow() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "the coordinator sees ", live, " of ", options_.shards, " shards live after ",
      options_.start_timeout, " s; see ", PathOf("coordinator.log"), " and the shards' logs"));
}

absl::Status LocalCluster::StartShard(int s, int port) {
  const std::string name = absl::StrCat("shard", s);
  std::vector<std::string> args = {
      "--data_dir=" + PathOf(name),
      "--host=127.0.0.1",
      absl::StrCat("--port=", port),
      "--metrics_port=0",
      absl::StrCat("--shard_index=", s),
      absl::StrCat("--num_shards=", options_.shards),
      absl::StrCat("--time_scale=", options_.time_scale),
      absl::StrFormat("--time_origin=%.6f", origin_),
      absl::StrFormat("--time_epoch=%.6f", epoch_),
  };
  if (options_.tokens) args.push_back("--token_file=" + PathOf("tokens"));
  args.insert(args.end(), options_.shard_flags.begin(), options_.shard_flags.end());
  absl::Status status =
      shards_[s]->Start(options_.shard_server, std::move(args), PathOf(name + ".port"),
                        PathOf(name + ".log"), options_.start_timeout);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("shard ", s, ": ", status.message()));
  }
  shard_ports_[s] = shards_[s]->port();
  return absl::OkStatus();
}

absl::Status LocalCluster::StartCoordinator(int port) {
  std::vector<std::string> shard_addresses;
  for (int p : shard_ports_) shard_addresses.push_back(Local(p));
  std::vector<std::string> args = {
      "--shards=" + absl::StrJoin(shard_addresses, ","),
      absl::StrCat("--num_shards=", options_.shards),
      "--host=127.0.0.1",
      absl::StrCat("--port=", port),
      "--metrics_port=0",
      absl::StrCat("--bandwidth=", options_.bandwidth),
      "--mode=" + options_.mode,
      absl::StrCat("--time_scale=", options_.time_scale),
      absl::StrFormat("--time_origin=%.6f", origin_),
      absl::StrFormat("--time_epoch=%.6f", epoch_),
  };
  if (options_.tokens) args.push_back("--token_file=" + PathOf("tokens"));
  args.insert(args.end(), options_.coordinator_flags.begin(), options_.coordinator_flags.end());
  absl::Status status =
      coordinator_.Start(options_.coordinator_server, std::move(args), PathOf("coordinator.port"),
                         PathOf("coordinator.log"), options_.start_timeout);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("coordinator: ", status.message()));
  }
  coordinator_port_ = coordinator_.port();
  return absl::OkStatus();
}

absl::Status LocalCluster::StartIngest() {
  std::vector<std::string> args = {
      "--host=127.0.0.1",
      "--port=0",
      "--coordinator=" + coordinator_address(),
      "--state_dir=" + PathOf("ingest"),
      absl::StrCat("--time_scale=", options_.time_scale),
      absl::StrFormat("--time_origin=%.6f", origin_),
      absl::StrFormat("--time_epoch=%.6f", epoch_),
  };
  if (options_.tokens) args.push_back("--token_file=" + PathOf("tokens"));
  args.insert(args.end(), options_.ingest_flags.begin(), options_.ingest_flags.end());
  absl::Status status =
      ingest_.Start(options_.ingest_server, std::move(args), PathOf("ingest.port"),
                    PathOf("ingest.log"), options_.start_timeout);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("ingest gateway: ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status LocalCluster::Stop() {
  absl::Status result;
  auto stop = [&result](services::ServerProcess& process, const std::string& name) {
    if (process.pid() <= 0) return;
    const int status = process.Stop(SIGTERM);
    if (status != 0 && result.ok()) {
      result = absl::InternalError(
          absl::StrCat(name, " did not exit cleanly on SIGTERM (wait status ", status, ")"));
    }
  };
  stop(ingest_, "ingest gateway");
  stop(coordinator_, "coordinator");
  for (size_t s = 0; s < shards_.size(); ++s) {
    if (shards_[s] != nullptr) stop(*shards_[s], absl::StrCat("shard ", s));
  }
  return result;
}

int LocalCluster::StopShard(int s, int sig) { return shards_[s]->Stop(sig); }

int LocalCluster::StopCoordinator(int sig) { return coordinator_.Stop(sig); }

absl::Status LocalCluster::RestartShard(int s) {
  if (shards_[s]->pid() > 0) {
    return absl::FailedPreconditionError(absl::StrCat("shard ", s, " is still running"));
  }
  return StartShard(s, shard_ports_[s]);
}

absl::Status LocalCluster::RestartCoordinator() {
  if (coordinator_.pid() > 0) {
    return absl::FailedPreconditionError("the coordinator is still running");
  }
  return StartCoordinator(coordinator_port_);
}

std::string LocalCluster::coordinator_address() const { return Local(coordinator_port_); }

std::string LocalCluster::shard_address(int s) const { return Local(shard_ports_[s]); }

std::string LocalCluster::ingest_address() const {
  return ingest_.pid() > 0 ? Local(ingest_.port()) : std::string();
}

int LocalCluster::coordinator_metrics_port() const { return coordinator_.metrics_port(); }

int LocalCluster::shard_metrics_port(int s) const { return shards_[s]->metrics_port(); }

pid_t LocalCluster::shard_pid(int s) const { return shards_[s]->pid(); }

pid_t LocalCluster::coordinator_pid() const { return coordinator_.pid(); }

double LocalCluster::Now() const { return clock_->Now(); }

std::string LocalCluster::TokenOf(cluster::Role role) const {
  return options_.tokens ? tokens_.TokenOf(role) : std::string();
}

client::ClientOptions LocalCluster::ClientOptionsFor(cluster::Role role) const {
  client::ClientOptions o;
  o.target = coordinator_address();
  o.token = TokenOf(role);
  o.time_scale = options_.time_scale;
  o.clock = [clock = *clock_] { return clock.Now(); };
  return o;
}

}  // namespace deploy
}  // namespace recrawl
