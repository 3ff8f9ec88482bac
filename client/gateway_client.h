// The ingestion gateway's operator routes (ingest/ingest_server.cc) over
// HTTP or HTTPS: the IndexNow keys registered per host, the polled
// sitemaps and the WebSub subscriptions.
//
// Every call carries the token as "Authorization: Bearer <token>" (an
// operator token when the gateway checks tokens). Answers map to statuses
// as the gateway gives them: 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED,
// 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ALREADY_EXISTS, other non-200 answers INTERNAL or
// UNAVAILABLE (5xx); the message is the gateway's "error" (never the
// token). No connection: UNAVAILABLE.
//
// Not thread-safe (one connection per client).
#ifndef RECRAWL_CLIENT_GATEWAY_CLIENT_H_
#define RECRAWL_CLIENT_GATEWAY_CLIENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace recrawl {
namespace client {

struct GatewayClientOptions {
  // "host:port" of the gateway's HTTP(S) listener.
  std::string address = "localhost:8080";
  // Sent as the bearer token; empty: none.
  std::string token;
  // PEM CAs that sign the gateway's certificate: HTTPS (empty: plain HTTP).
  std::string ca_file;
  // PEM client certificate and key, for a gateway that asks for one.
  std::string cert_file;
  std::string key_file;
  // Each request, connecting included.
  absl::Duration timeout = absl::Seconds(30);
};

struct IndexNowKey {
  std::string host;
  std::string key;
};

// A polled sitemap file as the gateway lists it.
struct PolledSitemap {
  std::string url;
  // The index that lists it; "" for a registered sitemap.
  std::string parent;
  // "urlset", "sitemapindex", or "" before its first good poll.
  std::string kind;
  // RFC 3339; "" when never.
  std::string last_success;
  std::string last_error;
  uint32_t tracked_urls = 0;
};

// A WebSub subscription as the gateway lists it.
struct WebSubSubscription {
  std::string hub;
  std::string topic;
  // Verified by the hub and its lease not over.
  bool active = false;
  // "subscribe", "unsubscribe" or "" (nothing pending).
  std::string pending;
  // RFC 3339; "" when not active.
  std::string lease_end;
  std::string last_error;
};

class GatewayClient {
 public:
  explicit GatewayClient(GatewayClientOptions options) : options_(std::move(options)) {}

  // Registers `key` for `host` (the gateway normalises the host): its
  // IndexNow submissions for the host are accepted without a key file.
  absl::Status AddIndexNowKey(const std::string& host, const std::string& key);
  // NOT_FOUND when the key was not registered for the host.
  absl::Status RemoveIndexNowKey(const std::string& host, const std::string& key);
  // Sorted by host, then key; all hosts when `host` is "".
  absl::StatusOr<std::vector<IndexNowKey>> ListIndexNowKeys(const std::string& host);

  // Registers a sitemap (or sitemap index) to poll; INVALID_ARGUMENT for a
  // URL that is not http(s), ALREADY_EXISTS when it is polled as an
  // index's child.
  absl::Status AddSitemap(const std::string& url);
  // NOT_FOUND when `url` is not a registered sitemap.
  absl::Status RemoveSitemap(const std::string& url);
  // Every polled file (registered sitemaps and their children), by URL.
  absl::StatusOr<std::vector<PolledSitemap>> ListSitemaps();

  // Subscribes to `topic` at `hub`; returns the callback id.
  // INVALID_ARGUMENT for a bad hub or topic, or a gateway without a
  // callback base.
  absl::StatusOr<std::string> AddWebSub(const std::string& hub, const std::string& topic);
  // NOT_FOUND when there is no such subscription.
  absl::Status RemoveWebSub(const std::string& hub, const std::string& topic);
  // By hub, then topic.
  absl::StatusOr<std::vector<WebSubSubscription>> ListWebSub();

 private:
  // The body of an answer 200 to `method` `path` (with `body` for POST).
  absl::StatusOr<std::string> Call(const std::string& method, const std::string& path,
                                   const std::string& body);

  const GatewayClientOptions options_;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_GATEWAY_CLIENT_H_
