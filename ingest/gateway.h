// The gateway's requests, independent of the HTTP library: each method
// takes what the route got (query parameters, body, Authorization header)
// and returns the HTTP answer. It calls the pure cores (indexnow.h,
// cdn_purge.h, key_cache.h) and delivers the accepted signals through a
// SignalSink, answering only once they are acknowledged.
//
// Key files are checked in the background (key_check_threads threads,
// SafeFetch with FetchOptions): a submission whose key is not yet known
// is answered 202 and its URLs are held until the check ends; a key file
// that proves the key releases them (delivered as signals), one that does
// not drops them.
//
// With GatewayOptions::key_state_file the keys persist (ingest/key_store.h):
// a key registration or removal is answered only once saved (500, and the
// change undone, when it cannot be), and SaveKeys writes the verified key
// files too.
//
// Sitemaps: registered sitemaps are polled in the background by a
// SitemapRunner (ingest/sitemap_runner.h) through SafeFetch with
// FetchOptions, their signals delivered as source SITEMAP; with
// GatewayOptions::sitemap_state_file the registrations and their poll
// state (the lastmods seen) persist.
//
// WebSub: operators subscribe to (hub, topic) pairs; a WebSubRunner
// (ingest/websub_runner.h) sends the hub requests and the callback routes
// take the hubs' verifications and signed deliveries (source WEBSUB);
// with GatewayOptions::websub_state_file the subscriptions persist.
//
// Tokens: the CDN webhook takes a pinger token and the admin routes an
// operator token ("Authorization: Bearer <token>"; cluster/tokens.h);
// 401 without a known token, 403 with one of another role. Without a token
// table every caller is admitted.
//
// Thread-safe.
#ifndef RECRAWL_INGEST_GATEWAY_H_
#define RECRAWL_INGEST_GATEWAY_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cluster/tokens.h"
#include "ingest/feeds/sitemap_poll.h"
#include "ingest/gateway_metrics.h"
#include "ingest/host_rate_limiter.h"
#include "ingest/indexnow.h"
#include "ingest/key_cache.h"
#include "ingest/safe_fetch.h"
#include "ingest/signal_sink.h"
#include "ingest/sitemap_runner.h"
#include "ingest/websub_runner.h"

namespace recrawl {
namespace ingest {

struct HttpAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

struct GatewayOptions {
  FetchOptions fetch;
  KeyCacheOptions keys;
  HostRateLimiter::Options rate;
  int key_check_threads = 2;
  // Where the keys are kept across restarts (ingest/key_store.h); empty:
  // in memory only.
  std::string key_state_file;
  // Sitemap polling (schedule, limits) and fetches made at once.
  feeds::SitemapPollOptions sitemap_poll;
  int sitemap_fetches = 4;
  // Where the registered sitemaps and their poll state are kept; empty: in
  // memory only.
  std::string sitemap_state_file;
  // The public base URL hubs call back on (".../websub"; empty: WebSub
  // subscriptions are refused), and where subscriptions are kept.
  std::string websub_callback_base;
  std::string websub_state_file;
  // The clock of the key cache and the rate limits.
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class Gateway {
 public:
  // `sink`, `tokens` (null: no token checks) and `metrics` must outlive the
  // gateway.
  Gateway(SignalSink* sink, const cluster::TokenTable* tokens, GatewayMetrics* metrics,
          GatewayOptions options);
  // Stop()s.
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // GET /indexnow?url=&key=[&keyLocation=] and POST /indexnow.
  HttpAnswer IndexNowGet(absl::string_view url, absl::string_view key,
                         absl::string_view key_location);
  HttpAnswer IndexNowPost(absl::string_view body);
  // POST /cdn/purge.
  HttpAnswer CdnPurge(absl::string_view authorization, absl::string_view body);
  // Operator keys: POST {"host","key"}, DELETE ?host=&key=, GET [?host=].
  HttpAnswer RegisterKey(absl::string_view authorization, absl::string_view body);
  HttpAnswer UnregisterKey(absl::string_view authorization, absl::string_view host,
                           absl::string_view key);
  HttpAnswer ListKeys(absl::string_view authorization, absl::string_view host);
  // Operator sitemaps: POST {"url"} (200; 400 bad URL, 409 already another
  // index's child), DELETE ?url= (404 when not registered), GET (every
  // polled file with its state).
  HttpAnswer RegisterSitemap(absl::string_view authorization, absl::string_view body);
  HttpAnswer UnregisterSitemap(absl::string_view authorization, absl::string_view url);
  HttpAnswer ListSitemaps(absl::string_view authorization);
  // Operator WebSub subscriptions: POST {"hub","topic"} (200 with the
  // callbackId; 400 bad hub or topic or no callback base), DELETE
  // ?hub=&topic= (404 when none), GET (every subscription).
  HttpAnswer SubscribeWebSub(absl::string_view authorization, absl::string_view body);
  HttpAnswer UnsubscribeWebSub(absl::string_view authorization, absl::string_view hub,
                               absl::string_view topic);
  HttpAnswer ListWebSub(absl::string_view authorization);
  // The hubs' calls to GET /websub/<id> (intent verification: the
  // challenge echoed, or 404) and POST /websub/<id> (a delivery: 202 once
  // its signals are acknowledged, also when its X-Hub-Signature does not
  // verify (nothing is signalled then, as the protocol advises); 404
  // without an active subscription; 503 when not delivered).
  HttpAnswer WebSubIntent(absl::string_view id, const feeds::IntentRequest& request);
  HttpAnswer WebSubDelivery(absl::string_view id, absl::string_view signature,
                            absl::string_view body);

  // Loads the keys saved in key_state_file (call before serving); OK
  // without one. See LoadKeys for the errors.
  absl::Status LoadKeys();
  // Saves the keys to key_state_file (OK without one); see SaveKeys in
  // ingest/key_store.h.
  absl::Status SaveKeys();
  // Restores the sitemaps and poll state saved in sitemap_state_file; see
  // SitemapRunner::Load.
  absl::Status LoadSitemaps();
  // Subscribes again to the subscriptions saved in websub_state_file.
  absl::Status LoadWebSub();

  // Ends the key checks: those queued are dropped and those running are
  // cancelled (FetchOptions::cancel; their URLs stay held and are lost);
  // ends the sitemap polling and the WebSub hub requests, cancelling their
  // fetches in flight (SitemapRunner::Stop, WebSubRunner::Stop).
  // Idempotent.
  void Stop();

  KeyCache& keys() { return keys_; }
  SitemapRunner& sitemaps() { return *sitemaps_; }
  WebSubRunner& websub() { return *websub_; }

  // Delivers `signals` through the sink, counted under `metric_source`.
  absl::StatusOr<DeliveryReport> DeliverSignals(std::vector<Signal> signals,
                                                const std::string& metric_source);

 private:
  // The answer for `role`'s routes, or status 0 when the caller may go on.
  HttpAnswer Authorize(absl::string_view authorization, cluster::Role role) const;
  // `act`'s answer once the caller is authorized as `role` (else the
  // refusal), counted under `route`.
  HttpAnswer Authorized(absl::string_view authorization, cluster::Role role, const char* route,
                        absl::FunctionRef<HttpAnswer()> act);
  // Authorized for the operator's /admin routes.
  HttpAnswer Admin(absl::string_view authorization, absl::FunctionRef<HttpAnswer()> act);
  HttpAnswer IndexNow(const IndexNowParse& parsed);
  // Delivers `urls` as signals of `source`; counts them under `metric_source`.
  absl::StatusOr<DeliveryReport> Deliver(const std::vector<std::string>& urls, SignalSource source,
                                         const std::string& metric_source);
  absl::Status Save() ABSL_EXCLUSIVE_LOCKS_REQUIRED(save_mu_);
  void CheckKeys();
  void CheckKey(const KeyFile& file);

  SignalSink* const sink_;
  const cluster::TokenTable* const tokens_;
  GatewayMetrics* const metrics_;
  // Set by Stop; options_.fetch.cancel (the key checks') points here.
  std::atomic<bool> cancel_{false};
  const GatewayOptions options_;
  KeyCache keys_;
  HostRateLimiter limiter_;

  // Serialises changes to the registered keys with their saves.
  absl::Mutex save_mu_;
  absl::Mutex mu_;
  std::deque<KeyFile> checks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> checkers_;
  std::unique_ptr<SitemapRunner> sitemaps_;
  std::unique_ptr<WebSubRunner> websub_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_GATEWAY_H_
