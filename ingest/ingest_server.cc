// ingest_server: the ingestion gateway, an HTTP(S) front for the
// coordinator's signal path (ingest/gateway.h).
//
//   ingest_server --port=8080 --coordinator=coordinator:50050
//       --token_file=/etc/recrawl/tokens --state_dir=/var/lib/recrawl-ingest
//       [--tls_cert=... --tls_key=... [--tls_client_ca=...]]
//
// Routes:
//   GET, POST /indexnow            IndexNow (indexnow.org), source INDEXNOW
//   POST /cdn/purge                {"urls": [...]}, pinger token, source CDN
//   GET, POST, DELETE /admin/indexnow/keys   operator keys per host
//                                  (GET [?host=], POST {"host","key"},
//                                  DELETE ?host=&key=), operator token
//   GET, POST, DELETE /admin/sitemaps  polled sitemaps (GET: every file
//                                  with its state, POST {"url"},
//                                  DELETE ?url=), operator token
//   GET, POST, DELETE /admin/websub  WebSub subscriptions (GET: every
//                                  one with its state, POST {"hub","topic"},
//                                  DELETE ?hub=&topic=), operator token
//   GET, POST /websub/<id>         the hubs' callbacks: intent
//                                  verification and signed deliveries,
//                                  source WEBSUB (no token: the secret's
//                                  HMAC is the proof)
//   GET /healthz                   200 while serving, 503 once draining
//   GET /metrics                   Prometheus (ingest/gateway_metrics.h)
// A request is answered once its signals are acknowledged by their shards
// (durably with --sync). Bodies larger than --max_body_bytes are refused
// with 400 on /indexnow (the protocol's answer) and 413 elsewhere.
//
// Signals go to the coordinator (--coordinator) with the token file's
// first pinger token, stamped on the cluster clock (--time_scale, as the
// servers); with --route_to_shards, straight to the shards of the
// coordinator's shard map with its internal token, over channels set by
// --shard_tls_ca, --shard_tls_cert, --shard_tls_key and
// --shard_tls_server_name as the coordinator's are; each stream reads the
// shard map again every --shard_map_refresh seconds and after a delivery
// that failed (ingest/signal_sink.h, ClientRenewal). Key files are fetched
// through SafeFetch: non-public addresses are refused unless
// --fetch_allow_loopback or --fetch_allow_networks admit them. With
// --state_dir the IndexNow keys persist there (ingest/key_store.h):
// operator keys are saved before their registration is answered, proven
// key files when the server stops; so do the registered sitemaps (ingest/sitemap_runner.h), saved
// before answered, with the lastmods seen, saved after each poll once its signals are acknowledged
// (a restart signals what changed while it was down). Registered sitemaps are polled every
// --sitemap_poll_interval seconds
// (--sitemap_fetches at once, through SafeFetch as key files, up to the
// sitemap limits of 50,000 URLs and 50 MB), each URL whose <lastmod>
// moved forward signalled once as source SITEMAP. WebSub subscriptions
// ask hubs to call back on --websub_callback_base + "/<id>" (the URL this
// server's /websub routes are reached at from outside); their secrets are
// kept in --state_dir with them. SIGTERM or SIGINT:
// /healthz answers 503, the outbound fetches in flight are cancelled and
// the background work (key checks, sitemap polls, hub requests) ends, the
// listener closes and requests in flight finish (up to --drain_seconds).
#include <httplib.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/credentials.h"
#include "client/ping_client.h"
#include "ingest/gateway.h"
#include "ingest/gateway_metrics.h"
#include "ingest/signal_sink.h"
#include "services/auth_flags.h"
#include "services/clock_flags.h"
#include "services/server_lifecycle.h"
#include "services/shard_tls_flags.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, host, "0.0.0.0", "Address to listen on");
ABSL_FLAG(int, port, 8080, "HTTP port (0: any free port, see --port_file)");
ABSL_FLAG(std::string, port_file, "",
          "Write \"<port> <port>\" here once serving (metrics are on the same port)");
ABSL_FLAG(std::string, coordinator, "localhost:50050", "The coordinator's gRPC address");
ABSL_FLAG(std::string, coordinator_tls_ca, "",
          "PEM CAs of the coordinator's certificate (empty: plaintext)");
ABSL_FLAG(std::string, coordinator_tls_server_name, "",
          "Name to verify in the coordinator's certificate (default: the address's host)");
ABSL_FLAG(int, signal_streams, 4,
          "StreamSignals streams to the coordinator: requests' signals are sent in groups on "
          "whichever stream is free");
ABSL_FLAG(bool, sync, true, "Ask the shards to fsync before acknowledging signals");
ABSL_FLAG(double, coordinator_wait, 60.0,
          "Seconds to keep trying at start while the coordinator cannot be reached (with "
          "--route_to_shards, for its shard map), a log line a try; 0: give up at once");
ABSL_FLAG(bool, route_to_shards, false,
          "Send signals straight to the shards that own them (else through the coordinator), "
          "over channels set by --shard_tls_*, with the token file's internal token");
ABSL_FLAG(double, shard_map_refresh, 60.0,
          "With --route_to_shards: seconds after which a signal stream reads the shard map "
          "again (it also does after a failed delivery)");
ABSL_FLAG(int64_t, max_body_bytes, 4 << 20, "Largest request body taken, bytes");
ABSL_FLAG(int, threads, 16, "HTTP worker threads");
ABSL_FLAG(double, drain_seconds, 5.0, "On SIGTERM, how long requests in flight may take");
ABSL_FLAG(bool, fetch_allow_loopback, false,
          "Let key file, sitemap and WebSub hub fetches reach loopback addresses (tests only)");
ABSL_FLAG(
    std::string, fetch_allow_networks, "",
    "Comma-separated networks (CIDR) key file and sitemap fetches may reach although not public");
ABSL_FLAG(double, fetch_timeout, 10.0, "Seconds a key file or sitemap fetch may take in all");
ABSL_FLAG(double, fetch_connect_timeout, 5.0,
          "Seconds a key file or sitemap fetch may take to connect");
ABSL_FLAG(
    std::string, fetch_ca_file, "",
    "PEM CAs that verify the sites key files and sitemaps are fetched from (empty: the system's)");
ABSL_FLAG(int64_t, fetch_max_bytes, 64 << 10, "Largest key file, bytes");
ABSL_FLAG(
    std::string, state_dir, "",
    "Directory that keeps the IndexNow keys, the registered sitemaps (with the lastmods seen) "
    "and the WebSub subscriptions across restarts "
    "(empty: in memory only)");
ABSL_FLAG(double, sitemap_poll_interval, 3600.0, "Seconds between two polls of a sitemap");
ABSL_FLAG(double, sitemap_error_backoff, 300.0,
          "Seconds before a failed sitemap poll is tried again (doubled per further failure)");
ABSL_FLAG(int, sitemap_fetches, 4, "Sitemap files fetched at once");
ABSL_FLAG(std::string, websub_callback_base, "",
          "Public base URL hubs call back on, routed to this server's /websub, e.g. "
          "https://ingest.example.com/websub (empty: WebSub subscriptions are refused)");
ABSL_FLAG(int, key_check_threads, 2, "Key files checked at once");
ABSL_FLAG(double, key_verified_ttl, 86400.0, "Seconds a proven key file stays proven");
ABSL_FLAG(double, key_failed_ttl, 600.0, "Seconds before a refused key file is checked again");
ABSL_FLAG(double, indexnow_host_rate, 10.0, "IndexNow requests per second per host (then 429)");
ABSL_FLAG(double, indexnow_host_burst, 100.0, "IndexNow requests per host at once");

namespace recrawl {
namespace ingest {
namespace {

absl::StatusOr<GatewayOptions> GatewayOptionsFromFlags() {
  GatewayOptions options;
  std::vector<Network> allowed;
  if (absl::GetFlag(FLAGS_fetch_allow_loopback)) {
    allowed.push_back(*Network::Parse("127.0.0.0/8"));
    allowed.push_back(*Network::Parse("::1/128"));
  }
  for (absl::string_view n :
       absl::StrSplit(absl::GetFlag(FLAGS_fetch_allow_networks), ',', absl::SkipWhitespace())) {
    absl::StatusOr<Network> network = Network::Parse(n);
    if (!network.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--fetch_allow_networks: ", network.status().message()));
    }
    allowed.push_back(*network);
  }
  options.fetch.policy = AddressPolicy(std::move(allowed));
  options.fetch.total_timeout = absl::Seconds(absl::GetFlag(FLAGS_fetch_timeout));
  options.fetch.connect_timeout = absl::Seconds(absl::GetFlag(FLAGS_fetch_connect_timeout));
  options.fetch.max_body_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_fetch_max_bytes));
  options.fetch.ca_file = absl::GetFlag(FLAGS_fetch_ca_file);
  options.keys.verified_ttl = absl::Seconds(absl::GetFlag(FLAGS_key_verified_ttl));
  options.keys.failed_ttl = absl::Seconds(absl::GetFlag(FLAGS_key_failed_ttl));
  options.rate.rate = absl::GetFlag(FLAGS_indexnow_host_rate);
  options.rate.burst = absl::GetFlag(FLAGS_indexnow_host_burst);
  options.key_check_threads = absl::GetFlag(FLAGS_key_check_threads);
  if (const std::string dir = absl::GetFlag(FLAGS_state_dir); !dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) {
      return absl::InvalidArgumentError(absl::StrCat("--state_dir: ", dir, ": ", error.message()));
    }
    options.key_state_file = dir + "/indexnow_keys.pb";
    options.sitemap_state_file = dir + "/sitemaps.pb";
    options.websub_state_file = dir + "/websub.pb";
  }
  options.sitemap_poll.poll_interval = absl::Seconds(absl::GetFlag(FLAGS_sitemap_poll_interval));
  options.sitemap_poll.error_backoff = absl::Seconds(absl::GetFlag(FLAGS_sitemap_error_backoff));
  options.sitemap_fetches = absl::GetFlag(FLAGS_sitemap_fetches);
  options.websub_callback_base =
      std::string(absl::StripSuffix(absl::GetFlag(FLAGS_websub_callback_base), "/"));
  if (!(absl::GetFlag(FLAGS_sitemap_poll_interval) > 0) ||
      !(absl::GetFlag(FLAGS_sitemap_error_backoff) > 0) || options.sitemap_fetches < 1) {
    return absl::InvalidArgumentError(
        "--sitemap_poll_interval and --sitemap_error_backoff must be > 0, --sitemap_fetches >= 1");
  }
  if (!(absl::GetFlag(FLAGS_fetch_timeout) > 0) ||
      !(absl::GetFlag(FLAGS_fetch_connect_timeout) > 0) ||
      absl::GetFlag(FLAGS_fetch_max_bytes) < 1 || !(options.rate.rate > 0) ||
      !(options.rate.burst >= 1) || options.key_check_threads < 1) {
    return absl::InvalidArgumentError(
        "--fetch_timeout, --fetch_connect_timeout, --indexnow_host_rate must be > 0, "
        "--fetch_max_bytes, --indexnow_host_burst and --key_check_threads >= 1");
  }
  return options;
}

// The HTTP(S) server the TLS flags ask for: HTTPS with tls.cert_file,
// asking for client certificates signed by tls.client_ca_file (refusing
// clients without one when require_client_cert), as the gRPC servers do.
std::unique_ptr<httplib::Server> HttpServerFor(const services::ServerTlsOptions& tls) {
  if (tls.cert_file.empty()) return std::make_unique<httplib::Server>();
  auto server = std::make_unique<httplib::SSLServer>(
      tls.cert_file.c_str(), tls.key_file.c_str(),
      tls.client_ca_file.empty() ? nullptr : tls.client_ca_file.c_str());
  // httplib requires a certificate whenever it has client CAs.
  if (server->is_valid() && !tls.client_ca_file.empty() && !tls.require_client_cert) {
    SSL_CTX_set_verify(server->ssl_context(), SSL_VERIFY_PEER, nullptr);
  }
  return server;
}

void Reply(httplib::Response& res, const HttpAnswer& answer) {
  res.status = answer.status;
  res.set_content(answer.body, answer.content_type.c_str());
}

// The routes: each hands the request's parts to the gateway.
void Route(httplib::Server& server, Gateway& gateway, GatewayMetrics& metrics,
           const std::atomic<bool>& draining, size_t max_body_bytes) {
  server.Get("/indexnow", [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.IndexNowGet(req.get_param_value("url"), req.get_param_value("key"),
                                   req.get_param_value("keyLocation")));
  });
  server.Post("/indexnow", [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.IndexNowPost(req.body));
  });
  server.Post("/cdn/purge", [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.CdnPurge(req.get_header_value("Authorization"), req.body));
  });
  const char* keys = "/admin/indexnow/keys";
  server.Get(keys, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res,
          gateway.ListKeys(req.get_header_value("Authorization"), req.get_param_value("host")));
  });
  server.Post(keys, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.RegisterKey(req.get_header_value("Authorization"), req.body));
  });
  server.Delete(keys, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.UnregisterKey(req.get_header_value("Authorization"),
                                     req.get_param_value("host"), req.get_param_value("key")));
  });
  const char* sitemaps = "/admin/sitemaps";
  server.Get(sitemaps, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.ListSitemaps(req.get_header_value("Authorization")));
  });
  server.Post(sitemaps, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.RegisterSitemap(req.get_header_value("Authorization"), req.body));
  });
  server.Delete(sitemaps, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.UnregisterSitemap(req.get_header_value("Authorization"),
                                         req.get_param_value("url")));
  });
  const char* websub = "/admin/websub";
  server.Get(websub, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.ListWebSub(req.get_header_value("Authorization")));
  });
  server.Post(websub, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.SubscribeWebSub(req.get_header_value("Authorization"), req.body));
  });
  server.Delete(websub, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.UnsubscribeWebSub(req.get_header_value("Authorization"),
                                         req.get_param_value("hub"), req.get_param_value("topic")));
  });
  const char* callback = R"(/websub/([0-9a-f]+))";
  server.Get(callback, [&](const httplib::Request& req, httplib::Response& res) {
    feeds::IntentRequest intent;
    intent.mode = req.get_param_value("hub.mode");
    intent.topic = req.get_param_value("hub.topic");
    intent.challenge = req.get_param_value("hub.challenge");
    intent.lease_seconds = req.get_param_value("hub.lease_seconds");
    intent.reason = req.get_param_value("hub.reason");
    Reply(res, gateway.WebSubIntent(req.matches[1].str(), intent));
  });
  server.Post(callback, [&](const httplib::Request& req, httplib::Response& res) {
    Reply(res, gateway.WebSubDelivery(req.matches[1].str(), req.get_header_value("X-Hub-Signature"),
                                      req.body));
  });
  server.Get("/healthz", [&](const httplib::Request&, httplib::Response& res) {
    res.status = draining ? 503 : 200;
    res.set_content(draining ? "draining\n" : "ok\n", "text/plain");
  });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.Text(), "text/plain; version=0.0.4");
  });
  // httplib refuses a body over the limit with 413 before any route runs;
  // IndexNow's answer for a bad request is 400.
  server.set_error_handler(
      [&, max_body_bytes](const httplib::Request& req, httplib::Response& res) {
        if (res.status == 413) {
          const bool indexnow = req.path == "/indexnow";
          if (indexnow) res.status = 400;
          metrics.Request(indexnow ? "indexnow" : "other", res.status);
          res.set_content(
              absl::StrCat(R"({"error":"body: larger than )", max_body_bytes, R"( bytes"})"),
              "application/json");
        }
      });
}

int Main() {
  const sigset_t stop_signals = services::BlockStopSignals();
  // A client that closes its connection while TLS writes to it (OpenSSL
  // writes with write(2)) must not end the server.
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<services::Clock> clock = services::ClockFromFlags();
  if (!clock.ok()) {
    spdlog::error("{}", clock.status().ToString());
    return 2;
  }
  absl::StatusOr<services::ServerSecurity> security = services::ServerSecurityFromFlags("HTTP");
  if (!security.ok()) {
    spdlog::error("{}", security.status().ToString());
    return 2;
  }
  absl::StatusOr<GatewayOptions> options = GatewayOptionsFromFlags();
  if (!options.ok()) {
    spdlog::error("{}", std::string(options.status().message()));
    return 2;
  }
  const int64_t max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes);
  if (max_body_bytes < 1 || absl::GetFlag(FLAGS_threads) < 1 ||
      absl::GetFlag(FLAGS_signal_streams) < 1) {
    spdlog::error("--max_body_bytes, --threads and --signal_streams must be >= 1");
    return 2;
  }
  if (!(absl::GetFlag(FLAGS_shard_map_refresh) > 0.0)) {
    spdlog::error("--shard_map_refresh must be > 0");
    return 2;
  }

  client::ClientTlsOptions tls;
  tls.ca_file = absl::GetFlag(FLAGS_coordinator_tls_ca);
  tls.server_name = absl::GetFlag(FLAGS_coordinator_tls_server_name);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentialsFor(tls);
  if (!credentials.ok()) {
    spdlog::error("coordinator_{}", std::string(credentials.status().message()));
    return 2;
  }
  client::ClientOptions client_options;
  client_options.target = absl::GetFlag(FLAGS_coordinator);
  client_options.token = security->tokens.TokenOf(cluster::Role::kPinger);
  client_options.credentials = *credentials;
  client_options.tls_server_name = tls.server_name;
  const services::Clock cluster_clock = *clock;
  client_options.clock = [cluster_clock] { return cluster_clock.Now(); };
  client_options.time_scale = cluster_clock.scale();
  client::PingOptions ping;
  ping.sync = absl::GetFlag(FLAGS_sync);
  ping.route_to_shards = absl::GetFlag(FLAGS_route_to_shards);
  ping.shard_token = security->tokens.TokenOf(cluster::Role::kInternal);
  if (ping.route_to_shards) {
    absl::StatusOr<services::ShardTls> shard_tls = services::ShardTlsFromFlags();
    if (!shard_tls.ok()) {
      spdlog::error("{}", std::string(shard_tls.status().message()));
      return 2;
    }
    ping.shard_credentials = shard_tls->credentials;
    ping.shard_tls_server_name = shard_tls->options.server_name;
  }
  if (security->authorizer.enabled() && client_options.token.empty()) {
    spdlog::warn("--token_file has no pinger token: calls to the coordinator carry none");
  }
  auto make_pinger = [&client_options, &ping] {
    return client::PingClient::Create(client_options, ping);
  };
  // The coordinator may still be starting (or its TLS handshake slow on a
  // loaded machine): a stream that cannot reach it is tried again each
  // second until --coordinator_wait has passed. Other errors (a refused
  // token, a bad shard map) end the start at once.
  const double wait = absl::GetFlag(FLAGS_coordinator_wait);
  const absl::Time give_up = absl::Now() + absl::Seconds(wait);
  std::vector<std::unique_ptr<client::PingClient>> pingers;
  for (int i = 0; i < absl::GetFlag(FLAGS_signal_streams);) {
    absl::StatusOr<std::unique_ptr<client::PingClient>> pinger = make_pinger();
    if (pinger.ok()) {
      pingers.push_back(*std::move(pinger));
      ++i;
      continue;
    }
    const absl::StatusCode code = pinger.status().code();
    const bool unreachable =
        code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded;
    const double left = absl::ToDoubleSeconds(give_up - absl::Now());
    if (!unreachable || left <= 0.0) {
      spdlog::error("coordinator {}: {}{}", client_options.target, pinger.status().ToString(),
                    unreachable ? absl::StrCat(" (gave up after --coordinator_wait=", wait, " s)")
                                : std::string());
      return 1;
    }
    spdlog::warn("coordinator {} not reachable yet: {}; trying again for up to {:.0f} s",
                 client_options.target, pinger.status().ToString(), left);
    if (const int sig = services::WaitForStopSignalFor(stop_signals, std::min(1.0, left))) {
      spdlog::info("signal {} while waiting for the coordinator: exiting", sig);
      return 0;
    }
  }
  // Straight to the shards, the streams read the shard map again now and
  // then and after a failed delivery (ingest/signal_sink.h).
  ClientRenewal renewal;
  if (ping.route_to_shards) {
    renewal.create = make_pinger;
    renewal.period = absl::Seconds(absl::GetFlag(FLAGS_shard_map_refresh));
  }

  // Every stream routes by the same shard map (--signal_streams >= 1).
  const int routed_shards = pingers.front()->routed_shards();
  GatewayMetrics metrics;
  PingClientSink sink(std::move(pingers), std::move(renewal));
  const cluster::TokenTable* tokens = security->authorizer.enabled() ? &security->tokens : nullptr;
  Gateway gateway(&sink, tokens, &metrics, *options);
  if (absl::Status loaded = gateway.LoadKeys(); !loaded.ok()) {
    spdlog::error("{}", loaded.ToString());
    return 2;
  }
  if (absl::Status loaded = gateway.LoadWebSub(); !loaded.ok()) {
    spdlog::error("{}", loaded.ToString());
    return 2;
  }
  if (absl::Status loaded = gateway.LoadSitemaps(); !loaded.ok()) {
    spdlog::error("{}", loaded.ToString());
    return 2;
  }
  if (!options->key_state_file.empty()) {
    spdlog::info("IndexNow keys kept in {}: {} registered", options->key_state_file,
                 gateway.keys().Registered().size());
    spdlog::info("sitemaps kept in {}: {} files polled", options->sitemap_state_file,
                 gateway.sitemaps().Files().size());
  }

  std::unique_ptr<httplib::Server> server = HttpServerFor(security->tls);
  if (!server->is_valid()) {
    spdlog::error("cannot set up the HTTP server (TLS certificate or key unreadable?)");
    return 2;
  }
  const int threads = absl::GetFlag(FLAGS_threads);
  server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server->set_payload_max_length(static_cast<size_t>(max_body_bytes));
  std::atomic<bool> draining{false};
  Route(*server, gateway, metrics, draining, static_cast<size_t>(max_body_bytes));

  const std::string host = absl::GetFlag(FLAGS_host);
  int port = absl::GetFlag(FLAGS_port);
  if (port == 0) {
    port = server->bind_to_any_port(host);
  } else if (!server->bind_to_port(host, port)) {
    port = -1;
  }
  if (port <= 0) {
    spdlog::error("cannot listen on {}:{}", host, absl::GetFlag(FLAGS_port));
    return 1;
  }
  std::thread listener([&] { server->listen_after_bind(); });
  while (!server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string destination =
      routed_shards == 0
          ? client_options.target
          : absl::StrCat(routed_shards, " shards straight, the rest to ", client_options.target);
  spdlog::info("ingest gateway serving HTTP{} on port {}, signals to {}",
               security->tls.cert_file.empty() ? "" : "S", port, destination);
  services::WritePortFile(absl::GetFlag(FLAGS_port_file), port, port);

  const int sig = services::WaitForStopSignal(stop_signals);
  spdlog::info("signal {}: draining", sig);
  draining = true;
  // Requests in flight finish when the listener stops; past the drain
  // deadline the process ends without them.
  std::thread watchdog([drain = absl::GetFlag(FLAGS_drain_seconds)] {
    std::this_thread::sleep_for(std::chrono::duration<double>(drain));
    spdlog::warn("drain deadline passed: exiting with requests in flight");
    std::_Exit(1);
  });
  watchdog.detach();
  // The background work first: its outbound fetches in flight (key files,
  // sitemaps, hub requests) are cancelled rather than waited for.
  gateway.Stop();
  server->stop();
  listener.join();
  if (absl::Status saved = gateway.SaveKeys(); !saved.ok()) {
    spdlog::error("IndexNow keys not saved: {}", saved.ToString());
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recrawl ingestion gateway: IndexNow, CDN purge webhooks and polled sitemaps into the "
      "coordinator's "
      "signal stream");
  absl::ParseCommandLine(argc, argv);
  return recrawl::ingest::Main();
}
