#include "ingest/feeds/websub.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/feeds/hub_signature.h"

namespace recrawl {
namespace feeds {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kHub[] = "https://hub.example/";
constexpr char kTopic[] = "https://blog.example/feed.xml";
constexpr char kAtom[] = R"(<feed xmlns="http://www.w3.org/2005/Atom">
  <entry><link href="https://blog.example/posts/1"/></entry>
  <entry><link href="/posts/2"/></entry>
  <entry><link href="https://elsewhere.example/x"/></entry>
</feed>)";

std::vector<std::string> Urls(const WebSubDelivery& delivery) {
  std::vector<std::string> urls;
  for (const Signal& signal : delivery.signals) urls.push_back(signal.url());
  return urls;
}

IntentRequest Intent(const std::string& mode, const std::string& topic = kTopic,
                     const std::string& lease = "3600") {
  IntentRequest request;
  request.mode = mode;
  request.topic = topic;
  request.challenge = "ch4llenge";
  request.lease_seconds = lease;
  return request;
}

class WebSubTest : public ::testing::Test {
 protected:
  WebSubTest()
      : now_(absl::FromCivil(absl::CivilSecond(2024, 6, 1, 12, 0, 0), absl::UTCTimeZone())) {
    options_.callback_base = "https://ingest.example/websub";
    options_.requested_lease = absl::Hours(24);
    options_.renew_fraction = 0.8;
    options_.verify_timeout = absl::Minutes(10);
    options_.retry_backoff = absl::Minutes(1);
    options_.max_retry_backoff = absl::Minutes(8);
  }

  // Subscribes with `secret` and completes the handshake; returns the id.
  std::string Active(const std::string& secret) {
    subscriber_ = std::make_unique<WebSubSubscriber>(options_);
    absl::StatusOr<std::string> id = subscriber_->Subscribe(kHub, kTopic, secret, now_);
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(subscriber_->DueRequests(now_).size(), 1u);
    EXPECT_TRUE(subscriber_->OnHubAnswer(*id, 202, now_).ok());
    EXPECT_EQ(subscriber_->OnIntent(*id, Intent("subscribe"), now_).http_status, 200);
    return *id;
  }

  WebSubOptions options_;
  absl::Time now_;
  std::unique_ptr<WebSubSubscriber> subscriber_;
};

TEST_F(WebSubTest, SubscribeRequestFormBody) {
  subscriber_ = std::make_unique<WebSubSubscriber>(options_);
  absl::StatusOr<std::string> id = subscriber_->Subscribe(kHub, kTopic, "s3cret&=", now_);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, WebSubSubscriber::CallbackId(kHub, kTopic));
  EXPECT_EQ(id->size(), 16u);
  std::vector<HubRequest> due = subscriber_->DueRequests(now_);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].hub, kHub);
  EXPECT_EQ(due[0].mode, "subscribe");
  EXPECT_EQ(due[0].form_body,
            absl::StrCat("hub.mode=subscribe&hub.topic=https%3A%2F%2Fblog.example%2Ffeed.xml"
                         "&hub.callback=https%3A%2F%2Fingest.example%2Fwebsub%2F",
                         *id, "&hub.lease_seconds=86400&hub.secret=s3cret%26%3D"));
  // Awaited, not handed out again until verify_timeout.
  EXPECT_THAT(subscriber_->DueRequests(now_ + absl::Minutes(9)), IsEmpty());
  EXPECT_EQ(subscriber_->DueRequests(now_ + absl::Minutes(10)).size(), 1u);
}

TEST_F(WebSubTest, BadSubscribeArguments) {
  subscriber_ = std::make_unique<WebSubSubscriber>(options_);
  EXPECT_THAT(std::string(subscriber_->Subscribe("nope", kTopic, "", now_).status().message()),
              HasSubstr("hub url"));
  EXPECT_THAT(std::string(subscriber_->Subscribe(kHub, "ftp://x/", "", now_).status().message()),
              HasSubstr("topic url"));
  EXPECT_THAT(
      std::string(
          subscriber_->Subscribe(kHub, kTopic, std::string(200, 's'), now_).status().message()),
      HasSubstr("secret: 200 bytes"));
  EXPECT_EQ(subscriber_->Unsubscribe(kHub, kTopic, now_).code(), absl::StatusCode::kNotFound);
}

TEST_F(WebSubTest, VerificationAcceptsOnlyAPendingMatchingIntent) {
  subscriber_ = std::make_unique<WebSubSubscriber>(options_);
  const std::string id = *subscriber_->Subscribe(kHub, kTopic, "", now_);
  subscriber_->DueRequests(now_);
  // Unknown callback, other topic, other mode, no challenge: 404.
  EXPECT_EQ(subscriber_->OnIntent("0123456789abcdef", Intent("subscribe"), now_).http_status, 404);
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("subscribe", "https://blog.example/other"), now_)
                .http_status,
            404);
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("unsubscribe"), now_).http_status, 404);
  IntentRequest no_challenge = Intent("subscribe");
  no_challenge.challenge.clear();
  EXPECT_EQ(subscriber_->OnIntent(id, no_challenge, now_).http_status, 404);
  // Deliveries before verification are refused.
  EXPECT_EQ(subscriber_->OnDelivery(id, "", kAtom, now_).status().code(),
            absl::StatusCode::kNotFound);

  IntentAnswer answer = subscriber_->OnIntent(id, Intent("subscribe"), now_);
  EXPECT_EQ(answer.http_status, 200);
  EXPECT_EQ(answer.body, "ch4llenge");
  std::vector<WebSubInfo> subs = subscriber_->Subscriptions();
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_TRUE(subs[0].active);
  EXPECT_EQ(subs[0].pending, "");
  EXPECT_EQ(subs[0].lease_end, now_ + absl::Hours(1));
  EXPECT_EQ(subs[0].callback, "https://ingest.example/websub/" + id);
  // A second verification with nothing pending is refused.
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("subscribe"), now_).http_status, 404);
}

TEST_F(WebSubTest, RenewalBeforeTheLeaseEnds) {
  const std::string id = Active("");
  // Lease 3600 s granted: renewal after 80% of it.
  EXPECT_EQ(subscriber_->NextRequestTime(), now_ + absl::Seconds(2880));
  EXPECT_THAT(subscriber_->DueRequests(now_ + absl::Seconds(2879)), IsEmpty());
  const absl::Time renew = now_ + absl::Seconds(2880);
  std::vector<HubRequest> due = subscriber_->DueRequests(renew);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].mode, "subscribe");
  // Still active while the renewal is pending.
  EXPECT_TRUE(subscriber_->OnDelivery(id, "", kAtom, renew).ok());
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("subscribe", kTopic, "7200"), renew).http_status, 200);
  EXPECT_EQ(subscriber_->Subscriptions()[0].lease_end, renew + absl::Hours(2));
  // A lease that runs out without renewal ends deliveries.
  EXPECT_EQ(subscriber_->OnDelivery(id, "", kAtom, renew + absl::Hours(2) + absl::Seconds(1))
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(WebSubTest, TinyLeasesAreScheduledAsMinLease) {
  subscriber_ = std::make_unique<WebSubSubscriber>(options_);
  const std::string id = *subscriber_->Subscribe(kHub, kTopic, "", now_);
  subscriber_->DueRequests(now_);
  subscriber_->OnIntent(id, Intent("subscribe", kTopic, "1"), now_);
  EXPECT_EQ(subscriber_->NextRequestTime(), now_ + options_.min_lease * 0.8);
}

TEST_F(WebSubTest, HubRefusalsBackOff) {
  subscriber_ = std::make_unique<WebSubSubscriber>(options_);
  const std::string id = *subscriber_->Subscribe(kHub, kTopic, "", now_);
  subscriber_->DueRequests(now_);
  ASSERT_TRUE(subscriber_->OnHubAnswer(id, 500, now_).ok());
  EXPECT_EQ(subscriber_->NextRequestTime(), now_ + absl::Minutes(1));
  ASSERT_TRUE(subscriber_->OnHubFailed(id, absl::DeadlineExceededError("timeout"), now_).ok());
  EXPECT_EQ(subscriber_->NextRequestTime(), now_ + absl::Minutes(2));
  EXPECT_THAT(subscriber_->Subscriptions()[0].last_error, HasSubstr("timeout"));
  // A denial too.
  IntentRequest denied = Intent("denied");
  denied.reason = "topic not served here";
  EXPECT_EQ(subscriber_->OnIntent(id, denied, now_).http_status, 200);
  EXPECT_EQ(subscriber_->NextRequestTime(), now_ + absl::Minutes(4));
  EXPECT_THAT(subscriber_->Subscriptions()[0].last_error, HasSubstr("topic not served here"));
  EXPECT_EQ(subscriber_->OnHubAnswer("ffffffffffffffff", 202, now_).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(WebSubTest, UnsubscribeRemovesOnVerification) {
  const std::string id = Active("");
  ASSERT_TRUE(subscriber_->Unsubscribe(kHub, kTopic, now_).ok());
  std::vector<HubRequest> due = subscriber_->DueRequests(now_);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].form_body,
            absl::StrCat("hub.mode=unsubscribe&hub.topic=https%3A%2F%2Fblog.example%2Ffeed.xml"
                         "&hub.callback=https%3A%2F%2Fingest.example%2Fwebsub%2F",
                         id));
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("subscribe"), now_).http_status, 404);
  EXPECT_TRUE(subscriber_->OnDelivery(id, "", kAtom, now_).ok());  // until verified
  EXPECT_EQ(subscriber_->OnIntent(id, Intent("unsubscribe"), now_).body, "ch4llenge");
  EXPECT_THAT(subscriber_->Subscriptions(), IsEmpty());
  EXPECT_EQ(subscriber_->OnDelivery(id, "", kAtom, now_).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(WebSubTest, SignedDeliveryOfEachMethodSignalsTopicAndEntries) {
  const std::string id = Active("k3y");
  for (const char* method : {"sha1", "sha256", "sha384", "sha512"}) {
    absl::StatusOr<WebSubDelivery> delivery =
        subscriber_->OnDelivery(id, *SignHubBody(method, "k3y", kAtom), kAtom, now_);
    ASSERT_TRUE(delivery.ok()) << method << ": " << delivery.status();
    EXPECT_THAT(Urls(*delivery), ElementsAre(kTopic, "https://blog.example/posts/1",
                                             "https://blog.example/posts/2"));
    EXPECT_EQ(delivery->off_host_links, 1u);
    EXPECT_EQ(delivery->signals[0].source(), SIGNAL_SOURCE_WEBSUB);
    EXPECT_EQ(delivery->signals[0].time(), absl::ToDoubleSeconds(now_ - absl::UnixEpoch()));
  }
}

TEST_F(WebSubTest, BadOrMissingSignatureIsRefused) {
  const std::string id = Active("k3y");
  absl::StatusOr<WebSubDelivery> delivery =
      subscriber_->OnDelivery(id, *SignHubBody("sha256", "wrong", kAtom), kAtom, now_);
  EXPECT_EQ(delivery.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(subscriber_->OnDelivery(id, "", kAtom, now_).status().code(),
            absl::StatusCode::kPermissionDenied);
  const std::string signature = *SignHubBody("sha256", "k3y", kAtom);
  EXPECT_EQ(subscriber_->OnDelivery(id, signature, std::string(kAtom) + " ", now_).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(WebSubTest, RssDeliveryAndNonFeedBody) {
  options_.allow_other_hosts = true;
  const std::string id = Active("");
  absl::StatusOr<WebSubDelivery> delivery =
      subscriber_->OnDelivery(id, "",
                              "<rss><channel><item><link>https://news.example/a</link></item>"
                              "<item><guid>https://blog.example/b</guid></item></channel></rss>",
                              now_);
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  EXPECT_THAT(Urls(*delivery),
              ElementsAre(kTopic, "https://news.example/a", "https://blog.example/b"));
  // Not a feed: the topic alone.
  delivery = subscriber_->OnDelivery(id, "", "{\"json\": true}", now_);
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  EXPECT_THAT(Urls(*delivery), ElementsAre(kTopic));
  EXPECT_EQ(delivery->feed_error.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
