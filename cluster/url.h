// Validation and normalisation of the URLs a shard accepts.
//
// The normalised form is a URL's identity: two spellings of one page must
// map to one record (else its signals and crawls split between two), and the
// host decides politeness and which shard owns the URL. Normalisation
// follows RFC 3986 Sec. 6.2.2 (syntax-based) plus the scheme-based rules for
// http(s), and never guesses:
//
//  * absolute http or https URLs only, at most UrlLimits::max_length bytes
//    before and after normalisation;
//  * scheme and host lower-cased; an empty or default port (80 for http,
//    443 for https) dropped, other ports kept without leading zeros;
//  * the fragment dropped (it never reaches the server);
//  * an empty path becomes "/"; "." and ".." segments are resolved;
//  * percent escapes get upper-case hex digits, escapes of unreserved
//    characters (A-Z a-z 0-9 - . _ ~) are decoded, and bytes that may not
//    appear raw (non-ASCII, " < > \ ^ ` { | }) are escaped; the query is
//    otherwise kept as given (parameters are not reordered);
//  * rejected, with a message naming what is wrong: whitespace or control
//    characters anywhere, user info ("user:pass@"), an empty host, a host
//    with characters outside letters, digits, '-', '_' and '.', an empty or
//    over-long (> 63) host label, a bad port, a malformed percent escape.
//
// Internationalised host names must arrive in their ASCII form (IDNA
// "xn--" punycode labels, as HTTP clients send them): a host with non-ASCII
// bytes is rejected, and punycode labels are checked for the host character
// set and label length but not decoded. Decoding would need an IDNA library
// and buys nothing for identity, since the ASCII form is already canonical.
// IPv4 addresses are kept as written; IPv6 literals ("[::1]") are checked
// for hex digits, ':' and '.' and lower-cased, not compressed.
#ifndef RECRAWL_CLUSTER_URL_H_
#define RECRAWL_CLUSTER_URL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recrawl {
namespace cluster {

inline constexpr size_t kDefaultMaxUrlLength = 2048;

struct UrlLimits {
  size_t max_length = kDefaultMaxUrlLength;
};

// A URL in normal form, with its parts located.
class NormalizedUrl {
 public:
  // The whole URL, e.g. "https://example.com:8443/a?b=1".
  const std::string& spec() const { return spec_; }
  // "http" or "https".
  absl::string_view scheme() const { return Part(0, scheme_end_); }
  // Lower-case host without port, e.g. "example.com" or "[::1]": the key for
  // politeness and sharding (one server machine, whatever the port).
  absl::string_view host() const { return Part(host_begin_, host_end_); }
  // The explicit port, or 0 when the URL uses its scheme's default.
  int port() const { return port_; }
  // From the first '/' to the end: path and query.
  absl::string_view path_and_query() const { return Part(path_begin_, spec_.size()); }

 private:
  friend absl::StatusOr<NormalizedUrl> NormalizeUrl(absl::string_view, const UrlLimits&);
  absl::string_view Part(size_t begin, size_t end) const {
    return absl::string_view(spec_).substr(begin, end - begin);
  }

  std::string spec_;
  size_t scheme_end_ = 0;
  size_t host_begin_ = 0;
  size_t host_end_ = 0;
  size_t path_begin_ = 0;
  int port_ = 0;
};

// Validates and normalises `url`. InvalidArgument names the problem, e.g.
// "url: scheme must be http or https, not \"ftp\"".
absl::StatusOr<NormalizedUrl> NormalizeUrl(absl::string_view url, const UrlLimits& limits = {});

// The host of `url` (NormalizedUrl::host) when `url` is already in normal
// form, i.e. NormalizeUrl(url, limits) would accept it and return it
// unchanged; nullopt otherwise, and for the normal forms the check does not
// cover (IPv6 hosts), where NormalizeUrl decides. One pass over `url`, no
// allocation: for the hot paths (signals, routing), whose URLs mostly come
// in normal form. Thread-safe.
std::optional<absl::string_view> NormalFormHost(absl::string_view url,
                                                const UrlLimits& limits = {});

// Validates and normalises a host given on its own (an operator's
// politeness setting, a URL's politeness group) by the rules that apply to
// a URL's host, e.g. "Example.COM." -> "example.com".
absl::StatusOr<std::string> NormalizeHost(absl::string_view host);

}  // namespace cluster
}  // namespace recrawl

#endif  // RECRAWL_CLUSTER_URL_H_
