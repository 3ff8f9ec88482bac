#include "client/cli_commands.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/admin_client.h"
#include "client/cli_output.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "client/url_import.h"

namespace recrawl {
namespace client {
namespace {

// What a command runs with.
struct Env {
  const ClientOptions& options;
  const CliFlags& flags;
  const CliIo& io;

  AdminClient Admin() const { return AdminClient(options); }
  GatewayClient Gateway() const {
    GatewayClientOptions gateway = flags.gateway;
    gateway.token = options.token;
    return GatewayClient(std::move(gateway));
  }
  int Fail(const absl::Status& status) const {
    *io.err << "error: " << status << "\n";
    return kExitRpcError;
  }
  int Usage(const std::string& message) const {
    *io.err << "usage error: " << message << "\n\n" << CommandsHelp();
    return kExitUsage;
  }
};

using Args = std::vector<std::string>;

struct Command {
  std::vector<std::string> words;
  std::string arguments;
  int min_args;
  int max_args;  // -1: any number
  std::string help;
  std::function<int(const Args& args, const Env& env)> run;
};

std::optional<double> ParseDouble(const std::string& text) {
  double value;
  if (!absl::SimpleAtod(text, &value)) return std::nullopt;
  return value;
}

// Per-item errors of a batch, each named by `name(index)`; true if any.
bool PrintRejected(const BatchResult& result, const std::function<std::string(uint32_t)>& name,
                   std::ostream* err) {
  for (const ItemStatus& item : result.rejected()) {
    *err << name(item.index()) << ": "
         << absl::StatusCodeToString(static_cast<absl::StatusCode>(item.code())) << ": "
         << item.message() << "\n";
  }
  return result.rejected_size() > 0;
}

int BandwidthGet(const Args&, const Env& env) {
  absl::StatusOr<BandwidthState> state = env.Admin().GetBandwidth();
  if (!state.ok()) return env.Fail(state.status());
  *env.io.out << FormatBandwidth(*state) << "\n";
  return kExitOk;
}

int BandwidthSet(const Args& args, const Env& env) {
  const std::optional<double> r = ParseDouble(args[0]);
  if (!r.has_value()) return env.Usage("bandwidth: not a number: " + args[0]);
  absl::StatusOr<BandwidthState> state = env.Admin().SetBandwidth(*r, COORDINATOR_MODE_UNSPECIFIED);
  if (!state.ok()) return env.Fail(state.status());
  *env.io.out << FormatBandwidth(*state) << "\n";
  return kExitOk;
}

int ModeSet(const Args& args, const Env& env) {
  const std::optional<CoordinatorMode> mode = ParseModeName(args[0]);
  if (!mode.has_value()) {
    return env.Usage("mode: merge, equal or adaptive, not " + args[0]);
  }
  absl::StatusOr<BandwidthState> state = env.Admin().SetBandwidth(std::nullopt, *mode);
  if (!state.ok()) return env.Fail(state.status());
  *env.io.out << FormatBandwidth(*state) << "\n";
  return kExitOk;
}

int Stats(const Args&, const Env& env) {
  absl::StatusOr<ClusterStats> stats = env.Admin().GetClusterStats();
  if (!stats.ok()) return env.Fail(stats.status());
  *env.io.out << (env.flags.json ? ToJson(*stats) + "\n" : FormatClusterStats(*stats));
  return kExitOk;
}

// Reads `name` ("-": standard input) line by line, upserting in batches.
int UrlsAdd(const Args& args, const Env& env) {
  const std::string& name = args[0];
  std::ifstream file;
  std::istream* in = env.io.in;
  int64_t total_lines = 0;
  if (name != "-") {
    file.open(name);
    if (!file) return env.Usage("cannot read " + name);
    if (env.flags.progress) {
      std::ifstream counter(name);
      std::string line;
      while (std::getline(counter, line)) ++total_lines;
    }
    in = &file;
  }
  ProgressBar progress(env.io.err, total_lines, env.flags.progress && total_lines > 0);
  AdminClient admin = env.Admin();
  std::vector<UrlSpec> batch;
  std::vector<int64_t> batch_lines;
  int64_t line_number = 0, upserted = 0, created = 0, errors = 0;
  auto send = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    absl::StatusOr<UpsertUrlsResponse> response = admin.UpsertUrls(batch);
    if (!response.ok()) {
      return absl::Status(
          response.status().code(),
          absl::StrCat(name, ": lines ", batch_lines.front(), " to ", batch_lines.back(),
                       " not added (earlier lines were): ", response.status().message()));
    }
    upserted += response->result().applied();
    created += response->created();
    errors += response->result().rejected_size();
    progress.Finish();
    PrintRejected(
        response->result(), [&](uint32_t i) { return absl::StrCat(name, ":", batch_lines[i]); },
        env.io.err);
    batch.clear();
    batch_lines.clear();
    progress.Update(line_number);
    return absl::OkStatus();
  };
  std::string line;
  while (std::getline(*in, line)) {
    ++line_number;
    absl::StatusOr<std::optional<UrlSpec>> spec = ParseUrlLine(line, line_number == 1);
    if (!spec.ok()) {
      progress.Finish();
      *env.io.err << name << ":" << line_number << ": " << spec.status().message() << "\n";
      ++errors;
      continue;
    }
    if (!spec->has_value()) continue;
    batch.push_back(**std::move(spec));
    batch_lines.push_back(line_number);
    if (static_cast<int>(batch.size()) >= env.flags.batch_size) {
      if (absl::Status s = send(); !s.ok()) return env.Fail(s);
    }
  }
  if (absl::Status s = send(); !s.ok()) return env.Fail(s);
  progress.Finish();
  *env.io.out << absl::StrFormat(
      "%d URLs upserted (%d new), %d lines with "
      "errors\n",
      upserted, created, errors);
  return errors > 0 ? kExitRpcError : kExitOk;
}

int UrlsGet(const Args& args, const Env& env) {
  absl::StatusOr<UrlState> state = env.Admin().GetUrlState(args[0]);
  if (!state.ok()) return env.Fail(state.status());
  *env.io.out << ToJson(*state) << "\n";
  return kExitOk;
}

int UrlsRm(const Args& args, const Env& env) {
  absl::StatusOr<DeleteUrlsResponse> response = env.Admin().DeleteUrls(args);
  if (!response.ok()) return env.Fail(response.status());
  const bool rejected = PrintRejected(
      response->result(), [&](uint32_t i) { return args[i]; }, env.io.err);
  *env.io.out << response->result().applied() << " URLs removed\n";
  return rejected ? kExitRpcError : kExitOk;
}

std::optional<SignalSource> ParseSource(const std::string& name) {
  SignalSource source;
  if (!SignalSource_Parse("SIGNAL_SOURCE_" + absl::AsciiStrToUpper(name), &source)) {
    return std::nullopt;
  }
  return source;
}

int Ping(const Args& args, const Env& env) {
  const std::optional<SignalSource> source = ParseSource(env.flags.source);
  if (!source.has_value()) {
    return env.Usage("--source: sitemap, cdn, indexnow, websub or other, not " + env.flags.source);
  }
  PingOptions ping;
  ping.batch_size = env.flags.batch_size;
  absl::StatusOr<std::unique_ptr<PingClient>> client = PingClient::Create(env.options, ping);
  if (!client.ok()) return env.Fail(client.status());
  auto add = [&](const std::string& url) {
    Signal signal;
    signal.set_url(url);
    signal.set_source(*source);
    return (*client)->Add(std::move(signal));
  };
  if (args.empty()) {
    std::string line;
    while (std::getline(*env.io.in, line)) {
      const std::string url(absl::StripAsciiWhitespace(line));
      if (url.empty()) continue;
      if (absl::Status s = add(url); !s.ok()) return env.Fail(s);
    }
  } else {
    for (const std::string& url : args) {
      if (absl::Status s = add(url); !s.ok()) return env.Fail(s);
    }
  }
  if (absl::Status s = (*client)->Flush(); !s.ok()) return env.Fail(s);
  for (const RejectedSignal& r : (*client)->TakeRejected()) {
    *env.io.err << r.signal.url() << ": " << r.status << "\n";
  }
  const PingStats stats = (*client)->stats();
  *env.io.out << absl::StrFormat(
      "%d counted, %d registered, %d duplicate, %d stale, %d unknown, %d "
      "rejected\n",
      stats.counted, stats.registered, stats.duplicate, stats.stale, stats.unknown, stats.rejected);
  return stats.rejected > 0 ? kExitRpcError : kExitOk;
}

int Lease(const Args& args, const Env& env) {
  int n;
  if (!absl::SimpleAtoi(args[0], &n) || n < 1) {
    return env.Usage("lease: N must be a positive integer, not " + args[0]);
  }
  FetcherOptions fetcher;
  fetcher.holder = env.flags.holder;
  fetcher.lookahead = env.flags.lookahead;
  absl::StatusOr<FetchLeaseResponse> response = FetcherClient(env.options, fetcher).LeaseOnce(n);
  if (!response.ok()) return env.Fail(response.status());
  if (env.flags.json) {
    *env.io.out << ToJson(*response) << "\n";
    return kExitOk;
  }
  for (const CoordinatorLease& lease : response->leases()) {
    *env.io.out << absl::StrFormat("%d\t%.3f\t%.3f\t%.6g\t%s\n", lease.lease_id(),
                                   lease.slot_time(), lease.deadline(), lease.value(), lease.url());
  }
  if (response->leases_size() == 0) {
    *env.io.out << absl::StrFormat("no URL leased; next slot at %.3f\n",
                                   response->next_slot_time());
  }
  return kExitOk;
}

int Report(const Args& args, const Env& env) {
  CrawlOutcome outcome;
  if (!CrawlOutcome_Parse("CRAWL_OUTCOME_" + absl::AsciiStrToUpper(args[1]), &outcome) ||
      outcome == CRAWL_OUTCOME_UNSPECIFIED) {
    return env.Usage("report: changed, unchanged, failed or gone, not " + args[1]);
  }
  CrawlReport report;
  report.set_url(args[0]);
  report.set_outcome(outcome);
  report.set_fetch_time(env.flags.fetch_time);
  FetcherOptions fetcher;
  fetcher.holder = env.flags.holder;
  absl::StatusOr<ReportCrawlsResponse> response =
      FetcherClient(env.options, fetcher).Report({report});
  if (!response.ok()) return env.Fail(response.status());
  if (PrintRejected(
          response->result(), [&](uint32_t) { return args[0]; }, env.io.err)) {
    return kExitRpcError;
  }
  *env.io.out << "reported " << args[1] << "\n";
  return kExitOk;
}

int HostDelay(const Args& args, const Env& env) {
  const std::optional<double> seconds = ParseDouble(args[1]);
  if (!seconds.has_value()) {
    return env.Usage("host delay: SECONDS is not a number: " + args[1]);
  }
  HostPoliteness host;
  host.set_host(args[0]);
  host.set_min_delay(*seconds);
  absl::StatusOr<SetHostPolitenessResponse> response = env.Admin().SetHostPoliteness({host});
  if (!response.ok()) return env.Fail(response.status());
  if (PrintRejected(
          response->result(), [&](uint32_t) { return args[0]; }, env.io.err)) {
    return kExitRpcError;
  }
  *env.io.out << args[0] << ": at least " << *seconds << " s between crawls\n";
  return kExitOk;
}

int IngestKeysAdd(const Args& args, const Env& env) {
  if (absl::Status s = env.Gateway().AddIndexNowKey(args[0], args[1]); !s.ok()) return env.Fail(s);
  *env.io.out << args[0] << ": IndexNow key " << args[1] << " registered\n";
  return kExitOk;
}

int IngestKeysList(const Args& args, const Env& env) {
  absl::StatusOr<std::vector<IndexNowKey>> keys =
      env.Gateway().ListIndexNowKeys(args.empty() ? "" : args[0]);
  if (!keys.ok()) return env.Fail(keys.status());
  for (const IndexNowKey& k : *keys) *env.io.out << k.host << "\t" << k.key << "\n";
  if (keys->empty()) *env.io.out << "no IndexNow key registered\n";
  return kExitOk;
}

int IngestKeysRm(const Args& args, const Env& env) {
  if (absl::Status s = env.Gateway().RemoveIndexNowKey(args[0], args[1]); !s.ok()) {
    return env.Fail(s);
  }
  *env.io.out << args[0] << ": IndexNow key " << args[1] << " removed\n";
  return kExitOk;
}

int IngestSitemapsAdd(const Args& args, const Env& env) {
  if (absl::Status s = env.Gateway().AddSitemap(args[0]); !s.ok()) return env.Fail(s);
  *env.io.out << args[0] << ": sitemap registered\n";
  return kExitOk;
}

// One line per polled file: URL, "registered" or "child of <index>", its
// kind, tracked URLs, last success and last error ("-" when none).
int IngestSitemapsList(const Args&, const Env& env) {
  absl::StatusOr<std::vector<PolledSitemap>> sitemaps = env.Gateway().ListSitemaps();
  if (!sitemaps.ok()) return env.Fail(sitemaps.status());
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const PolledSitemap& s : *sitemaps) {
    *env.io.out << s.url << "\t"
                << (s.parent.empty() ? std::string("registered") : "child of " + s.parent) << "\t"
                << or_dash(s.kind) << "\t" << s.tracked_urls << " urls\t" << or_dash(s.last_success)
                << "\t" << or_dash(s.last_error) << "\n";
  }
  if (sitemaps->empty()) *env.io.out << "no sitemap registered\n";
  return kExitOk;
}

int IngestSitemapsRm(const Args& args, const Env& env) {
  if (absl::Status s = env.Gateway().RemoveSitemap(args[0]); !s.ok()) return env.Fail(s);
  *env.io.out << args[0] << ": sitemap removed\n";
  return kExitOk;
}

int IngestWebSubAdd(const Args& args, const Env& env) {
  absl::StatusOr<std::string> id = env.Gateway().AddWebSub(args[0], args[1]);
  if (!id.ok()) return env.Fail(id.status());
  *env.io.out << args[1] << ": subscribed at " << args[0] << " (callback id " << *id << ")\n";
  return kExitOk;
}

// One line per subscription: hub, topic, active or not, what is pending,
// the lease's end and the last error ("-" when none).
int IngestWebSubList(const Args&, const Env& env) {
  absl::StatusOr<std::vector<WebSubSubscription>> subs = env.Gateway().ListWebSub();
  if (!subs.ok()) return env.Fail(subs.status());
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const WebSubSubscription& s : *subs) {
    *env.io.out << s.hub << "\t" << s.topic << "\t" << (s.active ? "active" : "inactive") << "\t"
                << or_dash(s.pending) << "\t" << or_dash(s.lease_end) << "\t"
                << or_dash(s.last_error) << "\n";
  }
  if (subs->empty()) *env.io.out << "no WebSub subscription\n";
  return kExitOk;
}

int IngestWebSubRm(const Args& args, const Env& env) {
  if (absl::Status s = env.Gateway().RemoveWebSub(args[0], args[1]); !s.ok()) return env.Fail(s);
  *env.io.out << args[1] << ": unsubscribing at " << args[0] << "\n";
  return kExitOk;
}

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {{"bandwidth", "get"}, "", 0, 0, "the crawl bandwidth R and the mode", BandwidthGet},
      {{"bandwidth", "set"},
       "R",
       1,
       1,
       "set R (crawls per second), effective from the next slot",
       BandwidthSet},
      {{"mode", "get"}, "", 0, 0, "the mode (and R)", BandwidthGet},
      {{"mode", "set"}, "merge|equal|adaptive", 1, 1, "how R is shared across shards", ModeSet},
      {{"stats"}, "", 0, 0, "cluster stats, per shard and total (--json)", Stats},
      {{"urls", "add"},
       "FILE",
       1,
       1,
       "add or update URLs from a CSV (url,importance[,change_rate,recall,"
       "false_rate]) or JSON lines file; - reads stdin",
       UrlsAdd},
      {{"urls", "get"}, "URL", 1, 1, "everything known about a URL", UrlsGet},
      {{"urls", "rm"}, "URL...", 1, -1, "remove URLs", UrlsRm},
      {{"ping"},
       "[URL...]",
       0,
       -1,
       "send change signals (--source); no URL: one per line from stdin",
       Ping},
      {{"lease"}, "N", 1, 1, "lease up to N URLs (--holder, --lookahead)", Lease},
      {{"report"},
       "URL changed|unchanged|failed|gone",
       2,
       2,
       "report a crawl of URL (--fetch_time)",
       Report},
      {{"host", "delay"},
       "HOST SECONDS",
       2,
       2,
       "minimum delay between two crawls of HOST's URLs",
       HostDelay},
      {{"ingest", "keys", "add"},
       "HOST KEY",
       2,
       2,
       "register an IndexNow key for HOST on the gateway (--gateway)",
       IngestKeysAdd},
      {{"ingest", "keys", "list"},
       "[HOST]",
       0,
       1,
       "the IndexNow keys registered on the gateway",
       IngestKeysList},
      {{"ingest", "keys", "rm"},
       "HOST KEY",
       2,
       2,
       "remove a registered IndexNow key",
       IngestKeysRm},
      {{"ingest", "sitemaps", "add"},
       "URL",
       1,
       1,
       "register a sitemap or sitemap index for the gateway to poll (--gateway)",
       IngestSitemapsAdd},
      {{"ingest", "sitemaps", "list"},
       "",
       0,
       0,
       "the sitemaps the gateway polls, with their children and state",
       IngestSitemapsList},
      {{"ingest", "sitemaps", "rm"},
       "URL",
       1,
       1,
       "stop polling a registered sitemap",
       IngestSitemapsRm},
      {{"ingest", "websub", "add"},
       "HUB TOPIC",
       2,
       2,
       "subscribe to TOPIC at the WebSub HUB through the gateway (--gateway)",
       IngestWebSubAdd},
      {{"ingest", "websub", "list"},
       "",
       0,
       0,
       "the gateway's WebSub subscriptions and their state",
       IngestWebSubList},
      {{"ingest", "websub", "rm"},
       "HUB TOPIC",
       2,
       2,
       "unsubscribe from TOPIC at HUB",
       IngestWebSubRm},
  };
  return *commands;
}

}  // namespace

std::string CommandsHelp() {
  std::string help = "commands:\n";
  for (const Command& c : Commands()) {
    const std::string usage =
        absl::StrCat(absl::StrJoin(c.words, " "), c.arguments.empty() ? "" : " ", c.arguments);
    absl::StrAppend(&help, absl::StrFormat("  %-42s %s\n", usage, c.help));
  }
  absl::StrAppend(&help, "exit codes: 0 ok, 1 RPC or gateway error or rejected items, 2 usage\n");
  return help;
}

int RunCommand(const std::vector<std::string>& args, const ClientOptions& options,
               const CliFlags& flags, const CliIo& io) {
  const Env env{options, flags, io};
  if (args.empty()) return env.Usage("no command");
  if (args[0] == "help") {
    *io.out << CommandsHelp();
    return kExitOk;
  }
  for (const Command& c : Commands()) {
    if (args.size() < c.words.size() || !std::equal(c.words.begin(), c.words.end(), args.begin())) {
      continue;
    }
    const Args rest(args.begin() + c.words.size(), args.end());
    const int n = static_cast<int>(rest.size());
    if (n < c.min_args || (c.max_args >= 0 && n > c.max_args)) {
      return env.Usage(absl::StrCat(absl::StrJoin(c.words, " "), " takes ",
                                    c.arguments.empty() ? "no arguments" : c.arguments));
    }
    return c.run(rest, env);
  }
  return env.Usage("unknown command: " + absl::StrJoin(args, " "));
}

}  // namespace client
}  // namespace recrawl
