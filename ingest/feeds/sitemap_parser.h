// Parsing of one sitemap file (https://www.sitemaps.org/protocol.html): a
// <urlset> of <url> entries or a sitemap index, a <sitemapindex> of
// <sitemap> entries, each with a <loc> and an optional <lastmod>.
//
// Streaming (SafeXmlReader: libxml2's xmlTextReader, no network, no DTD,
// no entity expansion), namespace-aware: the protocol's elements are taken
// in the sitemaps.org 0.9 namespace, in Google's older sitemap namespaces
// or in none; elements of other namespaces (image:loc, xhtml:link,
// news:...) are ignored, as are unknown elements (changefreq, priority).
//
// What fails the file (INVALID_ARGUMENT or RESOURCE_EXHAUSTED, with a
// message starting "sitemap: "): more than SitemapLimits::max_bytes of
// XML, more than max_entries entries, XML that is not well-formed or has a
// DOCTYPE, a root other than <urlset> / <sitemapindex>.
// What skips only a part, counted in ParsedSitemap: an entry without a
// <loc> or with one longer than max_loc_bytes (the entry); a <lastmod>
// that is not a W3C datetime (ingest/feeds/w3c_datetime.h; the entry is
// kept without its lastmod). <loc> is returned as written, trimmed of
// whitespace: the caller validates it as a URL.
//
// Pure function; thread-safe.
#ifndef RECRAWL_INGEST_FEEDS_SITEMAP_PARSER_H_
#define RECRAWL_INGEST_FEEDS_SITEMAP_PARSER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace recrawl {
namespace feeds {

// The protocol's limits per file (uncompressed).
constexpr size_t kMaxSitemapEntries = 50000;
constexpr size_t kMaxSitemapBytes = 50 * 1024 * 1024;
// "less than 2,048 characters" (sitemaps.org).
constexpr size_t kMaxSitemapLocBytes = 2047;

struct SitemapLimits {
  size_t max_entries = kMaxSitemapEntries;
  size_t max_bytes = kMaxSitemapBytes;
  size_t max_loc_bytes = kMaxSitemapLocBytes;
};

enum class SitemapKind {
  kUrlset,        // <urlset>: entries are pages
  kSitemapIndex,  // <sitemapindex>: entries are sitemaps
};

const char* SitemapKindName(SitemapKind kind);

struct SitemapEntry {
  std::string loc;
  std::optional<absl::Time> lastmod;
};

struct ParsedSitemap {
  SitemapKind kind = SitemapKind::kUrlset;
  // In document order.
  std::vector<SitemapEntry> entries;
  // Entries dropped: no <loc>, an empty one or one over max_loc_bytes.
  size_t skipped_entries = 0;
  // Entries kept without their <lastmod>, which was not a W3C datetime.
  size_t bad_lastmods = 0;
};

// Parses `xml`, an uncompressed sitemap or sitemap index (see the file
// comment for what fails).
absl::StatusOr<ParsedSitemap> ParseSitemap(absl::string_view xml, const SitemapLimits& limits = {});

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_SITEMAP_PARSER_H_
