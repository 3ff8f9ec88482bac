#include "ingest/feeds/xml_reader.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace feeds {
namespace {

constexpr int kOptions = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                         XML_PARSE_NOCDATA | XML_PARSE_NOBLANKS;

void InitLibxml2Once() {
  static const bool initialised = [] {
    xmlInitParser();
    return true;
  }();
  (void)initialised;
}

absl::string_view View(const xmlChar* text) {
  return text == nullptr ? absl::string_view()
                         : absl::string_view(reinterpret_cast<const char*>(text));
}

}  // namespace

SafeXmlReader::SafeXmlReader(absl::string_view xml, absl::string_view what) : what_(what) {
  InitLibxml2Once();
  if (xml.size() > static_cast<size_t>(INT32_MAX)) {
    status_ = absl::InvalidArgumentError(absl::StrCat(what_, ": larger than 2 GiB"));
    return;
  }
  reader_ = xmlReaderForMemory(xml.data(), static_cast<int>(xml.size()), /*URL=*/nullptr,
                               /*encoding=*/nullptr, kOptions);
  if (reader_ == nullptr) {
    status_ = absl::InvalidArgumentError(absl::StrCat(what_, ": not XML (libxml2 refused it)"));
    return;
  }
  xmlTextReaderSetStructuredErrorHandler(reader_, &SafeXmlReader::OnError, this);
}

SafeXmlReader::~SafeXmlReader() {
  if (reader_ != nullptr) xmlFreeTextReader(reader_);
}

void SafeXmlReader::OnError(void* self, ::_xmlError* error) {
  auto* reader = static_cast<SafeXmlReader*>(self);
  if (!reader->error_.empty() || error == nullptr || error->level < XML_ERR_ERROR) return;
  // An undeclared prefix (e.g. <image:loc> without xmlns:image, common in
  // sitemaps) breaks namespace rules, not XML: the element is read without
  // a namespace.
  if (error->domain == XML_FROM_NAMESPACE) return;
  reader->error_ =
      absl::StrCat("not well-formed XML at line ", error->line, ": ",
                   absl::StripAsciiWhitespace(error->message != nullptr ? error->message
                                                                        : "unknown libxml2 error"));
}

absl::Status SafeXmlReader::Fail(absl::string_view message) {
  if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(what_, ": ", message));
  return status_;
}

absl::StatusOr<bool> SafeXmlReader::Next() {
  if (!status_.ok()) return status_;
  const int rc = xmlTextReaderRead(reader_);
  if (rc < 0 || !error_.empty()) {
    return Fail(error_.empty() ? "not well-formed XML" : error_);
  }
  if (rc == 0) {
    // An empty or whitespace-only document ends without an error.
    if (!saw_element_) return Fail("not XML (no root element)");
    return false;
  }
  switch (xmlTextReaderNodeType(reader_)) {
    case XML_READER_TYPE_DOCUMENT_TYPE:
      return Fail("a DOCTYPE is not allowed (DTDs and entities are refused)");
    case XML_READER_TYPE_ENTITY_REFERENCE:
    case XML_READER_TYPE_ENTITY:
      return Fail("entity references are not allowed");
    case XML_READER_TYPE_ELEMENT:
      saw_element_ = true;
      break;
    default:
      break;
  }
  return true;
}

int SafeXmlReader::type() const { return xmlTextReaderNodeType(reader_); }

int SafeXmlReader::depth() const { return xmlTextReaderDepth(reader_); }

bool SafeXmlReader::is_empty_element() const { return xmlTextReaderIsEmptyElement(reader_) == 1; }

absl::string_view SafeXmlReader::local_name() const {
  return View(xmlTextReaderConstLocalName(reader_));
}

absl::string_view SafeXmlReader::namespace_uri() const {
  return View(xmlTextReaderConstNamespaceUri(reader_));
}

absl::string_view SafeXmlReader::value() const { return View(xmlTextReaderConstValue(reader_)); }

std::string SafeXmlReader::attribute(const char* name) const {
  xmlChar* value = xmlTextReaderGetAttribute(reader_, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) return "";
  std::string out(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return out;
}

}  // namespace feeds
}  // namespace recrawl
