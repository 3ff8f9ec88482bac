#include "ingest/feeds/sitemap_poll.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/feeds/gzip.h"

namespace recrawl {
namespace feeds {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

double UnixSeconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

// A urlset of (path, lastmod) on https://e.com; an empty lastmod leaves it out.
std::string Urlset(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string xml = R"(<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">)";
  for (const auto& [path, lastmod] : entries) {
    absl::StrAppend(&xml, "<url><loc>https://e.com", path, "</loc>");
    if (!lastmod.empty()) absl::StrAppend(&xml, "<lastmod>", lastmod, "</lastmod>");
    xml += "</url>";
  }
  return xml + "</urlset>";
}

SitemapResponse Ok(std::string body, std::string etag = "") {
  SitemapResponse response;
  response.status = 200;
  response.body = std::move(body);
  response.etag = std::move(etag);
  return response;
}

std::vector<std::string> Urls(const SitemapPollResult& result) {
  std::vector<std::string> urls;
  for (const Signal& signal : result.signals) urls.push_back(signal.url());
  return urls;
}

std::vector<std::string> FetchUrls(const std::vector<SitemapFetch>& fetches) {
  std::vector<std::string> urls;
  for (const SitemapFetch& fetch : fetches) urls.push_back(fetch.url);
  return urls;
}

class SitemapPollTest : public ::testing::Test {
 protected:
  SitemapPollTest() : registered_(Utc(2024, 6, 1, 12)) {
    options_.poll_interval = absl::Hours(1);
    options_.error_backoff = absl::Minutes(5);
    options_.max_error_backoff = absl::Minutes(30);
    options_.max_clock_skew = absl::Minutes(5);
  }

  // Registers https://e.com/sitemap.xml at registered_.
  void Start() {
    poller_ = std::make_unique<SitemapPoller>(options_);
    ASSERT_TRUE(poller_->Register("https://E.com/sitemap.xml", registered_).ok());
  }

  // Hands out the sitemap's fetch at `now` and reports `response`.
  SitemapPollResult Poll(absl::Time now, const SitemapResponse& response,
                         const std::string& url = "https://e.com/sitemap.xml") {
    std::vector<SitemapFetch> due = poller_->NextFetches(now);
    bool found = false;
    for (const SitemapFetch& fetch : due) found |= fetch.url == url;
    EXPECT_TRUE(found) << url << " not due at " << now;
    return poller_->OnFetched(url, response, now);
  }

  SitemapPollOptions options_;
  absl::Time registered_;
  std::unique_ptr<SitemapPoller> poller_;
};

TEST_F(SitemapPollTest, FirstPollRecordsAndSignalsOnlyChangesAfterRegistration) {
  Start();
  const absl::Time now = registered_ + absl::Minutes(1);
  SitemapPollResult result = Poll(
      now, Ok(Urlset({{"/old", "2024-01-01"}, {"/new", "2024-06-01T12:00:30Z"}, {"/none", ""}})));
  EXPECT_THAT(result.errors, IsEmpty());
  EXPECT_THAT(Urls(result), ElementsAre("https://e.com/new"));
  EXPECT_EQ(result.signals[0].time(), UnixSeconds(Utc(2024, 6, 1, 12, 0, 30)));
  EXPECT_EQ(result.signals[0].source(), SIGNAL_SOURCE_SITEMAP);
  EXPECT_EQ(result.entries, 3u);
  EXPECT_EQ(result.no_lastmod, 1u);
  EXPECT_EQ(poller_->TrackedUrls(), 2u);
}

TEST_F(SitemapPollTest, ForwardMoveSignalsOnceUnchangedAndBackwardsNothing) {
  Start();
  absl::Time now = registered_;
  EXPECT_THAT(Poll(now, Ok(Urlset({{"/a", "2024-05-01"}, {"/b", "2024-05-01"}}))).signals,
              IsEmpty());
  now += absl::Hours(1);
  SitemapPollResult result =
      Poll(now, Ok(Urlset({{"/a", "2024-06-01T12:30:00Z"}, {"/b", "2024-05-01"}})));
  EXPECT_THAT(Urls(result), ElementsAre("https://e.com/a"));
  EXPECT_EQ(result.signals[0].time(), UnixSeconds(Utc(2024, 6, 1, 12, 30)));
  now += absl::Hours(1);
  EXPECT_THAT(Poll(now, Ok(Urlset({{"/a", "2024-06-01T12:30:00Z"}, {"/b", "2024-05-01"}}))).signals,
              IsEmpty());
  // Backwards, then forward again to the same lastmod: nothing.
  now += absl::Hours(1);
  EXPECT_THAT(Poll(now, Ok(Urlset({{"/a", "2024-05-15"}}))).signals, IsEmpty());
  now += absl::Hours(1);
  EXPECT_THAT(Poll(now, Ok(Urlset({{"/a", "2024-06-01T12:30:00Z"}}))).signals, IsEmpty());
}

TEST_F(SitemapPollTest, NotModifiedChangesNothingAndValidatorsGoBack) {
  Start();
  absl::Time now = registered_;
  SitemapResponse first = Ok(Urlset({{"/a", "2024-05-01"}}), "\"v1\"");
  first.last_modified = "Sat, 01 Jun 2024 11:00:00 GMT";
  Poll(now, first);
  now += absl::Hours(1);
  std::vector<SitemapFetch> due = poller_->NextFetches(now);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].if_none_match, "\"v1\"");
  EXPECT_EQ(due[0].if_modified_since, "Sat, 01 Jun 2024 11:00:00 GMT");
  SitemapResponse not_modified;
  not_modified.status = 304;
  SitemapPollResult result = poller_->OnFetched(due[0].url, not_modified, now);
  EXPECT_TRUE(result.not_modified);
  EXPECT_THAT(result.signals, IsEmpty());
  EXPECT_THAT(result.errors, IsEmpty());
  EXPECT_EQ(poller_->TrackedUrls(), 1u);
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Hours(1));
}

TEST_F(SitemapPollTest, FutureLastmodIsNotTrustedNorRecorded) {
  Start();
  absl::Time now = registered_ + absl::Hours(1);
  SitemapPollResult result =
      Poll(now, Ok(Urlset({{"/far", "2024-06-02"},
                           {"/near", "2024-06-01T13:03:00Z"},  // within the 5 min skew
                           {"/past", "2024-06-01T12:10:00Z"}})));
  EXPECT_THAT(Urls(result), ElementsAre("https://e.com/near", "https://e.com/past"));
  // Clamped to `now`, as the shard clamps.
  EXPECT_EQ(result.signals[0].time(), UnixSeconds(now));
  EXPECT_EQ(result.future_lastmods, 1u);
  EXPECT_EQ(poller_->TrackedUrls(), 2u);
  // The near one is not signalled again once its lastmod is in the past.
  now += absl::Hours(1);
  EXPECT_THAT(Poll(now, Ok(Urlset({{"/near", "2024-06-01T13:03:00Z"}}))).signals, IsEmpty());
}

TEST_F(SitemapPollTest, GzipBodyAndGzipBomb) {
  Start();
  absl::Time now = registered_;
  SitemapPollResult result = Poll(now, Ok(DeflateGzip(Urlset({{"/a", "2024-06-01T12:00:01Z"}}))));
  EXPECT_THAT(result.errors, IsEmpty());
  EXPECT_THAT(Urls(result), ElementsAre("https://e.com/a"));

  now += absl::Hours(1);
  result = Poll(now, Ok(DeflateGzip(std::string(60 << 20, ' '))));
  ASSERT_FALSE(result.errors.empty());
  EXPECT_EQ(result.errors[0].code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(result.errors[0].message()),
              HasSubstr("sitemap https://e.com/sitemap.xml: body: gzip inflates to more than"));
  // The previous state stays.
  EXPECT_EQ(poller_->TrackedUrls(), 1u);
}

TEST_F(SitemapPollTest, ErrorsBackOffAndKeepState) {
  Start();
  absl::Time now = registered_;
  Poll(now, Ok(Urlset({{"/a", "2024-05-01"}}), "\"v1\""));
  now += absl::Hours(1);
  SitemapResponse unavailable;
  unavailable.status = 503;
  SitemapPollResult result = Poll(now, unavailable);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(std::string(result.errors[0].message()), HasSubstr("HTTP status 503"));
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Minutes(5));
  now += absl::Minutes(5);
  Poll(now, Ok("not xml at all"));
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Minutes(10));
  now += absl::Minutes(10);
  EXPECT_EQ(poller_
                ->OnFetchFailed("https://e.com/sitemap.xml",
                                absl::DeadlineExceededError("timed out"), now)
                .errors[0]
                .code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Minutes(20));
  now += absl::Minutes(20);
  Poll(now, unavailable);
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Minutes(30));  // at most max_error_backoff
  std::vector<SitemapFileInfo> files = poller_->Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].consecutive_errors, 4);
  EXPECT_THAT(files[0].last_error, HasSubstr("503"));
  EXPECT_EQ(files[0].tracked_urls, 1u);
  // Success resets; the ETag of the last success still goes out.
  now += absl::Minutes(30);
  std::vector<SitemapFetch> due = poller_->NextFetches(now);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].if_none_match, "\"v1\"");
  SitemapResponse not_modified;
  not_modified.status = 304;
  poller_->OnFetched(due[0].url, not_modified, now);
  EXPECT_EQ(poller_->Files()[0].consecutive_errors, 0);
  EXPECT_EQ(poller_->NextFetchTime(), now + absl::Hours(1));
}

TEST_F(SitemapPollTest, InFlightFetchesAreNotHandedOutTwiceUntilTheTimeout) {
  Start();
  EXPECT_EQ(poller_->NextFetches(registered_).size(), 1u);
  EXPECT_THAT(poller_->NextFetches(registered_ + absl::Minutes(1)), IsEmpty());
  EXPECT_EQ(poller_->NextFetches(registered_ + options_.in_flight_timeout).size(), 1u);
}

TEST_F(SitemapPollTest, IndexExpandsToSameHostChildren) {
  Start();
  absl::Time now = registered_;
  const std::string index = R"(<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://e.com/s1.xml</loc></sitemap>
      <sitemap><loc>https://e.com/s2.xml.gz</loc></sitemap>
      <sitemap><loc>https://e.com/s1.xml</loc></sitemap>
      <sitemap><loc>https://evil.example/s3.xml</loc></sitemap>
      <sitemap><loc>ftp://e.com/s4.xml</loc></sitemap>
    </sitemapindex>)";
  SitemapPollResult result = Poll(now, Ok(index));
  EXPECT_EQ(result.children_added, 2u);
  EXPECT_EQ(result.off_host, 1u);
  EXPECT_EQ(result.bad_urls, 1u);
  EXPECT_EQ(result.errors.size(), 2u);
  EXPECT_THAT(FetchUrls(poller_->NextFetches(now)),
              testing::UnorderedElementsAre("https://e.com/s1.xml", "https://e.com/s2.xml.gz"));
  EXPECT_THAT(Urls(poller_->OnFetched("https://e.com/s1.xml",
                                      Ok(Urlset({{"/a", "2024-06-01T12:00:01Z"}})), now)),
              ElementsAre("https://e.com/a"));
  EXPECT_THAT(
      Urls(poller_->OnFetched("https://e.com/s2.xml.gz",
                              Ok(DeflateGzip(Urlset({{"/b", "2024-06-01T12:00:02Z"}}))), now)),
      ElementsAre("https://e.com/b"));
  // A nested index is not followed.
  now += absl::Hours(1);
  poller_->NextFetches(now);
  result = poller_->OnFetched("https://e.com/s1.xml", Ok(index), now);
  ASSERT_FALSE(result.errors.empty());
  EXPECT_THAT(std::string(result.errors[0].message()), HasSubstr("not followed"));
  // The index drops s2: its state goes.
  result = poller_->OnFetched("https://e.com/sitemap.xml",
                              Ok(R"(<sitemapindex><sitemap><loc>https://e.com/s1.xml</loc>
                                    </sitemap></sitemapindex>)"),
                              now);
  EXPECT_EQ(result.children_dropped, 1u);
  EXPECT_EQ(result.children_added, 0u);
  std::vector<SitemapFileInfo> files = poller_->Files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].url, "https://e.com/s1.xml");
  EXPECT_EQ(files[0].parent, "https://e.com/sitemap.xml");
  EXPECT_EQ(files[1].children, 1u);
  EXPECT_EQ(files[1].kind, SitemapKind::kSitemapIndex);
  EXPECT_EQ(poller_->OnFetched("https://e.com/s2.xml.gz", Ok(Urlset({})), now).errors[0].code(),
            absl::StatusCode::kNotFound);
  // Unregistering the index drops its children.
  EXPECT_TRUE(poller_->Unregister("https://e.com/sitemap.xml").ok());
  EXPECT_THAT(poller_->Files(), IsEmpty());
  EXPECT_EQ(poller_->NextFetchTime(), absl::InfiniteFuture());
}

TEST_F(SitemapPollTest, OtherHostsWhenAllowed) {
  options_.allow_other_hosts = true;
  Start();
  SitemapPollResult result = Poll(registered_, Ok(R"(<urlset><url><loc>https://cdn.e.com/x</loc>
                                <lastmod>2024-06-01T12:00:01Z</lastmod></url></urlset>)"));
  EXPECT_THAT(Urls(result), ElementsAre("https://cdn.e.com/x"));
}

TEST_F(SitemapPollTest, OffHostEntriesSignalNothing) {
  Start();
  SitemapPollResult result = Poll(registered_, Ok(R"(<urlset><url><loc>https://other.com/x</loc>
                                <lastmod>2024-06-01T12:00:01Z</lastmod></url></urlset>)"));
  EXPECT_THAT(result.signals, IsEmpty());
  EXPECT_EQ(result.off_host, 1u);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(std::string(result.errors[0].message()), HasSubstr("is not on host e.com"));
}

TEST_F(SitemapPollTest, RegistrationErrors) {
  Start();
  absl::Status status = poller_->Register("not a url", registered_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("sitemap url"));
  EXPECT_TRUE(poller_->Register("https://e.com/sitemap.xml", registered_).ok());
  EXPECT_EQ(poller_->Files().size(), 1u);
  EXPECT_EQ(poller_->Unregister("https://e.com/other.xml").code(), absl::StatusCode::kNotFound);
}

TEST_F(SitemapPollTest, RedirectStatusIsAnError) {
  Start();
  SitemapResponse moved;
  moved.status = 301;
  EXPECT_EQ(Poll(registered_, moved).errors[0].code(), absl::StatusCode::kUnavailable);
}

TEST_F(SitemapPollTest, RestoredStateSignalsOnlyWhatMovedSince) {
  Start();
  absl::Time now = registered_ + absl::Minutes(1);
  const std::string index = R"(<sitemapindex><sitemap><loc>https://e.com/s1.xml</loc>
                               </sitemap></sitemapindex>)";
  Poll(now, Ok(index, "\"i1\""));
  EXPECT_THAT(Urls(Poll(now,
                        Ok(Urlset({{"/a", "2024-06-01T12:00:01Z"}, {"/b", "2024-06-01T12:00:02Z"}}),
                           "\"s1\""),
                        "https://e.com/s1.xml")),
              ElementsAre("https://e.com/a", "https://e.com/b"));

  std::vector<SitemapFileState> states = poller_->FileStates();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].url, "https://e.com/sitemap.xml");  // the index before its child
  EXPECT_EQ(states[0].registered_at, registered_);
  EXPECT_EQ(states[1].parent, "https://e.com/sitemap.xml");
  EXPECT_EQ(states[1].etag, "\"s1\"");
  EXPECT_EQ(states[1].lastmods.size(), 2u);

  // A restart later: everything due at once, with its validators.
  now += absl::Hours(3);
  SitemapPoller restored(options_);
  for (SitemapFileState& state : states) ASSERT_TRUE(restored.RestoreFile(state, now).ok());
  std::vector<SitemapFetch> due = restored.NextFetches(now);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].url, "https://e.com/s1.xml");
  EXPECT_EQ(due[0].if_none_match, "\"s1\"");
  EXPECT_EQ(due[1].if_none_match, "\"i1\"");
  std::vector<SitemapFileInfo> files = restored.Files();
  EXPECT_EQ(files[1].children, 1u);
  EXPECT_EQ(files[1].kind, SitemapKind::kSitemapIndex);
  SitemapPollResult result = restored.OnFetched(
      "https://e.com/s1.xml",
      Ok(Urlset({{"/a", "2024-06-01T12:00:01Z"}, {"/b", "2024-06-01T14:00:00Z"}, {"/c", ""}})),
      now);
  EXPECT_THAT(Urls(result), ElementsAre("https://e.com/b"));
  // Unregistering the restored index drops its restored child.
  EXPECT_TRUE(restored.Unregister("https://e.com/sitemap.xml").ok());
  EXPECT_THAT(restored.Files(), IsEmpty());
}

TEST_F(SitemapPollTest, RestoreRefusesBadState) {
  SitemapPoller poller(options_);
  SitemapFileState state;
  state.url = "ftp://e.com/s.xml";
  EXPECT_EQ(poller.RestoreFile(state, registered_).code(), absl::StatusCode::kInvalidArgument);
  state.url = "https://e.com/child.xml";
  state.parent = "https://e.com/sitemap.xml";
  const absl::Status orphan = poller.RestoreFile(state, registered_);
  EXPECT_EQ(orphan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(orphan.message()), HasSubstr("https://e.com/child.xml"));
  state.parent = "";
  ASSERT_TRUE(poller.RestoreFile(state, registered_).ok());
  EXPECT_EQ(poller.RestoreFile(state, registered_).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
