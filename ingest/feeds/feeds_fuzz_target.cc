// Fuzz target of the feed parsers (libFuzzer entry point; feeds_fuzz_test.cc
// drives the same function deterministically). The first byte picks the
// code under test, the rest is its input:
//   0  ParseSitemap                1  InflateGzip, then ParseSitemap
//   2  ExtractFeedLinks            3  ParseW3cDatetime
//   4  SitemapPoller: the body polled twice at one time (the second poll
//      must signal nothing: a lastmod signals once)
//   5  WebSubSubscriber: the body delivered signed, and with a bad
//      signature (refused)
// Each call must end in a value or a status with a message, and what
// passes must hold what the header promises (limits, normal form, clamped
// times); sanitizers catch the rest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cluster/url.h"
#include "ingest/feeds/feed_links.h"
#include "ingest/feeds/gzip.h"
#include "ingest/feeds/hub_signature.h"
#include "ingest/feeds/sitemap_parser.h"
#include "ingest/feeds/sitemap_poll.h"
#include "ingest/feeds/w3c_datetime.h"
#include "ingest/feeds/websub.h"

namespace recrawl {
namespace feeds {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "feeds fuzz target: %s\n", what.c_str());
  std::abort();
}

void CheckError(const absl::Status& status) {
  if (status.ok() || status.message().empty()) Fail("an error without a message");
}

void CheckSitemap(absl::string_view xml) {
  SitemapLimits limits;
  limits.max_entries = 1000;
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(xml, limits);
  if (!parsed.ok()) return CheckError(parsed.status());
  if (parsed->entries.size() > limits.max_entries) Fail("more entries than the limit");
  for (const SitemapEntry& entry : parsed->entries) {
    if (entry.loc.empty() || entry.loc.size() > limits.max_loc_bytes) Fail("loc size");
    if (absl::StripAsciiWhitespace(entry.loc) != entry.loc) Fail("loc not trimmed");
  }
}

void CheckFeed(absl::string_view xml) {
  constexpr size_t kMaxLinks = 50;
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(xml, "https://blog.example/f/", kMaxLinks);
  if (!links.ok()) return CheckError(links.status());
  if (links->urls.size() > kMaxLinks) Fail("more links than the limit");
  absl::flat_hash_set<std::string> seen;
  for (const std::string& url : links->urls) {
    if (!seen.insert(url).second) Fail("a link twice: " + url);
    absl::StatusOr<cluster::NormalizedUrl> again = cluster::NormalizeUrl(url);
    if (!again.ok() || again->spec() != url) Fail("a link not in normal form: " + url);
  }
}

void CheckPoller(absl::string_view body) {
  const absl::Time now = absl::FromUnixSeconds(1717243200);  // 2024-06-01T12:00:00Z
  SitemapPollOptions options;
  options.limits.max_entries = 1000;
  options.limits.max_bytes = 1 << 20;
  SitemapPoller poller(options);
  if (!poller.Register("https://e.com/sitemap.xml", now - absl::Hours(24 * 365)).ok()) {
    Fail("register");
  }
  SitemapResponse response;
  response.status = 200;
  response.body = std::string(body);
  for (int round = 0; round < 2; ++round) {
    if (poller.NextFetches(now).empty() && round == 0) Fail("a new sitemap is not due");
    SitemapPollResult result = poller.OnFetched("https://e.com/sitemap.xml", response, now);
    for (const absl::Status& error : result.errors) CheckError(error);
    if (round == 1 && !result.signals.empty()) Fail("the same lastmods signalled twice");
    for (const Signal& signal : result.signals) {
      if (signal.source() != SIGNAL_SOURCE_SITEMAP) Fail("source");
      if (signal.time() > absl::ToDoubleSeconds(now - absl::UnixEpoch())) Fail("future time");
      absl::StatusOr<cluster::NormalizedUrl> url = cluster::NormalizeUrl(signal.url());
      if (!url.ok() || url->spec() != signal.url() || url->host() != "e.com") {
        Fail("a signal's URL: " + signal.url());
      }
    }
    for (const SitemapFileInfo& file : poller.Files()) {
      // Children of an index are due at once; the sitemap itself is not.
      if (file.parent.empty() && file.next_fetch <= now) Fail("due again at once");
      if (!file.parent.empty() && file.next_fetch < now) Fail("a child due in the past");
    }
    // Due again for the second round.
    poller.OnFetchFailed("https://e.com/sitemap.xml", absl::UnavailableError("x"), now);
    poller.NextFetches(now + absl::Hours(48));
  }
}

void CheckWebSub(absl::string_view body) {
  const absl::Time now = absl::FromUnixSeconds(1717243200);
  WebSubOptions options;
  options.callback_base = "https://ingest.example/websub";
  WebSubSubscriber subscriber(options);
  absl::StatusOr<std::string> id =
      subscriber.Subscribe("https://hub.example/", "https://blog.example/feed", "k", now);
  if (!id.ok()) Fail("subscribe");
  subscriber.DueRequests(now);
  IntentRequest intent;
  intent.mode = "subscribe";
  intent.topic = "https://blog.example/feed";
  intent.challenge = "c";
  intent.lease_seconds = "3600";
  if (subscriber.OnIntent(*id, intent, now).http_status != 200) Fail("intent");
  absl::StatusOr<WebSubDelivery> delivery =
      subscriber.OnDelivery(*id, *SignHubBody("sha256", "k", body), body, now);
  if (!delivery.ok() || delivery->signals.empty() ||
      delivery->signals[0].url() != "https://blog.example/feed") {
    Fail("a signed delivery does not signal its topic");
  }
  if (subscriber.OnDelivery(*id, *SignHubBody("sha256", "other", body), body, now).ok()) {
    Fail("a bad signature passed");
  }
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace recrawl::feeds;  // NOLINT
  if (size == 0) return 0;
  const absl::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      CheckSitemap(input);
      break;
    case 1: {
      absl::StatusOr<std::string> xml = InflateGzip(input, 1 << 20);
      if (xml.ok()) {
        CheckSitemap(*xml);
      } else {
        CheckError(xml.status());
      }
      break;
    }
    case 2:
      CheckFeed(input);
      break;
    case 3: {
      absl::StatusOr<absl::Time> t = ParseW3cDatetime(input);
      if (!t.ok()) CheckError(t.status());
      break;
    }
    case 4:
      CheckPoller(input);
      break;
    case 5:
      CheckWebSub(input);
      break;
  }
  return 0;
}
