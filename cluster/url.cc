#include "cluster/url.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace recrawl {
namespace cluster {
namespace {

// Longest DNS name and label (RFC 1035 Sec. 2.3.4).
constexpr size_t kMaxHostLength = 253;
constexpr size_t kMaxLabelLength = 63;

absl::Status Invalid(absl::string_view subject, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(subject, ": ", what));
}

// A short, printable rendering of untrusted text for error messages.
std::string Quote(absl::string_view text) {
  constexpr size_t kMaxShown = 32;
  std::string shown = absl::CHexEscape(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) shown += "...";
  return absl::StrCat("\"", shown, "\"");
}

bool IsUnreserved(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

// Bytes that may not appear raw in a path or query: RFC 3986 allows none of
// them, and escaping them gives one spelling to what clients send either
// way. A table, since every byte of every URL is looked up.
class EscapeTable {
 public:
  constexpr EscapeTable() : needs_escape_() {
    for (int c = 0x80; c < 0x100; ++c) needs_escape_[c] = true;
    for (char c : {'"', '<', '>', '\\', '^', '`', '{', '|', '}'}) {
      needs_escape_[static_cast<unsigned char>(c)] = true;
    }
  }
  constexpr bool NeedsEscape(unsigned char c) const { return needs_escape_[c]; }

 private:
  bool needs_escape_[256];
};
constexpr EscapeTable kEscapeTable;

bool NeedsEscape(unsigned char c) { return kEscapeTable.NeedsEscape(c); }

// What a byte of a path or query in normal form may be (NormalFormHost):
// kept as it is, '%' starting an escape, '?' starting the query, or
// something normalisation would change or reject (whitespace, a control
// character, '#', a byte it escapes).
class NormalPathTable {
 public:
  enum Class : unsigned char { kKept, kNotNormal, kEscape, kQuery };
  constexpr NormalPathTable() : class_() {
    for (int c = 0; c < 0x100; ++c) {
      class_[c] =
          c <= ' ' || c == 0x7f || c == '#' || kEscapeTable.NeedsEscape(c) ? kNotNormal : kKept;
    }
    class_[static_cast<unsigned char>('%')] = kEscape;
    class_[static_cast<unsigned char>('?')] = kQuery;
  }
  constexpr Class Of(unsigned char c) const { return class_[c]; }

 private:
  Class class_[256];
};
constexpr NormalPathTable kNormalPathTable;

bool IsUpperHex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

// The first position at or after `from` of one of the bytes `a`, `b`, `c`
// and `d`; npos if none.
size_t FindFirstOf(absl::string_view text, size_t from, char a, char b, char c, char d) {
  for (size_t i = from; i < text.size(); ++i) {
    const char x = text[i];
    if (x == a || x == b || x == c || x == d) return i;
  }
  return absl::string_view::npos;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

void AppendPercentEscape(unsigned char c, std::string* out) {
  constexpr char kHex[] = "0123456789ABCDEF";
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xf]);
}

// Appends a path or query to `out` with its percent escapes normalised.
// `offset` is the position of `text` in the input, for messages.
absl::Status AppendEscaped(absl::string_view text, size_t offset, std::string* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    // Bytes kept as they are, appended as one run.
    size_t run = i;
    while (run < text.size() && text[run] != '%' &&
           !NeedsEscape(static_cast<unsigned char>(text[run]))) {
      ++run;
    }
    out->append(text.data() + i, run - i);
    if (run == text.size()) break;
    i = run;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '%') {
      if (i + 2 >= text.size() || !absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 1])) ||
          !absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 2]))) {
        return Invalid("url", absl::StrCat("malformed percent escape at offset ", offset + i));
      }
      const char decoded = static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      if (IsUnreserved(decoded)) {
        out->push_back(decoded);
      } else {
        AppendPercentEscape(static_cast<unsigned char>(decoded), out);
      }
      i += 2;
    } else {
      AppendPercentEscape(c, out);
    }
  }
  return absl::OkStatus();
}

bool HasDotSegment(absl::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '.' || (i > 0 && path[i - 1] != '/')) continue;
    const size_t end = i + (i + 1 < path.size() && path[i + 1] == '.' ? 2 : 1);
    if (end == path.size() || path[end] == '/') return true;
  }
  return false;
}

// RFC 3986 Sec. 5.2.4 on an absolute path ("/..."): "." segments vanish, ".."
// removes the segment before it (never above the root), and a path that
// ends in either ends in "/".
std::string RemoveDotSegments(absl::string_view path) {
  std::vector<absl::string_view> segments = absl::StrSplit(path.substr(1), '/');
  std::vector<absl::string_view> kept;
  for (size_t i = 0; i < segments.size(); ++i) {
    const bool last = i + 1 == segments.size();
    if (segments[i] == "." || segments[i] == "..") {
      if (segments[i] == ".." && !kept.empty()) kept.pop_back();
      if (last) kept.push_back("");
      continue;
    }
    kept.push_back(segments[i]);
  }
  return absl::StrCat("/", absl::StrJoin(kept, "/"));
}

// Appends the normalised form of `host` (no port) to `out`. `subject` starts
// error messages ("url" or "host").
absl::Status AppendHost(absl::string_view host, absl::string_view subject, std::string* out) {
  if (host.empty()) return Invalid(subject, "empty host");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']' || !absl::StrContains(host, ':')) {
      return Invalid(subject, absl::StrCat("malformed IPv6 literal ", Quote(host)));
    }
    for (char c : host.substr(1, host.size() - 2)) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return Invalid(subject, absl::StrCat("IPv6 literal has a character other than "
                                             "hex digits, ':' and '.': ",
                                             Quote(host)));
      }
    }
    out->append(absl::AsciiStrToLower(host));
    return absl::OkStatus();
  }
  // "example.com." names the same host as "example.com".
  if (host.back() == '.') host.remove_suffix(1);
  if (host.size() > kMaxHostLength) {
    return Invalid(subject, absl::StrCat("host longer than ", kMaxHostLength, " characters"));
  }
  size_t label_length = 0;
  for (char c : host) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '.') {
      if (label_length == 0) {
        return Invalid(subject, absl::StrCat("empty label in host ", Quote(host)));
      }
      label_length = 0;
    } else if (u >= 0x80) {
      return Invalid(subject,
                     "host has non-ASCII characters; give internationalised "
                     "names in punycode (xn--...)");
    } else if (!absl::ascii_isalnum(u) && c != '-' && c != '_') {
      return Invalid(
          subject, absl::StrCat("host has an invalid character ", Quote(absl::string_view(&c, 1))));
    } else if (++label_length > kMaxLabelLength) {
      return Invalid(subject,
                     absl::StrCat("host label longer than ", kMaxLabelLength, " characters"));
    }
    out->push_back(absl::ascii_tolower(u));
  }
  if (label_length == 0) {
    return Invalid(subject, absl::StrCat("empty label in host ", Quote(host)));
  }
  return absl::OkStatus();
}

// Parses a port ("" for none). Returns 0 for the scheme's default port.
absl::StatusOr<int> ParsePort(absl::string_view text, int default_port) {
  if (text.empty()) return 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return Invalid("url", absl::StrCat("port is not a number: ", Quote(text)));
    }
  }
  while (text.size() > 1 && text.front() == '0') text.remove_prefix(1);
  int port = 0;
  if (text.size() <= 5) {
    for (char c : text) port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) {
    return Invalid("url", absl::StrCat("port out of range 1-65535: ", Quote(text)));
  }
  return port == default_port ? 0 : port;
}

}  // namespace

absl::StatusOr<NormalizedUrl> NormalizeUrl(absl::string_view url, const UrlLimits& limits) {
  if (url.empty()) return Invalid("url", "empty");
  if (url.size() > limits.max_length) {
    return Invalid("url",
                   absl::StrCat("longer than ", limits.max_length, " bytes (", url.size(), ")"));
  }
  for (size_t i = 0; i < url.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
      return Invalid("url", absl::StrCat("whitespace at offset ", i));
    }
    if (c < 0x20 || c == 0x7f) {
      return Invalid("url", absl::StrCat("control character at offset ", i));
    }
  }

  // Scheme.
  const size_t colon = FindFirstOf(url, 0, ':', '/', '?', '#');
  if (colon == absl::string_view::npos || url[colon] != ':' || colon == 0) {
    return Invalid("url", "not an absolute URL (no scheme)");
  }
  absl::string_view scheme;
  int default_port;
  if (absl::EqualsIgnoreCase(url.substr(0, colon), "http")) {
    scheme = "http";
    default_port = 80;
  } else if (absl::EqualsIgnoreCase(url.substr(0, colon), "https")) {
    scheme = "https";
    default_port = 443;
  } else {
    return Invalid("url",
                   absl::StrCat("scheme must be http or https, not ", Quote(url.substr(0, colon))));
  }
  if (url.substr(colon + 1, 2) != "//") {
    return Invalid("url", absl::StrCat("missing \"//\" after \"", scheme, ":\""));
  }

  // Authority: host and port.
  const size_t authority_begin = colon + 3;
  size_t authority_end = FindFirstOf(url, authority_begin, '/', '?', '#', '#');
  if (authority_end == absl::string_view::npos) authority_end = url.size();
  const absl::string_view authority = url.substr(authority_begin, authority_end - authority_begin);
  if (absl::StrContains(authority, '@')) {
    return Invalid("url", "user info (user:password@) is not allowed");
  }
  size_t port_colon;
  if (!authority.empty() && authority.front() == '[') {
    const size_t bracket = authority.find(']');
    port_colon = bracket == absl::string_view::npos ? authority.size() : bracket + 1;
    if (port_colon < authority.size() && authority[port_colon] != ':') {
      return Invalid("url", absl::StrCat("malformed IPv6 literal ", Quote(authority)));
    }
  } else {
    port_colon = authority.find(':');
    if (port_colon == absl::string_view::npos) port_colon = authority.size();
  }
  const absl::string_view host = authority.substr(0, port_colon);
  const absl::string_view port_text =
      port_colon < authority.size() ? authority.substr(port_colon + 1) : "";

  NormalizedUrl normalized;
  std::string& spec = normalized.spec_;
  spec.reserve(url.size() + 1);
  spec.append(scheme.data(), scheme.size());
  normalized.scheme_end_ = spec.size();
  spec.append("://");
  normalized.host_begin_ = spec.size();
  if (absl::Status s = AppendHost(host, "url", &spec); !s.ok()) return s;
  normalized.host_end_ = spec.size();
  absl::StatusOr<int> port = ParsePort(port_text, default_port);
  if (!port.ok()) return port.status();
  normalized.port_ = *port;
  if (*port != 0) absl::StrAppend(&spec, ":", *port);

  // Path and query; the fragment is dropped.
  size_t fragment = url.find('#', authority_end);
  if (fragment == absl::string_view::npos) fragment = url.size();
  size_t query = url.find('?', authority_end);
  if (query == absl::string_view::npos || query > fragment) query = fragment;
  normalized.path_begin_ = spec.size();
  spec.push_back('/');
  absl::string_view path = url.substr(authority_end, query - authority_end);
  if (!path.empty()) {
    // The '/' is already there.
    path.remove_prefix(1);
    if (absl::Status s = AppendEscaped(path, authority_end + 1, &spec); !s.ok()) {
      return s;
    }
    const absl::string_view written = absl::string_view(spec).substr(normalized.path_begin_);
    if (HasDotSegment(written)) {
      std::string resolved = RemoveDotSegments(written);
      spec.resize(normalized.path_begin_);
      spec.append(resolved);
    }
  }
  if (query < fragment) {
    if (absl::Status s = AppendEscaped(url.substr(query, fragment - query), query, &spec);
        !s.ok()) {
      return s;
    }
  }
  if (spec.size() > limits.max_length) {
    return Invalid("url", absl::StrCat("longer than ", limits.max_length,
                                       " bytes after normalisation (", spec.size(), ")"));
  }
  return normalized;
}

std::optional<absl::string_view> NormalFormHost(absl::string_view url, const UrlLimits& limits) {
  if (url.empty() || url.size() > limits.max_length) return std::nullopt;
  // The scheme, lower case.
  size_t i;
  int default_port;
  if (absl::StartsWith(url, "https://")) {
    i = 8;
    default_port = 443;
  } else if (absl::StartsWith(url, "http://")) {
    i = 7;
    default_port = 80;
  } else {
    return std::nullopt;
  }
  // The host: lower-case labels of 1-63 letters, digits, '-' and '_',
  // without the trailing dot normalisation drops.
  const size_t host_begin = i;
  size_t label_length = 0;
  for (; i < url.size(); ++i) {
    const char c = url[i];
    if (c == '.') {
      if (label_length == 0) return std::nullopt;
      label_length = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
      if (++label_length > kMaxLabelLength) return std::nullopt;
    } else {
      break;
    }
  }
  const size_t host_end = i;
  if (label_length == 0 || host_end - host_begin > kMaxHostLength) return std::nullopt;
  // A port other than the scheme's default, without leading zeros.
  if (i < url.size() && url[i] == ':') {
    const size_t digits = ++i;
    int port = 0;
    for (; i < url.size() && absl::ascii_isdigit(static_cast<unsigned char>(url[i])); ++i) {
      if (i - digits >= 5) return std::nullopt;
      port = port * 10 + (url[i] - '0');
    }
    if (i == digits || url[digits] == '0' || port > 65535 || port == default_port) {
      return std::nullopt;
    }
  }
  // The path, which the normal form always has, then the query: no byte
  // normalisation would escape, no escape it would decode or upper-case, no
  // fragment, no whitespace or control character, and no dot segment in
  // the path.
  if (i == url.size() || url[i] != '/') return std::nullopt;
  const size_t path_begin = i;
  size_t path_end = url.size();
  for (; i < url.size(); ++i) {
    switch (kNormalPathTable.Of(static_cast<unsigned char>(url[i]))) {
      case NormalPathTable::kKept:
        continue;
      case NormalPathTable::kNotNormal:
        return std::nullopt;
      case NormalPathTable::kQuery:
        if (path_end == url.size()) path_end = i;
        continue;
      case NormalPathTable::kEscape:
        if (i + 2 >= url.size() || !IsUpperHex(url[i + 1]) || !IsUpperHex(url[i + 2]) ||
            IsUnreserved(static_cast<char>(HexValue(url[i + 1]) * 16 + HexValue(url[i + 2])))) {
          return std::nullopt;
        }
        i += 2;
        continue;
    }
  }
  if (HasDotSegment(url.substr(path_begin, path_end - path_begin))) return std::nullopt;
  return url.substr(host_begin, host_end - host_begin);
}

absl::StatusOr<std::string> NormalizeHost(absl::string_view host) {
  std::string out;
  if (absl::Status s = AppendHost(host, "host", &out); !s.ok()) return s;
  return out;
}

}  // namespace cluster
}  // namespace recrawl
