#include "ingest/feeds/feed_links.h"

#include <libxml/uri.h>
#include <libxml/xmlmemory.h>

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cluster/url.h"
#include "ingest/feeds/xml_reader.h"

namespace recrawl {
namespace feeds {
namespace {

constexpr absl::string_view kAtomNs = "http://www.w3.org/2005/Atom";
constexpr absl::string_view kRdfNs = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
constexpr absl::string_view kRss1Ns = "http://purl.org/rss/1.0/";
constexpr absl::string_view kRss090Ns = "http://my.netscape.com/rdf/simple/0.9/";
// Text of a <link> or <guid> beyond this is not a URL anyone serves.
constexpr size_t kMaxLinkText = 4096;

enum class Dialect { kAtom, kRss2, kRss1 };

class LinkCollector {
 public:
  LinkCollector(absl::string_view base, size_t max_links) : base_(base), max_links_(max_links) {}

  // Resolves, normalises and keeps `link` (see the header).
  void Add(absl::string_view link) {
    link = absl::StripAsciiWhitespace(link);
    if (link.empty()) return;
    std::string resolved(link);
    if (!base_.empty()) {
      const std::string text(link);
      xmlChar* uri = xmlBuildURI(reinterpret_cast<const xmlChar*>(text.c_str()),
                                 reinterpret_cast<const xmlChar*>(base_.c_str()));
      if (uri == nullptr) {
        ++out_.bad_links;
        return;
      }
      resolved = reinterpret_cast<const char*>(uri);
      xmlFree(uri);
    }
    absl::StatusOr<cluster::NormalizedUrl> url = cluster::NormalizeUrl(resolved);
    if (!url.ok()) {
      ++out_.bad_links;
      return;
    }
    if (seen_.contains(url->spec())) return;
    if (out_.urls.size() >= max_links_) {
      ++out_.dropped_over_limit;
      return;
    }
    seen_.insert(url->spec());
    out_.urls.push_back(url->spec());
  }

  FeedLinks Take() { return std::move(out_); }

 private:
  const std::string base_;
  const size_t max_links_;
  FeedLinks out_;
  absl::flat_hash_set<std::string> seen_;
};

}  // namespace

absl::StatusOr<FeedLinks> ExtractFeedLinks(absl::string_view xml, absl::string_view base,
                                           size_t max_links) {
  SafeXmlReader reader(xml, "feed");
  LinkCollector links(base, max_links);
  Dialect dialect = Dialect::kAtom;
  int item_depth = -1;  // depth of the open <entry> / <item>; -1 outside
  // The open <link> or <guid> of an RSS item whose text is collected.
  enum class Field { kNone, kLink, kGuid } field = Field::kNone;
  std::string link, guid;
  bool guid_is_permalink = true;
  auto is_item_ns = [&](absl::string_view ns) {
    switch (dialect) {
      case Dialect::kAtom:
        return ns == kAtomNs;
      case Dialect::kRss2:
        return ns.empty();
      case Dialect::kRss1:
        return ns == kRss1Ns || ns == kRss090Ns;
    }
    return false;
  };
  while (true) {
    absl::StatusOr<bool> more = reader.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const int type = reader.type();
    const int depth = reader.depth();
    if (type == SafeXmlReader::kElement) {
      const absl::string_view ns = reader.namespace_uri();
      const absl::string_view name = reader.local_name();
      if (depth == 0) {
        if (ns == kAtomNs && (name == "feed" || name == "entry")) {
          dialect = Dialect::kAtom;
          if (name == "entry") item_depth = 0;
        } else if (ns.empty() && name == "rss") {
          dialect = Dialect::kRss2;
        } else if (ns == kRdfNs && name == "RDF") {
          dialect = Dialect::kRss1;
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat("feed: root element is <", absl::CHexEscape(name.substr(0, 64)),
                           ">, not Atom's <feed> or <entry>, <rss> or <rdf:RDF>"));
        }
        continue;
      }
      if (item_depth < 0) {
        const absl::string_view item = dialect == Dialect::kAtom ? "entry" : "item";
        if (name == item && is_item_ns(ns) && !reader.is_empty_element()) {
          item_depth = depth;
          link.clear();
          guid.clear();
          guid_is_permalink = true;
        }
        continue;
      }
      if (depth != item_depth + 1 || !is_item_ns(ns)) continue;
      if (dialect == Dialect::kAtom) {
        if (name == "link") {
          const std::string rel = reader.attribute("rel");
          if (rel.empty() || rel == "alternate") links.Add(reader.attribute("href"));
        }
      } else if (name == "link" && !reader.is_empty_element()) {
        field = Field::kLink;
        link.clear();
      } else if (name == "guid" && dialect == Dialect::kRss2 && !reader.is_empty_element()) {
        field = Field::kGuid;
        guid.clear();
        guid_is_permalink = reader.attribute("isPermaLink") != "false";
      }
    } else if (type == SafeXmlReader::kText || type == SafeXmlReader::kCdata) {
      if (field == Field::kNone || depth != item_depth + 2) continue;
      std::string& text = field == Field::kLink ? link : guid;
      const absl::string_view value = reader.value();
      if (text.size() + value.size() <= kMaxLinkText) text.append(value.data(), value.size());
    } else if (type == SafeXmlReader::kEndElement) {
      if (field != Field::kNone && depth == item_depth + 1) {
        field = Field::kNone;
      } else if (depth == item_depth) {
        if (dialect != Dialect::kAtom) {
          if (!absl::StripAsciiWhitespace(link).empty()) {
            links.Add(link);
          } else if (guid_is_permalink) {
            links.Add(guid);
          }
        }
        item_depth = -1;
      }
    }
  }
  return links.Take();
}

}  // namespace feeds
}  // namespace recrawl
