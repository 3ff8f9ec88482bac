// Fuzz target of the gateway's request parsing (libFuzzer entry point;
// indexnow_fuzz_test.cc drives the same function deterministically): the
// second byte salts the clock steps and key check outcomes, the first picks the IndexNow POST body,
// the GET form (the rest split at
// '\0' into url, key and keyLocation) or a CDN purge body. Every parse
// must end in the protocol's answers with a message, and a submission that
// passes must hold what the parsers promise: 1 to 10,000 distinct URLs, in
// normal form, on the submission's host and under its key's scope. Passing
// submissions then go through DecideIndexNow and the key cache with a clock
// that advances, checks completing at random, and the cache's held-URL
// count must match what it hands back. Sanitizers catch the rest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cluster/url.h"
#include "ingest/cdn_purge.h"
#include "ingest/indexnow.h"
#include "ingest/key_cache.h"

namespace recrawl {
namespace ingest {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "indexnow fuzz target: %s\n", what.c_str());
  std::abort();
}

void CheckUrls(const std::vector<std::string>& urls, const KeyFile* file) {
  if (urls.empty() || urls.size() > kMaxIndexNowUrls) Fail("URL count out of bounds");
  absl::flat_hash_set<std::string> seen;
  for (const std::string& url : urls) {
    if (!seen.insert(url).second) Fail("a URL twice: " + url);
    absl::StatusOr<cluster::NormalizedUrl> again = cluster::NormalizeUrl(url);
    if (!again.ok() || again->spec() != url) Fail("a URL not in normal form: " + url);
    if (file == nullptr) continue;
    if (again->host() != file->host) Fail("a URL off the host: " + url);
    absl::string_view path = again->path_and_query();
    path = path.substr(0, path.find('?'));
    if (!absl::StartsWith(path, file->scope)) Fail("a URL outside the key's scope: " + url);
  }
}

struct State {
  KeyCache cache{[] {
    KeyCacheOptions o;
    o.max_entries = 64;
    o.max_held_urls = 20000;
    return o;
  }()};
  HostRateLimiter limiter{{/*rate=*/5.0, /*burst=*/20.0, /*max_hosts=*/64}};
  absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  std::vector<KeyFile> checking;
};

void Decide(State& state, const IndexNowSubmission& submission, uint8_t salt) {
  state.now += absl::Seconds(salt % 16) * 10;
  const size_t held_before = state.cache.held_urls();
  const IndexNowDecision d = DecideIndexNow(submission, &state.cache, &state.limiter, state.now);
  switch (d.answer) {
    case IndexNowAnswer::kOk:
      if (!d.forward || d.verify) Fail("200 must forward and not verify");
      break;
    case IndexNowAnswer::kAccepted:
      if (d.forward) Fail("202 must not forward");
      if (state.cache.held_urls() != held_before + submission.urls.size()) {
        Fail("202 must hold the submission's URLs");
      }
      break;
    case IndexNowAnswer::kForbidden:
    case IndexNowAnswer::kTooManyRequests:
      if (d.forward || d.verify || d.message.empty()) Fail("403/429 with a message, nothing else");
      break;
    default:
      Fail("DecideIndexNow gave a parse answer");
  }
  if (d.verify) state.checking.push_back(submission.key_file);
  // Complete some checks, proved or not, by the salt.
  if (!state.checking.empty() && salt % 3 == 0) {
    const KeyFile file = state.checking.back();
    state.checking.pop_back();
    const size_t held = state.cache.held_urls();
    const std::vector<std::string> released = state.cache.Complete(file, salt % 2 == 0, state.now);
    if (state.cache.held_urls() > held) Fail("Complete held more URLs");
    if (salt % 2 != 0 && !released.empty()) Fail("a refused key file released URLs");
  }
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace recrawl::ingest;  // NOLINT: the entry point's own namespace
  static State* state = new State;
  const uint8_t kind = data[0] % 3;
  if (size < 2) return 0;
  const uint8_t salt = data[1];
  const absl::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (kind == 2) {
    absl::StatusOr<std::vector<std::string>> urls = ParseCdnPurge(input);
    if (urls.ok())
      CheckUrls(*urls, nullptr);
    else if (urls.status().message().empty())
      Fail("a purge error without a message");
    return 0;
  }
  IndexNowParse parsed;
  if (kind == 0) {
    parsed = ParseIndexNowPost(input);
  } else {
    std::vector<absl::string_view> parts = absl::StrSplit(input, absl::MaxSplits('\0', 2));
    parts.resize(3);
    parsed = ParseIndexNowGet(parts[0], parts[1], parts[2]);
  }
  switch (parsed.answer) {
    case IndexNowAnswer::kOk:
      CheckUrls(parsed.submission.urls, &parsed.submission.key_file);
      if (!ValidateIndexNowKey(parsed.submission.key_file.key).ok()) Fail("a bad key passed");
      Decide(*state, parsed.submission, salt);
      break;
    case IndexNowAnswer::kBadRequest:
    case IndexNowAnswer::kUnprocessable:
      if (parsed.message.empty()) Fail("a rejection without a message");
      break;
    default:
      Fail("a parse answered neither 200, 400 nor 422");
  }
  return 0;
}
