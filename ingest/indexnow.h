// IndexNow requests (indexnow.org/documentation) as the gateway receives
// them, parsed and validated without I/O, and the protocol's answer.
//
//   GET  /indexnow?url=<url>&key=<key>[&keyLocation=<url>]
//   POST /indexnow  {"host", "key", "keyLocation", "urlList": [...]}
//
// Answers (IndexNowAnswer): 400 when the request is malformed (bad JSON, a
// field missing or of the wrong type, a URL that is not an absolute
// http(s) URL, an empty or over-long urlList); 422 when the key does not
// follow the protocol's syntax (8-128 of a-z A-Z 0-9 '-') or a URL (or the
// keyLocation) is not on the host, or a URL is outside the keyLocation's
// folder; and, once well formed, what the key check says (ingest/
// key_cache.h): 200 key known good, 202 accepted while the key file is
// checked, 403 the key file does not hold the key, 429 too many requests.
// Every message names the field at fault.
#ifndef RECRAWL_INGEST_INDEXNOW_H_
#define RECRAWL_INGEST_INDEXNOW_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest/host_rate_limiter.h"
#include "ingest/key_cache.h"

namespace recrawl {
namespace ingest {

enum class IndexNowAnswer {
  kOk = 200,
  kAccepted = 202,
  kBadRequest = 400,
  kForbidden = 403,
  kUnprocessable = 422,
  kTooManyRequests = 429,
};

// The protocol's limit on urlList.
inline constexpr size_t kMaxIndexNowUrls = 10000;

// A well-formed submission: the host and its key file, and the URLs
// (normalised as the shards normalise them, cluster/url.h; each once, in
// first-seen order).
struct IndexNowSubmission {
  KeyFile key_file;
  std::vector<std::string> urls;
};

// A parse result: `answer` is kOk with `submission` filled, or the error
// answer (400 or 422) with `message`.
struct IndexNowParse {
  IndexNowAnswer answer = IndexNowAnswer::kOk;
  std::string message;
  IndexNowSubmission submission;
};

// The GET form's query parameters (an absent one is "").
IndexNowParse ParseIndexNowGet(absl::string_view url, absl::string_view key,
                               absl::string_view key_location);

// The POST form's body (JSON; unknown fields are ignored).
IndexNowParse ParseIndexNowPost(absl::string_view body);

// The protocol answer for a well-formed submission under the key cache's
// state at `now`, with a message for the response body. May start a key
// check (KeyCache::Admit): then *verify is set and the caller fetches
// submission.key_file.url and reports to KeyCache::Complete.
struct IndexNowDecision {
  IndexNowAnswer answer = IndexNowAnswer::kOk;
  std::string message;
  // Forward submission.urls as signals now (only with kOk).
  bool forward = false;
  // The caller must check the key file now.
  bool verify = false;
};
// `limiter` (may be null) answers 429 for hosts over their request rate.
IndexNowDecision DecideIndexNow(const IndexNowSubmission& submission, KeyCache* cache,
                                HostRateLimiter* limiter, absl::Time now);

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_INDEXNOW_H_
