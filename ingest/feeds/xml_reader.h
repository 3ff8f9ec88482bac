// A streaming XML reader (libxml2's xmlTextReader over a byte string) set
// up for untrusted documents, shared by the sitemap and feed parsers:
//
//  * no network access (XML_PARSE_NONET) and no external DTD or entity is
//    loaded; libxml2's hard limits stay on (no XML_PARSE_HUGE: text nodes
//    up to 10 MB, nesting up to 256 levels);
//  * a document with a DOCTYPE is refused when the reader reaches it, so
//    entities declared there are never expanded (the "billion laughs"
//    attack is a DOCTYPE with nested entities); sitemaps and feeds need
//    none;
//  * an undeclared namespace prefix is not an error: the element is read
//    without a namespace (its local name stays the part after the colon);
//  * libxml2 prints nothing: its first error becomes the status, with the
//    line, e.g. "sitemap: not well-formed XML at line 3: ...".
//
// One reader per document; not thread-safe (distinct readers may run on
// distinct threads: the first construction initialises libxml2 once).
#ifndef RECRAWL_INGEST_FEEDS_XML_READER_H_
#define RECRAWL_INGEST_FEEDS_XML_READER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// libxml2's reader and error types (libxml/xmlreader.h), kept out of this
// header.
typedef struct _xmlTextReader xmlTextReader;
struct _xmlError;

namespace recrawl {
namespace feeds {

class SafeXmlReader {
 public:
  // Node types the parsers look at (libxml2's xmlReaderTypes values).
  enum NodeType {
    kElement = 1,
    kText = 3,
    kCdata = 4,
    kEndElement = 15,
  };

  // Reads `xml` (not copied: it must outlive the reader). `what` starts
  // every error message, e.g. "sitemap".
  SafeXmlReader(absl::string_view xml, absl::string_view what);
  ~SafeXmlReader();
  SafeXmlReader(const SafeXmlReader&) = delete;
  SafeXmlReader& operator=(const SafeXmlReader&) = delete;

  // Moves to the next node: true when there is one, false at the end of
  // the document; INVALID_ARGUMENT when the document is not well-formed
  // XML, is empty or has a DOCTYPE. After an error every call fails alike.
  absl::StatusOr<bool> Next();

  // Of the current node (after Next returned true). The views stay valid
  // until the next call of Next.
  int type() const;
  int depth() const;
  bool is_empty_element() const;
  // The element's name without prefix, e.g. "loc" for <sm:loc>.
  absl::string_view local_name() const;
  // The element's namespace URI; "" when it has none.
  absl::string_view namespace_uri() const;
  // A text or CDATA node's text.
  absl::string_view value() const;
  // The current element's attribute `name` (unprefixed, no namespace);
  // "" when absent.
  std::string attribute(const char* name) const;

 private:
  // libxml2's structured error handler; `self` is the reader.
  static void OnError(void* self, ::_xmlError* error);
  absl::Status Fail(absl::string_view message);

  xmlTextReader* reader_ = nullptr;
  std::string what_;
  // The first error libxml2 reported (its structured error handler).
  std::string error_;
  absl::Status status_;
  bool saw_element_ = false;
};

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_XML_READER_H_
