// recrawlctl: the operator's command line for a recrawl cluster.
//
//   recrawlctl --target=coordinator:50050 --token_file=op.token bandwidth set 250
//   recrawlctl stats --json
//   recrawlctl urls add urls.csv
//   recrawlctl --gateway=ingest:8080 --token_file=tokens ingest keys add example.com <key>
//
// The commands are in client/cli_commands.cc; this file turns the flags
// into client options.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "client/cli_commands.h"
#include "client/cli_flags.h"
#include "client/credentials.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, target, "localhost:50050", "The coordinator, host:port");
ABSL_FLAG(std::string, gateway, "localhost:8080",
          "ingest: the ingestion gateway's HTTP(S) address, host:port (HTTPS with --tls_ca)");
ABSL_FLAG(std::string, token, "",
          "Role token (operator for settings and URLs, fetcher for lease and "
          "report, pinger for ping)");
ABSL_FLAG(std::string, token_file, "",
          "Read the role token from this file instead of --token: a file "
          "with one token, or a token file of role lines (as the servers "
          "and `recrawl_local serve` use), from which --role's is taken");
ABSL_FLAG(std::string, role, "",
          "With a --token_file of role lines: whose token (fetcher, pinger "
          "or operator; default: fetcher for lease and report, pinger for "
          "ping, operator otherwise)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM file of the CA that signed the coordinator's (ingest: the "
          "gateway's) certificate: connect with TLS (empty: plain text)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for a coordinator that asks for one");
ABSL_FLAG(std::string, tls_key, "", "Private key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name to verify in the coordinator's certificate (default: the "
          "--target host)");
ABSL_FLAG(double, deadline, 30.0, "Seconds each RPC (ingest: HTTP request) may take");
ABSL_FLAG(bool, json, false, "stats, lease: print JSON");
ABSL_FLAG(std::string, holder, "recrawlctl", "lease, report: the holder name");
ABSL_FLAG(double, lookahead, 0.0, "lease: take slots up to this many seconds ahead");
ABSL_FLAG(std::string, source, "other", "ping: sitemap, cdn, indexnow, websub or other");
ABSL_FLAG(double, fetch_time, 0.0,
          "report: when the page was fetched (0: now, on the shard's clock)");
ABSL_FLAG(int, batch_size, 1000, "urls add, ping: items per request");

namespace recrawl {
namespace client {
namespace {

// The role whose token a command needs by default.
cluster::Role DefaultRole(const std::vector<std::string>& args) {
  const std::string command = args.empty() ? "" : args[0];
  if (command == "lease" || command == "report") return cluster::Role::kFetcher;
  if (command == "ping") return cluster::Role::kPinger;
  return cluster::Role::kOperator;
}

int Main(const std::vector<std::string>& args) {
  ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  options.token = absl::GetFlag(FLAGS_token);
  if (const std::string file = absl::GetFlag(FLAGS_token_file); !file.empty()) {
    cluster::Role role = DefaultRole(args);
    if (const std::string name = absl::GetFlag(FLAGS_role); !name.empty()) {
      absl::StatusOr<cluster::Role> parsed = cluster::ParseRole(name);
      if (!parsed.ok()) {
        std::cerr << "--role: " << parsed.status().message() << "\n";
        return kExitUsage;
      }
      role = *parsed;
    }
    absl::StatusOr<std::string> token = client::ClientTokenFromFile(file, role);
    if (!token.ok()) {
      std::cerr << "--token_file: " << token.status().message() << "\n";
      return kExitUsage;
    }
    options.token = *std::move(token);
  } else if (!options.token.empty()) {
    if (absl::Status s = cluster::ValidateToken(options.token); !s.ok()) {
      std::cerr << "--token: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  client::ClientTlsOptions tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentialsFor(tls);
  if (!credentials.ok()) {
    std::cerr << credentials.status().message() << "\n";
    return kExitUsage;
  }
  options.credentials = *credentials;
  options.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  options.deadline = absl::Seconds(absl::GetFlag(FLAGS_deadline));
  options.max_batch_items = absl::GetFlag(FLAGS_batch_size);

  CliFlags flags;
  flags.json = absl::GetFlag(FLAGS_json);
  flags.holder = absl::GetFlag(FLAGS_holder);
  flags.lookahead = absl::GetFlag(FLAGS_lookahead);
  flags.source = absl::GetFlag(FLAGS_source);
  flags.fetch_time = absl::GetFlag(FLAGS_fetch_time);
  flags.batch_size = absl::GetFlag(FLAGS_batch_size);
  flags.progress = isatty(STDERR_FILENO) == 1;
  flags.gateway.address = absl::GetFlag(FLAGS_gateway);
  flags.gateway.ca_file = tls.ca_file;
  flags.gateway.cert_file = tls.cert_file;
  flags.gateway.key_file = tls.key_file;
  flags.gateway.timeout = options.deadline;
  if (flags.batch_size < 1) {
    std::cerr << "--batch_size must be >= 1\n";
    return kExitUsage;
  }
  const CliIo io{&std::cin, &std::cout, &std::cerr};
  return RunCommand(args, options, flags, io);
}

}  // namespace
}  // namespace client
}  // namespace recrawl

int main(int argc, char** argv) {
  using recrawl::client::kExitUsage;
  absl::StatusOr<recrawl::client::ParsedArgs> parsed =
      recrawl::client::ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << " (recrawlctl --help)\n";
    return kExitUsage;
  }
  if (parsed->help) {
    std::cout << "recrawlctl: the recrawl cluster's command line\n\n"
                 "  recrawlctl [flags] COMMAND [ARGS...]\n\n"
              << recrawl::client::CommandsHelp() << "\n"
              << recrawl::client::FlagsHelp("recrawlctl.cc");
    return 0;
  }
  return recrawl::client::Main(parsed->positional);
}
