#include "ingest/safe_fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace ingest {
namespace {

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// What one hop's callbacks see and record.
struct Hop {
  const FetchOptions* options = nullptr;
  FetchResponse* response = nullptr;
  std::string location;
  bool too_large = false;
  std::string refused_address;  // set when the open-socket callback refused
};

bool Cancelled(const FetchOptions& options) {
  return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
}

absl::Status CancelledError(const std::string& url) {
  return absl::CancelledError(
      absl::StrCat("url \"", url, "\": cancelled (the fetcher is stopping)"));
}

// libcurl's progress callback: a non-zero return aborts the transfer
// (CURLE_ABORTED_BY_CALLBACK).
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return Cancelled(*static_cast<const Hop*>(user)->options) ? 1 : 0;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  Hop* hop = static_cast<Hop*>(user);
  const size_t n = size * count;
  if (hop->response->body.size() + n > hop->options->max_body_bytes) {
    hop->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  hop->response->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  Hop* hop = static_cast<Hop*>(user);
  const size_t n = size * count;
  absl::string_view line(data, n);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new response (e.g. after a 100 Continue): forget the last one's.
    const int redirects = hop->response->redirects;
    *hop->response = FetchResponse{};
    hop->response->redirects = redirects;
    hop->location.clear();
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return n;
  const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
  const std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  if (name == "etag") hop->response->etag = value;
  if (name == "last-modified") hop->response->last_modified = value;
  if (name == "content-type") hop->response->content_type = value;
  if (name == "content-encoding") hop->response->content_encoding = value;
  return n;
}

curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  Hop* hop = static_cast<Hop*>(user);
  IpAddress ip;
  if (!IpAddress::FromSockaddr(&address->addr, &ip)) {
    hop->refused_address = absl::StrCat("address family ", address->family);
    return CURL_SOCKET_BAD;
  }
  if (!hop->options->policy.Allows(ip)) {
    hop->refused_address = ip.ToString();
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype, address->protocol);
}

// The lower-case host of an absolute http(s) URL; INVALID_ARGUMENT otherwise.
absl::StatusOr<std::string> HostOf(const std::string& url) {
  std::unique_ptr<CURLU, CurlDeleter> u(curl_url());
  if (curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError(absl::StrCat("url: cannot parse \"", url, "\""));
  }
  char* scheme = nullptr;
  char* host = nullptr;
  std::string scheme_text;
  std::string host_text;
  if (curl_url_get(u.get(), CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK) scheme_text = scheme;
  if (curl_url_get(u.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK) host_text = host;
  curl_free(scheme);
  curl_free(host);
  scheme_text = absl::AsciiStrToLower(scheme_text);
  if (scheme_text != "http" && scheme_text != "https") {
    return absl::InvalidArgumentError(absl::StrCat("url: \"", url, "\" is not http or https"));
  }
  if (host_text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("url: \"", url, "\" has no host"));
  }
  return absl::AsciiStrToLower(host_text);
}

// One GET (or POST) without following redirects; sets *location to the redirect
// target of a 3xx answer.
absl::Status FetchOnce(const std::string& url, const FetchRequest& request,
                       const std::string* form_body, const FetchOptions& options,
                       absl::Duration time_left, FetchResponse* response, std::string* location) {
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  CURL* c = curl.get();
  Hop hop;
  hop.options = &options;
  hop.response = response;
  std::unique_ptr<curl_slist, CurlDeleter> headers;
  auto add_header = [&headers](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  if (!request.if_none_match.empty()) add_header("If-None-Match: " + request.if_none_match);
  if (!request.if_modified_since.empty()) {
    add_header("If-Modified-Since: " + request.if_modified_since);
  }
  const long total_ms = std::max<long>(1, absl::ToInt64Milliseconds(time_left));
  const long connect_ms =
      std::min(total_ms, std::max<long>(1, absl::ToInt64Milliseconds(options.connect_timeout)));
  if (form_body != nullptr) {
    add_header("Content-Type: application/x-www-form-urlencoded");
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, form_body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(form_body->size()));
  }
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_body_bytes));
  curl_easy_setopt(c, CURLOPT_USERAGENT, options.user_agent.c_str());
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &hop);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &hop);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &hop);
  if (options.cancel != nullptr) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &hop);
  }
  // No connection reuse across handles: every connection passes the check.
  curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);

  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_ABORTED_BY_CALLBACK && Cancelled(options)) return CancelledError(url);
  if (!hop.refused_address.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("url \"", url, "\": refused to connect to ", hop.refused_address,
                     " (not a public address; the fetch allowlist does not admit it)"));
  }
  if (hop.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("url \"", url, "\": body larger than ", options.max_body_bytes, " bytes"));
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return absl::DeadlineExceededError(
        absl::StrCat("url \"", url, "\": timed out (", curl_easy_strerror(rc), ")"));
  }
  if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
    return absl::InvalidArgumentError(absl::StrCat("url \"", url, "\": ", curl_easy_strerror(rc)));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat("url \"", url, "\": ", curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  response->status = static_cast<int>(status);
  response->final_url = url;
  location->clear();
  char* redirect = nullptr;
  if (status >= 300 && status < 400 &&
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &redirect) == CURLE_OK && redirect != nullptr) {
    *location = redirect;
  }
  return absl::OkStatus();
}

// SafeFetch, or SafePostForm when `form_body` is not null.
absl::StatusOr<FetchResponse> Fetch(const FetchRequest& request, const std::string* form_body,
                                    const FetchOptions& options) {
  InitCurlOnce();
  absl::StatusOr<std::string> first_host = HostOf(request.url);
  if (!first_host.ok()) return first_host.status();
  const absl::Time deadline = absl::Now() + options.total_timeout;
  std::string url = request.url;
  FetchResponse response;
  for (int hop = 0;; ++hop) {
    if (Cancelled(options)) return CancelledError(url);
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("url \"", request.url, "\": timed out after ", hop, " redirects"));
    }
    response = FetchResponse{};
    response.redirects = hop;
    std::string location;
    if (absl::Status s = FetchOnce(url, request, form_body, options, left, &response, &location);
        !s.ok()) {
      return s;
    }
    if (location.empty() || form_body != nullptr) return response;
    if (hop >= options.max_redirects) {
      return absl::OutOfRangeError(absl::StrCat("url \"", request.url, "\": more than ",
                                                options.max_redirects, " redirects"));
    }
    absl::StatusOr<std::string> next_host = HostOf(location);
    if (!next_host.ok()) {
      return absl::PermissionDeniedError(absl::StrCat(
          "url \"", url, "\": redirect to an unusable URL (", next_host.status().message(), ")"));
    }
    if (absl::StartsWith(absl::AsciiStrToLower(url), "https:") &&
        !absl::StartsWith(absl::AsciiStrToLower(location), "https:")) {
      return absl::PermissionDeniedError(
          absl::StrCat("url \"", url, "\": redirect from https to http refused"));
    }
    if (*next_host != *first_host && !options.allow_cross_host_redirects) {
      return absl::PermissionDeniedError(
          absl::StrCat("url \"", url, "\": redirect to another host (", *next_host, ") refused"));
    }
    url = location;
  }
}

}  // namespace

absl::StatusOr<FetchResponse> SafeFetch(const FetchRequest& request, const FetchOptions& options) {
  return Fetch(request, nullptr, options);
}

absl::StatusOr<FetchResponse> SafePostForm(const std::string& url, const std::string& form_body,
                                           const FetchOptions& options) {
  return Fetch({url, "", ""}, &form_body, options);
}

}  // namespace ingest
}  // namespace recrawl
