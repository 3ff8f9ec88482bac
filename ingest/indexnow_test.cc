#include "ingest/indexnow.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kKey[] = "abcdef12-3456";

std::string Body(const std::string& host, const std::string& key,
                 const std::vector<std::string>& urls, const std::string& location = "") {
  std::string body = absl::StrCat("{\"host\":\"", host, "\",\"key\":\"", key, "\"");
  if (!location.empty()) absl::StrAppend(&body, ",\"keyLocation\":\"", location, "\"");
  absl::StrAppend(&body, ",\"urlList\":[\"", absl::StrJoin(urls, "\",\""), "\"]}");
  return body;
}

void ExpectRejected(const IndexNowParse& p, IndexNowAnswer answer, const std::string& field) {
  EXPECT_EQ(p.answer, answer) << p.message;
  EXPECT_NE(p.message.find(field), std::string::npos) << p.message;
}

TEST(IndexNowParseTest, PostNormalisesAndDeduplicates) {
  const IndexNowParse p = ParseIndexNowPost(Body(
      "WWW.Example.com", kKey,
      {"https://www.example.com/a", "HTTPS://www.example.COM/a#x", "http://www.example.com/b"}));
  ASSERT_EQ(p.answer, IndexNowAnswer::kOk) << p.message;
  EXPECT_EQ(p.submission.urls,
            (std::vector<std::string>{"https://www.example.com/a", "http://www.example.com/b"}));
  EXPECT_EQ(p.submission.key_file.host, "www.example.com");
  EXPECT_EQ(p.submission.key_file.url, absl::StrCat("https://www.example.com/", kKey, ".txt"));
  EXPECT_EQ(p.submission.key_file.scope, "/");
}

TEST(IndexNowParseTest, GetTakesTheUrlsHost) {
  const IndexNowParse p = ParseIndexNowGet("https://example.org/x?y=1", kKey, "");
  ASSERT_EQ(p.answer, IndexNowAnswer::kOk) << p.message;
  EXPECT_EQ(p.submission.urls, std::vector<std::string>{"https://example.org/x?y=1"});
  EXPECT_EQ(p.submission.key_file.host, "example.org");
}

TEST(IndexNowParseTest, MalformedRequestsAre400) {
  ExpectRejected(ParseIndexNowPost("{not json"), IndexNowAnswer::kBadRequest, "JSON");
  ExpectRejected(ParseIndexNowPost("{\"host\":{\"a\":1},\"key\":\"abcdefgh\"}"),
                 IndexNowAnswer::kBadRequest, "JSON");
  // protobuf's parser takes a lone string for a list of one.
  ExpectRejected(ParseIndexNowPost("{\"host\":\"a.com\",\"key\":\"abcdefgh\",\"urlList\":\"x\"}"),
                 IndexNowAnswer::kBadRequest, "urlList[0]");
  ExpectRejected(ParseIndexNowPost(Body("", kKey, {"https://a.com/"})), IndexNowAnswer::kBadRequest,
                 "host");
  ExpectRejected(ParseIndexNowPost("{\"host\":\"a.com\",\"key\":\"abcdefgh\"}"),
                 IndexNowAnswer::kBadRequest, "urlList");
  ExpectRejected(ParseIndexNowPost(Body("a.com", "", {"https://a.com/"})),
                 IndexNowAnswer::kBadRequest, "key");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://a.com/", "ftp://a.com/"})),
                 IndexNowAnswer::kBadRequest, "urlList[1]");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://a.com/"}, "not a url")),
                 IndexNowAnswer::kBadRequest, "keyLocation");
  ExpectRejected(ParseIndexNowGet("", kKey, ""), IndexNowAnswer::kBadRequest, "url");
  ExpectRejected(ParseIndexNowGet("https://a.com/", "", ""), IndexNowAnswer::kBadRequest, "key");
  ExpectRejected(ParseIndexNowGet("a.com/x", kKey, ""), IndexNowAnswer::kBadRequest, "url");
}

TEST(IndexNowParseTest, AtMostTenThousandUrls) {
  std::vector<std::string> urls;
  for (int i = 0; i < 10000; ++i) urls.push_back(absl::StrCat("https://a.com/", i));
  const IndexNowParse ok = ParseIndexNowPost(Body("a.com", kKey, urls));
  ASSERT_EQ(ok.answer, IndexNowAnswer::kOk) << ok.message;
  EXPECT_EQ(ok.submission.urls.size(), 10000u);
  urls.push_back("https://a.com/one-too-many");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, urls)), IndexNowAnswer::kBadRequest,
                 "10001");
}

TEST(IndexNowParseTest, KeySyntaxIs422) {
  for (const std::string& key :
       {std::string("short"), std::string(129, 'a'), std::string("abcdefgh_"),
        std::string("abc defgh"), std::string("abcdéfgh")}) {
    ExpectRejected(ParseIndexNowPost(Body("a.com", key, {"https://a.com/"})),
                   IndexNowAnswer::kUnprocessable, "key");
  }
  EXPECT_EQ(ParseIndexNowPost(Body("a.com", std::string(128, 'Z'), {"https://a.com/"})).answer,
            IndexNowAnswer::kOk);
  EXPECT_EQ(ParseIndexNowPost(Body("a.com", "a-b-c-d-", {"https://a.com/"})).answer,
            IndexNowAnswer::kOk);
}

TEST(IndexNowParseTest, UrlOffTheHostIs422) {
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://a.com/", "https://b.com/"})),
                 IndexNowAnswer::kUnprocessable, "urlList[1]");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://www.a.com/"})),
                 IndexNowAnswer::kUnprocessable, "urlList[0]");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://a.com/"}, "https://b.com/k.txt")),
                 IndexNowAnswer::kUnprocessable, "keyLocation");
}

TEST(IndexNowParseTest, KeyLocationCoversItsFolder) {
  const std::string location = "https://a.com/news/key.txt";
  const IndexNowParse p = ParseIndexNowPost(
      Body("a.com", kKey, {"https://a.com/news/1", "https://a.com/news/x/2"}, location));
  ASSERT_EQ(p.answer, IndexNowAnswer::kOk) << p.message;
  EXPECT_EQ(p.submission.key_file.url, location);
  EXPECT_EQ(p.submission.key_file.scope, "/news/");
  ExpectRejected(ParseIndexNowPost(Body("a.com", kKey, {"https://a.com/newsy"}, location)),
                 IndexNowAnswer::kUnprocessable, "urlList[0]");
  ExpectRejected(ParseIndexNowGet("https://a.com/other?news/", kKey, location),
                 IndexNowAnswer::kUnprocessable, "url");
}

class DecideTest : public ::testing::Test {
 protected:
  IndexNowSubmission Submission(const std::string& url) {
    const IndexNowParse p = ParseIndexNowGet(url, kKey, "");
    EXPECT_EQ(p.answer, IndexNowAnswer::kOk) << p.message;
    return p.submission;
  }
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  KeyCache cache_;
};

TEST_F(DecideTest, UnknownKeyIs202UntilChecked) {
  const IndexNowSubmission s = Submission("https://a.com/1");
  IndexNowDecision d = DecideIndexNow(s, &cache_, nullptr, now_);
  EXPECT_EQ(d.answer, IndexNowAnswer::kAccepted);
  EXPECT_TRUE(d.verify);
  EXPECT_FALSE(d.forward);
  // A second request while the check is in flight does not start another.
  d = DecideIndexNow(Submission("https://a.com/2"), &cache_, nullptr, now_);
  EXPECT_EQ(d.answer, IndexNowAnswer::kAccepted);
  EXPECT_FALSE(d.verify);
  EXPECT_EQ(cache_.held_urls(), 2u);
  // The check proves the key: the held URLs are handed back, later ones pass.
  EXPECT_EQ(cache_.Complete(s.key_file, true, now_),
            (std::vector<std::string>{"https://a.com/1", "https://a.com/2"}));
  d = DecideIndexNow(Submission("https://a.com/3"), &cache_, nullptr, now_);
  EXPECT_EQ(d.answer, IndexNowAnswer::kOk);
  EXPECT_TRUE(d.forward);
  EXPECT_EQ(cache_.held_urls(), 0u);
}

TEST_F(DecideTest, FailedKeyIs403UntilItExpires) {
  const IndexNowSubmission s = Submission("https://a.com/1");
  ASSERT_TRUE(DecideIndexNow(s, &cache_, nullptr, now_).verify);
  EXPECT_TRUE(cache_.Complete(s.key_file, false, now_).empty());
  IndexNowDecision d = DecideIndexNow(s, &cache_, nullptr, now_ + absl::Minutes(1));
  EXPECT_EQ(d.answer, IndexNowAnswer::kForbidden);
  EXPECT_NE(d.message.find("key"), std::string::npos);
  d = DecideIndexNow(s, &cache_, nullptr, now_ + absl::Minutes(11));
  EXPECT_EQ(d.answer, IndexNowAnswer::kAccepted);
  EXPECT_TRUE(d.verify);
}

TEST_F(DecideTest, VerifiedKeyExpires) {
  const IndexNowSubmission s = Submission("https://a.com/1");
  DecideIndexNow(s, &cache_, nullptr, now_);
  cache_.Complete(s.key_file, true, now_);
  EXPECT_EQ(DecideIndexNow(s, &cache_, nullptr, now_ + absl::Hours(23)).answer,
            IndexNowAnswer::kOk);
  const IndexNowDecision d = DecideIndexNow(s, &cache_, nullptr, now_ + absl::Hours(25));
  EXPECT_EQ(d.answer, IndexNowAnswer::kAccepted);
  EXPECT_TRUE(d.verify);
}

TEST_F(DecideTest, StaleCheckStartsAgain) {
  const IndexNowSubmission s = Submission("https://a.com/1");
  ASSERT_TRUE(DecideIndexNow(s, &cache_, nullptr, now_).verify);
  EXPECT_FALSE(DecideIndexNow(s, &cache_, nullptr, now_ + absl::Minutes(1)).verify);
  EXPECT_TRUE(DecideIndexNow(s, &cache_, nullptr, now_ + absl::Minutes(3)).verify);
}

TEST_F(DecideTest, RegisteredKeyIs200ForTheWholeHost) {
  ASSERT_TRUE(cache_.Register("A.com", kKey).ok());
  const IndexNowParse p = ParseIndexNowPost(
      Body("a.com", kKey, {"https://a.com/anywhere"}, "https://a.com/news/key.txt"));
  ASSERT_EQ(p.answer, IndexNowAnswer::kUnprocessable);  // outside the folder: still 422
  const IndexNowDecision d = DecideIndexNow(Submission("https://a.com/x"), &cache_, nullptr, now_);
  EXPECT_EQ(d.answer, IndexNowAnswer::kOk);
  EXPECT_TRUE(d.forward);
  EXPECT_FALSE(d.verify);
  ASSERT_EQ(cache_.Registered().size(), 1u);
  EXPECT_EQ(cache_.Registered()[0].host, "a.com");
  EXPECT_TRUE(cache_.Unregister("a.com", kKey));
  EXPECT_EQ(DecideIndexNow(Submission("https://a.com/x"), &cache_, nullptr, now_).answer,
            IndexNowAnswer::kAccepted);
}

TEST_F(DecideTest, RateLimitedHostIs429) {
  HostRateLimiter limiter({/*rate=*/1.0, /*burst=*/2.0});
  const IndexNowSubmission s = Submission("https://a.com/1");
  cache_.Register("a.com", kKey).IgnoreError();
  EXPECT_EQ(DecideIndexNow(s, &cache_, &limiter, now_).answer, IndexNowAnswer::kOk);
  EXPECT_EQ(DecideIndexNow(s, &cache_, &limiter, now_).answer, IndexNowAnswer::kOk);
  const IndexNowDecision d = DecideIndexNow(s, &cache_, &limiter, now_);
  EXPECT_EQ(d.answer, IndexNowAnswer::kTooManyRequests);
  EXPECT_FALSE(d.forward);
  // Another host has its own bucket; the first refills at `rate`.
  cache_.Register("b.com", kKey).IgnoreError();
  EXPECT_EQ(DecideIndexNow(Submission("https://b.com/"), &cache_, &limiter, now_).answer,
            IndexNowAnswer::kOk);
  EXPECT_EQ(DecideIndexNow(s, &cache_, &limiter, now_ + absl::Seconds(1)).answer,
            IndexNowAnswer::kOk);
}

TEST_F(DecideTest, FullCacheIs429) {
  KeyCacheOptions options;
  options.max_held_urls = 1;
  KeyCache small(options);
  EXPECT_EQ(DecideIndexNow(Submission("https://a.com/1"), &small, nullptr, now_).answer,
            IndexNowAnswer::kAccepted);
  EXPECT_EQ(DecideIndexNow(Submission("https://a.com/2"), &small, nullptr, now_).answer,
            IndexNowAnswer::kTooManyRequests);
  options.max_held_urls = 100;
  options.max_entries = 1;
  KeyCache one(options);
  EXPECT_EQ(DecideIndexNow(Submission("https://a.com/1"), &one, nullptr, now_).answer,
            IndexNowAnswer::kAccepted);
  EXPECT_EQ(DecideIndexNow(Submission("https://b.com/1"), &one, nullptr, now_).answer,
            IndexNowAnswer::kTooManyRequests);
}

TEST(KeyCacheTest, RegisterValidates) {
  KeyCache cache;
  absl::Status s = cache.Register("a.com", "bad key").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("key"), std::string::npos);
  s = cache.Register("bad host!", kKey).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("host"), std::string::npos);
  EXPECT_FALSE(cache.Unregister("a.com", kKey));
}

TEST(KeyCacheTest, KeyFileProves) {
  EXPECT_TRUE(KeyFileProves("abcdefgh", "abcdefgh"));
  EXPECT_TRUE(KeyFileProves("\xEF\xBB\xBF abcdefgh\r\n", "abcdefgh"));
  EXPECT_FALSE(KeyFileProves("abcdefgh1", "abcdefgh"));
  EXPECT_FALSE(KeyFileProves("<html>abcdefgh</html>", "abcdefgh"));
  EXPECT_FALSE(KeyFileProves("", ""));
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
