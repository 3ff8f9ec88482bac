#include "ingest/feeds/sitemap_parser.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ingest/feeds/w3c_datetime.h"
#include "ingest/feeds/xml_reader.h"

namespace recrawl {
namespace feeds {
namespace {

bool IsSitemapNamespace(absl::string_view uri) {
  return uri.empty() || uri == "http://www.sitemaps.org/schemas/sitemap/0.9" ||
         uri == "https://www.sitemaps.org/schemas/sitemap/0.9" ||
         uri == "http://www.google.com/schemas/sitemap/0.9" ||
         uri == "http://www.google.com/schemas/sitemap/0.84";
}

// Which of an entry's children's text is being collected.
enum class Field { kNone, kLoc, kLastmod };

}  // namespace

const char* SitemapKindName(SitemapKind kind) {
  return kind == SitemapKind::kUrlset ? "urlset" : "sitemapindex";
}

absl::StatusOr<ParsedSitemap> ParseSitemap(absl::string_view xml, const SitemapLimits& limits) {
  if (xml.size() > limits.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sitemap: ", xml.size(), " bytes uncompressed, more than the limit of ", limits.max_bytes));
  }
  SafeXmlReader reader(xml, "sitemap");
  ParsedSitemap out;
  absl::string_view entry_name;  // "url" or "sitemap"
  bool in_entry = false;
  Field field = Field::kNone;
  int field_depth = 0;
  std::string loc, lastmod;
  bool loc_too_long = false;
  while (true) {
    absl::StatusOr<bool> more = reader.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const int type = reader.type();
    const int depth = reader.depth();
    if (type == SafeXmlReader::kElement) {
      const bool ours = IsSitemapNamespace(reader.namespace_uri());
      const absl::string_view name = reader.local_name();
      if (depth == 0) {
        if (ours && name == "urlset") {
          out.kind = SitemapKind::kUrlset;
          entry_name = "url";
        } else if (ours && name == "sitemapindex") {
          out.kind = SitemapKind::kSitemapIndex;
          entry_name = "sitemap";
        } else {
          return absl::InvalidArgumentError(absl::StrCat(
              "sitemap: root element is <", absl::CHexEscape(name.substr(0, 64)), ">",
              ours ? "" : " in another namespace", ", not <urlset> or <sitemapindex>"));
        }
        if (reader.is_empty_element()) break;
      } else if (depth == 1 && ours && name == entry_name) {
        if (out.entries.size() + out.skipped_entries >= limits.max_entries) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "sitemap: more than ", limits.max_entries, " <", entry_name, "> entries"));
        }
        if (reader.is_empty_element()) {
          ++out.skipped_entries;
          continue;
        }
        in_entry = true;
        loc.clear();
        lastmod.clear();
        loc_too_long = false;
      } else if (in_entry && depth == 2 && ours && (name == "loc" || name == "lastmod") &&
                 !reader.is_empty_element()) {
        field = name == "loc" ? Field::kLoc : Field::kLastmod;
        field_depth = depth;
        // A repeated child: the last one counts.
        (field == Field::kLoc ? loc : lastmod).clear();
      }
    } else if (type == SafeXmlReader::kText || type == SafeXmlReader::kCdata) {
      if (field == Field::kNone || depth != field_depth + 1) continue;
      const absl::string_view text = reader.value();
      if (field == Field::kLoc) {
        if (loc.size() + text.size() > limits.max_loc_bytes + 64) {
          loc_too_long = true;  // whitespace around a URL is short
        } else {
          loc.append(text.data(), text.size());
        }
      } else if (lastmod.size() + text.size() <= 128) {
        lastmod.append(text.data(), text.size());
      }
    } else if (type == SafeXmlReader::kEndElement) {
      if (field != Field::kNone && depth == field_depth) {
        field = Field::kNone;
      } else if (in_entry && depth == 1) {
        in_entry = false;
        const absl::string_view trimmed = absl::StripAsciiWhitespace(loc);
        if (trimmed.empty() || loc_too_long || trimmed.size() > limits.max_loc_bytes) {
          ++out.skipped_entries;
          continue;
        }
        SitemapEntry entry;
        entry.loc = std::string(trimmed);
        if (!absl::StripAsciiWhitespace(lastmod).empty()) {
          absl::StatusOr<absl::Time> t = ParseW3cDatetime(lastmod);
          if (t.ok()) {
            entry.lastmod = *t;
          } else {
            ++out.bad_lastmods;
          }
        }
        out.entries.push_back(std::move(entry));
      }
    }
  }
  return out;
}

}  // namespace feeds
}  // namespace recrawl
