// recrawlctl's commands: parsing the words after the flags, calling the
// client library, printing, and the exit code. recrawlctl.cc only turns
// flags into ClientOptions and CliFlags.
#ifndef RECRAWL_CLIENT_CLI_COMMANDS_H_
#define RECRAWL_CLIENT_CLI_COMMANDS_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "client/client_options.h"
#include "client/gateway_client.h"

namespace recrawl {
namespace client {

enum ExitCode {
  kExitOk = 0,
  // An RPC failed, or items of a batch were rejected.
  kExitRpcError = 1,
  // Unknown command, wrong arguments, unreadable input file.
  kExitUsage = 2,
};

// Settings of the commands that have any (recrawlctl's flags).
struct CliFlags {
  // stats, urls get, lease: JSON instead of the human form.
  bool json = false;
  // lease: the holder shown in the URLs' lease state; how far ahead.
  std::string holder = "recrawlctl";
  double lookahead = 0.0;
  // ping: sitemap, cdn, indexnow, websub or other.
  std::string source = "other";
  // report: fetch time (0: the shard's now).
  double fetch_time = 0.0;
  // urls add, ping: items per request.
  int batch_size = 1000;
  // urls add: draw a progress line on `err` (a terminal).
  bool progress = false;
  // ingest: the gateway's address and TLS; the token is ClientOptions'.
  GatewayClientOptions gateway;
};

struct CliIo {
  std::istream* in;
  std::ostream* out;
  std::ostream* err;
};

// The command list, for --help and usage errors.
std::string CommandsHelp();

// Runs the command `args` (e.g. {"bandwidth", "set", "100"}).
int RunCommand(const std::vector<std::string>& args, const ClientOptions& options,
               const CliFlags& flags, const CliIo& io);

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_CLI_COMMANDS_H_
