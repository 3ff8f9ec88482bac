#include "cluster/url.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace cluster {
namespace {

using ::testing::HasSubstr;

std::string Normal(absl::string_view url) {
  absl::StatusOr<NormalizedUrl> n = NormalizeUrl(url);
  if (!n.ok()) return absl::StrCat("ERROR ", n.status().message());
  return n->spec();
}

// The message of the error NormalizeUrl gives, or "" if it accepts `url`.
std::string Error(absl::string_view url, const UrlLimits& limits = {}) {
  absl::StatusOr<NormalizedUrl> n = NormalizeUrl(url, limits);
  if (n.ok()) return "";
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(n.status().message());
}

TEST(NormalizeUrlTest, LowerCasesSchemeAndHostOnly) {
  EXPECT_EQ(Normal("HTTP://Example.COM/Path?Q=A"), "http://example.com/Path?Q=A");
  EXPECT_EQ(Normal("hTTpS://WWW.example.com/"), "https://www.example.com/");
}

TEST(NormalizeUrlTest, Parts) {
  absl::StatusOr<NormalizedUrl> n = NormalizeUrl("https://Example.com:8443/a/b?c=d#e");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->spec(), "https://example.com:8443/a/b?c=d");
  EXPECT_EQ(n->scheme(), "https");
  EXPECT_EQ(n->host(), "example.com");
  EXPECT_EQ(n->port(), 8443);
  EXPECT_EQ(n->path_and_query(), "/a/b?c=d");

  n = NormalizeUrl("http://example.com");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->port(), 0);
  EXPECT_EQ(n->path_and_query(), "/");
}

TEST(NormalizeUrlTest, Ports) {
  EXPECT_EQ(Normal("http://a.com:80/x"), "http://a.com/x");
  EXPECT_EQ(Normal("https://a.com:443/"), "https://a.com/");
  EXPECT_EQ(Normal("https://a.com:80/"), "https://a.com:80/");
  EXPECT_EQ(Normal("http://a.com:443/"), "http://a.com:443/");
  EXPECT_EQ(Normal("http://a.com:/"), "http://a.com/");
  EXPECT_EQ(Normal("http://a.com:0080/"), "http://a.com/");
  EXPECT_EQ(Normal("http://a.com:08080"), "http://a.com:8080/");
  EXPECT_EQ(Normal("http://a.com:65535/"), "http://a.com:65535/");
}

TEST(NormalizeUrlTest, PathQueryAndFragment) {
  EXPECT_EQ(Normal("http://a.com"), "http://a.com/");
  EXPECT_EQ(Normal("http://a.com?x=1"), "http://a.com/?x=1");
  EXPECT_EQ(Normal("http://a.com/p?q=1#frag"), "http://a.com/p?q=1");
  EXPECT_EQ(Normal("http://a.com#frag?not=query"), "http://a.com/");
  EXPECT_EQ(Normal("http://a.com/p#"), "http://a.com/p");
  // An empty query is kept: RFC 3986 does not make it equal to none.
  EXPECT_EQ(Normal("http://a.com/p?"), "http://a.com/p?");
  EXPECT_EQ(Normal("http://a.com/a?b=c&a=d"), "http://a.com/a?b=c&a=d");
}

TEST(NormalizeUrlTest, PercentEscapes) {
  // Unreserved characters decoded, others upper-cased.
  EXPECT_EQ(Normal("http://a.com/%7euser/%2f%41%2d"), "http://a.com/~user/%2FA-");
  EXPECT_EQ(Normal("http://a.com/?q=%3d%3D"), "http://a.com/?q=%3D%3D");
  // Raw bytes that may not appear are escaped, so both spellings agree.
  EXPECT_EQ(Normal("http://a.com/b\xC3\xBC"
                   "cher"),
            "http://a.com/b%C3%BCcher");
  EXPECT_EQ(Normal("http://a.com/b%c3%bccher"), "http://a.com/b%C3%BCcher");
  EXPECT_EQ(Normal("http://a.com/a|b{c}\\d^`?q=\"<x>\""),
            "http://a.com/a%7Cb%7Bc%7D%5Cd%5E%60?q=%22%3Cx%3E%22");
  // Reserved characters keep their meaning.
  EXPECT_EQ(Normal("http://a.com/a:b;c=d@e!$&'()*+,"), "http://a.com/a:b;c=d@e!$&'()*+,");
}

TEST(NormalizeUrlTest, DotSegments) {
  EXPECT_EQ(Normal("http://a.com/a/b/../c/./d"), "http://a.com/a/c/d");
  EXPECT_EQ(Normal("http://a.com/a/b/.."), "http://a.com/a/");
  EXPECT_EQ(Normal("http://a.com/a/b/."), "http://a.com/a/b/");
  EXPECT_EQ(Normal("http://a.com/../../x"), "http://a.com/x");
  EXPECT_EQ(Normal("http://a.com/.."), "http://a.com/");
  EXPECT_EQ(Normal("http://a.com/a/%2E%2e/b"), "http://a.com/b");
  // Not dot segments.
  EXPECT_EQ(Normal("http://a.com/a/.../b/.c/d."), "http://a.com/a/.../b/.c/d.");
  EXPECT_EQ(Normal("http://a.com/a//b"), "http://a.com/a//b");
  EXPECT_EQ(Normal("http://a.com/a?x=/../y"), "http://a.com/a?x=/../y");
}

TEST(NormalizeUrlTest, Hosts) {
  EXPECT_EQ(Normal("http://Example.com./"), "http://example.com/");
  EXPECT_EQ(Normal("http://192.168.0.1:8080/"), "http://192.168.0.1:8080/");
  EXPECT_EQ(Normal("http://[2001:DB8::1]:8080/"), "http://[2001:db8::1]:8080/");
  EXPECT_EQ(Normal("http://[::FFFF:1.2.3.4]/"), "http://[::ffff:1.2.3.4]/");
  EXPECT_EQ(Normal("http://XN--Bcher-kva.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Normal("http://my_host-1.a.com/"), "http://my_host-1.a.com/");
  EXPECT_EQ(Normal(absl::StrCat("http://", std::string(63, 'a'), ".com/")),
            absl::StrCat("http://", std::string(63, 'a'), ".com/"));

  absl::StatusOr<NormalizedUrl> n = NormalizeUrl("http://[::1]:81/x");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->host(), "[::1]");
  EXPECT_EQ(n->port(), 81);
}

TEST(NormalizeUrlTest, RejectsWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "url: empty"},
      {"example.com/path", "no scheme"},
      {"/relative/path", "no scheme"},
      {":foo", "no scheme"},
      {"ftp://a.com/", "scheme must be http or https, not \"ftp\""},
      {"mailto:x@a.com", "scheme must be http or https"},
      {"http:/a.com", "missing \"//\" after \"http:\""},
      {"http:a.com", "missing \"//\""},
      {"http://a b.com/", "whitespace at offset 8"},
      {" http://a.com/", "whitespace at offset 0"},
      {"http://a.com/\t", "whitespace at offset 13"},
      {"http://a.com/\n", "whitespace"},
      {std::string("http://a.com/\0", 14), "control character at offset 13"},
      {"http://a.com/\x01", "control character"},
      {"http://a.com/\x7f", "control character"},
      {"http://user:pw@a.com/", "user info"},
      {"http://a.com@b.com/", "user info"},
      {"http:///path", "empty host"},
      {"http://:80/", "empty host"},
      {"http://?q", "empty host"},
      {"http://a..com/", "empty label in host"},
      {"http://.a.com/", "empty label"},
      {"http://a.com../", "empty label"},
      {"http://./", "empty label"},
      {"http://b\xC3\xBC"
       "cher.de/",
       "non-ASCII"},
      {"http://a%2Ecom/", "invalid character \"%\""},
      {"http://a,com/", "invalid character \",\""},
      {"http://a.com:http/", "port is not a number"},
      {"http://a.com:8:8/", "port is not a number"},
      {"http://a.com:-1/", "port is not a number"},
      {"http://a.com:65536/", "port out of range"},
      {"http://a.com:0/", "port out of range"},
      {"http://a.com:99999999999999999999999/", "port out of range"},
      {absl::StrCat("http://", std::string(64, 'a'), ".com/"), "host label longer than 63"},
      {absl::StrCat("http://", std::string(60, 'a'), ".", std::string(60, 'b'), ".",
                    std::string(60, 'c'), ".", std::string(60, 'd'), ".", std::string(60, 'e'),
                    ".com/"),
       "host longer than 253"},
      {"http://[::1/", "malformed IPv6 literal"},
      {"http://[::1]x/", "malformed IPv6 literal"},
      {"http://[abc]/", "malformed IPv6 literal"},
      {"http://[]/", "malformed IPv6 literal"},
      {"http://[::g]/", "IPv6 literal has a character"},
      {"http://[fe80::1%25eth0]/", "IPv6 literal has a character"},
      {"http://a.com/%zz", "malformed percent escape at offset 13"},
      {"http://a.com/%4", "malformed percent escape"},
      {"http://a.com/%", "malformed percent escape"},
      {"http://a.com/?q=%g1", "malformed percent escape at offset 16"},
  };
  for (const auto& [url, reason] : cases) {
    EXPECT_THAT(Error(url), HasSubstr(reason)) << "url " << url;
  }
}

TEST(NormalizeUrlTest, LengthLimit) {
  const std::string prefix = "http://a.com/";
  const std::string at_limit = prefix + std::string(kDefaultMaxUrlLength - prefix.size(), 'x');
  EXPECT_EQ(Error(at_limit), "");
  EXPECT_EQ(Error(at_limit + "x"), "url: longer than 2048 bytes (2049)");

  UrlLimits small;
  small.max_length = 20;
  EXPECT_EQ(Error("http://a.com/1234567", small), "");
  EXPECT_THAT(Error("http://a.com/12345678", small), HasSubstr("longer than 20 bytes (21)"));
  // Escaping can lengthen a URL past the limit.
  EXPECT_THAT(Error("http://a.com/\xC3\xBC\xC3\xBC", small),
              HasSubstr("longer than 20 bytes after normalisation (25)"));
}

TEST(NormalizeUrlTest, NormalFormIsAFixedPoint) {
  const std::vector<std::string> urls = {
      "HTTP://Example.COM:80/a/./b/../c?d=%7e%2f#x",
      "https://[::1]:443",
      "http://a.com/b\xC3\xBC%c3%bc?%41=|",
      "http://xn--bcher-kva.example./..",
  };
  for (const std::string& url : urls) {
    const std::string once = Normal(url);
    ASSERT_EQ(once.rfind("ERROR", 0), std::string::npos) << once;
    EXPECT_EQ(Normal(once), once);
  }
}

TEST(NormalFormHostTest, FindsTheHostOfANormalUrl) {
  EXPECT_EQ(NormalFormHost("https://www.example.com/a/b?c=%2F&d"), "www.example.com");
  EXPECT_EQ(NormalFormHost("http://a-b_c.d9.com:8443/"), "a-b_c.d9.com");
  EXPECT_EQ(NormalFormHost("http://10.0.0.1/%C3%BC?q=..%20"), "10.0.0.1");
  EXPECT_EQ(NormalFormHost("http://a.com/b/.x/..y?/../"), "a.com");
}

TEST(NormalFormHostTest, DeclinesWhatNormalisationWouldChangeOrReject) {
  for (const char* url : {
           "",
           "HTTP://a.com/",
           "http://A.com/",
           "http://a.com",
           "http://a.com?q",
           "http://a.com./",
           "http://a..com/",
           "http://.a.com/",
           "http://a.com:80/",
           "https://a.com:443/",
           "http://a.com:080/",
           "http://a.com:/",
           "http://a.com:65536/",
           "http://a.com:123456/",
           "http://u@a.com/",
           "http://a.com/#f",
           "http://a.com/a b",
           "http://a.com/\x7f",
           "http://a.com/\xC3\xBC",
           "http://a.com/|",
           "http://a.com/%7E",
           "http://a.com/%2f",
           "http://a.com/%4",
           "http://a.com/%G1",
           "http://a.com/./",
           "http://a.com/a/..",
           "http://a.com/a/../b?c",
           "http://[::1]/",
           "ftp://a.com/",
           "http:/a.com/",
           "http://a.com\\b/",
       }) {
    EXPECT_EQ(NormalFormHost(url), std::nullopt) << url;
  }
  const std::string label(64, 'a');
  EXPECT_EQ(NormalFormHost("http://" + label + ".com/"), std::nullopt);
  EXPECT_EQ(NormalFormHost("http://" + label.substr(1) + ".com/"), label.substr(1) + ".com");
  UrlLimits small;
  small.max_length = 20;
  EXPECT_EQ(NormalFormHost("http://a.com/1234567", small), "a.com");
  EXPECT_EQ(NormalFormHost("http://a.com/12345678", small), std::nullopt);
}

// NormalFormHost says "normal" only where NormalizeUrl agrees, on URLs
// pieced together from the parts its rules are about; and it recognises
// what NormalizeUrl makes (IPv6 hosts aside).
TEST(NormalFormHostTest, AgreesWithNormalizeUrl) {
  const std::vector<std::string> parts = {
      "http://", "https://", "HTTP://", "http:/", "a",   "Z",    "9",   "-",   "_",
      ".",       "..",       "/",       "/",      "/",   "%",    "%2E", "%2e", "%41",
      "%2F",     "%2f",      "%C3",     "%7E",    "%20", ":",    "80",  "443", "0",
      "8080",    "65536",    "?",       "#",      " ",   "\xC3", "|",   "@",   "[",
      "]",       "::1",      "=&",      "\t",     "~",
  };
  std::mt19937 rng(20);
  std::uniform_int_distribution<size_t> pick(0, parts.size() - 1);
  std::uniform_int_distribution<int> length(1, 14);
  int normal = 0, normalized_ok = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    std::string url = trial % 2 == 0 ? "http://" : "";
    for (int n = length(rng); n > 0; --n) url += parts[pick(rng)];
    const std::optional<absl::string_view> host = NormalFormHost(url);
    const absl::StatusOr<NormalizedUrl> normalized = NormalizeUrl(url);
    if (host.has_value()) {
      ++normal;
      ASSERT_TRUE(normalized.ok()) << url << ": " << normalized.status();
      ASSERT_EQ(normalized->spec(), url);
      ASSERT_EQ(normalized->host(), *host) << url;
    }
    if (normalized.ok() && normalized->host().front() != '[') {
      ++normalized_ok;
      ASSERT_EQ(NormalFormHost(normalized->spec()), normalized->host())
          << url << " -> " << normalized->spec();
    }
  }
  // Both directions were tested on many URLs.
  EXPECT_GT(normal, 300);
  EXPECT_GT(normalized_ok, 3000);
}

TEST(NormalizeHostTest, SameRulesAsUrlHosts) {
  EXPECT_EQ(*NormalizeHost("Example.COM."), "example.com");
  EXPECT_EQ(*NormalizeHost("[::1]"), "[::1]");
  EXPECT_EQ(*NormalizeHost("xn--bcher-kva.example"), "xn--bcher-kva.example");

  absl::StatusOr<std::string> bad = NormalizeHost("");
  EXPECT_EQ(bad.status().message(), "host: empty host");
  bad = NormalizeHost("a.com:80");
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid character \":\""));
  bad = NormalizeHost(" a.com");
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid character \" \""));
  bad = NormalizeHost("a\nb");
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid character \"\\n\""));
  bad = NormalizeHost("a..b");
  EXPECT_THAT(bad.status().message(), HasSubstr("empty label"));
}

}  // namespace
}  // namespace cluster
}  // namespace recrawl
