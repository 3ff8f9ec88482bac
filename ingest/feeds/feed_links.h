// The entries' links of an Atom (RFC 4287) or RSS (2.0, 1.0 / RDF) body, as
// a WebSub hub delivers a topic's new content:
//
//  * Atom: each <entry>'s <link> whose rel is absent or "alternate" (its
//    href); the root may be <feed> or a lone <entry>;
//  * RSS 2.0: each <item>'s <link> text, else its <guid> unless
//    isPermaLink="false";
//  * RSS 1.0: each <item>'s <link> text.
//
// Elements are matched by namespace (Atom's, RSS 1.0's and 0.90's, none for
// RSS 2.0). Relative links are resolved against `base` (the topic URL);
// links are normalised (cluster/url.h), de-duplicated, kept in document
// order and capped at `max_links`; links that are not valid http(s) URLs
// are counted and dropped. Parsing is SafeXmlReader's (no network, no
// DOCTYPE, no entity expansion).
//
// INVALID_ARGUMENT (a message starting "feed: ") when the body is not
// well-formed XML or its root is not <feed>, <entry>, <rss> or <rdf:RDF>.
//
// Pure function; thread-safe.
#ifndef RECRAWL_INGEST_FEEDS_FEED_LINKS_H_
#define RECRAWL_INGEST_FEEDS_FEED_LINKS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace feeds {

constexpr size_t kDefaultMaxFeedLinks = 1000;

struct FeedLinks {
  // Normalised, distinct, in document order.
  std::vector<std::string> urls;
  // Links that were not valid http(s) URLs, and links over max_links.
  size_t bad_links = 0;
  size_t dropped_over_limit = 0;
};

absl::StatusOr<FeedLinks> ExtractFeedLinks(absl::string_view xml, absl::string_view base,
                                           size_t max_links = kDefaultMaxFeedLinks);

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_FEED_LINKS_H_
