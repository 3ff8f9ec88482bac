#include "ingest/indexnow.h"

#include <google/protobuf/util/json_util.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/url.h"
#include "ingest/gateway.pb.h"

namespace recrawl {
namespace ingest {
namespace {

IndexNowParse Reject(IndexNowAnswer answer, std::string message) {
  IndexNowParse p;
  p.answer = answer;
  p.message = std::move(message);
  return p;
}

// cluster::NormalizeUrl's message without its "url: " (the caller names
// the field).
absl::string_view Why(const absl::Status& status) {
  return absl::StripPrefix(status.message(), "url: ");
}

// The path of a normalised URL without its query.
absl::string_view PathOf(const cluster::NormalizedUrl& url) {
  absl::string_view path = url.path_and_query();
  return path.substr(0, path.find('?'));
}

// Checks the key and key location for `host` and the URLs of
// `urls` (named `field`[i] in messages, or `field` for a single URL).
IndexNowParse Build(const std::string& host, absl::string_view key, absl::string_view key_location,
                    const std::vector<absl::string_view>& urls, absl::string_view field,
                    bool single) {
  if (key.empty()) return Reject(IndexNowAnswer::kBadRequest, "key: missing");
  if (absl::Status s = ValidateIndexNowKey(key); !s.ok()) {
    return Reject(IndexNowAnswer::kUnprocessable, std::string(s.message()));
  }
  IndexNowParse out;
  KeyFile& file = out.submission.key_file;
  if (key_location.empty()) {
    file = DefaultKeyFile(host, key);
  } else {
    absl::StatusOr<cluster::NormalizedUrl> location = cluster::NormalizeUrl(key_location);
    if (!location.ok()) {
      return Reject(IndexNowAnswer::kBadRequest,
                    absl::StrCat("keyLocation: ", Why(location.status())));
    }
    if (location->host() != host) {
      return Reject(IndexNowAnswer::kUnprocessable,
                    absl::StrCat("keyLocation: host \"", location->host(),
                                 "\" is not the submission's host \"", host, "\""));
    }
    const absl::string_view path = PathOf(*location);
    file = KeyFile{host, std::string(key), location->spec(),
                   std::string(path.substr(0, path.rfind('/') + 1))};
  }
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < urls.size(); ++i) {
    const std::string name = single ? std::string(field) : absl::StrCat(field, "[", i, "]");
    absl::StatusOr<cluster::NormalizedUrl> url = cluster::NormalizeUrl(urls[i]);
    if (!url.ok()) {
      return Reject(IndexNowAnswer::kBadRequest, absl::StrCat(name, ": ", Why(url.status())));
    }
    if (url->host() != host) {
      return Reject(IndexNowAnswer::kUnprocessable,
                    absl::StrCat(name, ": host \"", url->host(),
                                 "\" is not the submission's host \"", host, "\""));
    }
    if (!absl::StartsWith(PathOf(*url), file.scope)) {
      return Reject(IndexNowAnswer::kUnprocessable,
                    absl::StrCat(name, ": not under \"", file.scope,
                                 "\", the folder of keyLocation, which is all the key covers"));
    }
    if (seen.insert(url->spec()).second) out.submission.urls.push_back(url->spec());
  }
  return out;
}

}  // namespace

IndexNowParse ParseIndexNowGet(absl::string_view url, absl::string_view key,
                               absl::string_view key_location) {
  if (url.empty()) return Reject(IndexNowAnswer::kBadRequest, "url: missing");
  absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(url);
  if (!normal.ok()) {
    return Reject(IndexNowAnswer::kBadRequest, absl::StrCat("url: ", Why(normal.status())));
  }
  return Build(std::string(normal->host()), key, key_location, {url}, "url", /*single=*/true);
}

IndexNowParse ParseIndexNowPost(absl::string_view body) {
  IndexNowBody parsed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(body), &parsed, options);
  if (!status.ok()) {
    return Reject(IndexNowAnswer::kBadRequest, absl::StrCat("JSON: ", status.ToString()));
  }
  if (parsed.host().empty()) return Reject(IndexNowAnswer::kBadRequest, "host: missing");
  absl::StatusOr<std::string> host = cluster::NormalizeHost(parsed.host());
  if (!host.ok()) {
    return Reject(IndexNowAnswer::kBadRequest, absl::StrCat("host: ", host.status().message()));
  }
  if (parsed.url_list_size() == 0) {
    return Reject(IndexNowAnswer::kBadRequest, "urlList: missing or empty");
  }
  if (static_cast<size_t>(parsed.url_list_size()) > kMaxIndexNowUrls) {
    return Reject(IndexNowAnswer::kBadRequest,
                  absl::StrCat("urlList: ", parsed.url_list_size(), " URLs, more than the ",
                               kMaxIndexNowUrls, " allowed"));
  }
  const std::vector<absl::string_view> urls(parsed.url_list().begin(), parsed.url_list().end());
  return Build(*host, parsed.key(), parsed.key_location(), urls, "urlList", /*single=*/false);
}

IndexNowDecision DecideIndexNow(const IndexNowSubmission& submission, KeyCache* cache,
                                HostRateLimiter* limiter, absl::Time now) {
  IndexNowDecision d;
  const KeyFile& file = submission.key_file;
  if (limiter != nullptr && !limiter->Allow(file.host, now)) {
    d.answer = IndexNowAnswer::kTooManyRequests;
    d.message = absl::StrCat("host \"", file.host, "\": too many requests; retry later");
    return d;
  }
  switch (cache->Admit(file, submission.urls, now)) {
    case KeyCache::Admission::kGranted:
      d.answer = IndexNowAnswer::kOk;
      d.forward = true;
      break;
    case KeyCache::Admission::kStartCheck:
      d.verify = true;
      [[fallthrough]];
    case KeyCache::Admission::kPending:
      d.answer = IndexNowAnswer::kAccepted;
      d.message = absl::StrCat("accepted; key file ", file.url, " is being checked");
      break;
    case KeyCache::Admission::kFailed:
      d.answer = IndexNowAnswer::kForbidden;
      d.message = absl::StrCat("key: not valid for host \"", file.host, "\" (", file.url,
                               " does not hold it)");
      break;
    case KeyCache::Admission::kBusy:
      d.answer = IndexNowAnswer::kTooManyRequests;
      d.message = "too many key checks or held URLs in flight; retry later";
      break;
  }
  return d;
}

}  // namespace ingest
}  // namespace recrawl
