// Outbound HTTP(S) requests for the gateway (IndexNow key files, sitemaps, WebSub
// hubs) through libcurl, guarded against server-side request forgery and
// bounded in time and size.
//
// - The address checked is the one curl actually connects to (in its
//   open-socket callback, after name resolution): a name that resolves to
//   a private, loopback or link-local address is refused as a literal one
//   is (ingest/address_policy.h), unless FetchOptions::policy admits it.
//   With http_proxy / https_proxy in the environment (honoured, with
//   no_proxy, as libcurl does) that address is the proxy's, which then
//   resolves the target.
// - Redirects are not followed by curl: up to max_redirects are followed
//   here, each only to the same host name unless allow_cross_host_redirects,
//   and never from https to http.
// - Only http and https; GET, or POST of a form body (WebSub hub
//   requests; SafePostForm), whose 3xx answers are returned as
//   they are (a POST is never redirected); total time (over all hops), connect time
//   and body size are bounded (the transfer is aborted as soon as the body
//   passes max_body_bytes). No Accept-Encoding is sent and the body is kept
//   as received; gzip bodies are inflated by the caller with InflateGzip
//   (ingest/feeds/gzip.h), which bounds the inflated size.
//
// Errors (absl::Status codes):
//   INVALID_ARGUMENT    the URL is not an absolute http(s) URL;
//   PERMISSION_DENIED   the target address is refused, or a redirect leads
//                       to another host or from https to http;
//   RESOURCE_EXHAUSTED  the body is larger than max_body_bytes;
//   OUT_OF_RANGE        more than max_redirects redirects;
//   DEADLINE_EXCEEDED   the connect or total time ran out;
//   CANCELLED           FetchOptions::cancel was set;
//   UNAVAILABLE         any other network or TLS failure.
// Any HTTP status (incl. 304, 404, 5xx) is a successful fetch.
//
// Thread-safe: each call uses its own curl handle; blocks the caller.
#ifndef RECRAWL_INGEST_SAFE_FETCH_H_
#define RECRAWL_INGEST_SAFE_FETCH_H_

#include <atomic>
#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ingest/address_policy.h"

namespace recrawl {
namespace ingest {

struct FetchOptions {
  absl::Duration total_timeout = absl::Seconds(10);
  absl::Duration connect_timeout = absl::Seconds(5);
  size_t max_body_bytes = size_t{1} << 20;
  int max_redirects = 5;
  bool allow_cross_host_redirects = false;
  AddressPolicy policy;
  // PEM CAs that verify https servers; empty: the system's.
  std::string ca_file;
  std::string user_agent = "recrawl-ingest/1";
  // When not null and set (by another thread, e.g. a stopping server), a
  // fetch ends with CANCELLED: at once when it is set before the fetch or
  // between redirects, else at libcurl's next progress callback (many
  // times a second while bytes flow, about once a second while waiting).
  // Must outlive the fetches that watch it.
  const std::atomic<bool>* cancel = nullptr;
};

struct FetchRequest {
  std::string url;
  // Conditional GET: sent as If-None-Match / If-Modified-Since when not
  // empty (the ETag and Last-Modified of an earlier response).
  std::string if_none_match;
  std::string if_modified_since;
};

struct FetchResponse {
  int status = 0;
  // The URL of the last hop (after the redirects followed).
  std::string final_url;
  // As received (not decoded).
  std::string body;
  // The response's headers of interest ("" when absent).
  std::string etag;
  std::string last_modified;
  std::string content_type;
  std::string content_encoding;
  int redirects = 0;
};

// GETs `request.url` under `options` (see the file comment).
absl::StatusOr<FetchResponse> SafeFetch(const FetchRequest& request, const FetchOptions& options);

// POSTs `form_body` to `url` (Content-Type
// application/x-www-form-urlencoded) under the same guards; a 3xx answer is
// returned, not followed.
absl::StatusOr<FetchResponse> SafePostForm(const std::string& url, const std::string& form_body,
                                           const FetchOptions& options);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_SAFE_FETCH_H_
