#include "ingest/feeds/websub.h"

#include <curl/curl.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cluster/url.h"
#include "ingest/feeds/hub_signature.h"

namespace recrawl {
namespace feeds {
namespace {

// `value` percent-encoded for a form body (libcurl: all but A-Z a-z 0-9 - . _ ~).
std::string FormEscape(absl::string_view value) {
  char* escaped = curl_easy_escape(nullptr, value.data(), static_cast<int>(value.size()));
  if (escaped == nullptr) return "";
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

double UnixSeconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

}  // namespace

const char* WebSubSubscriber::PendingName(Pending pending) {
  switch (pending) {
    case Pending::kSubscribe:
      return "subscribe";
    case Pending::kUnsubscribe:
      return "unsubscribe";
    case Pending::kNone:
      break;
  }
  return "";
}

WebSubSubscriber::WebSubSubscriber(const WebSubOptions& options) : options_(options) {}

std::string WebSubSubscriber::CallbackId(absl::string_view hub, absl::string_view topic) {
  const std::string key = absl::StrCat(hub, "\n", topic);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), 8));
}

std::string WebSubSubscriber::Callback(absl::string_view id) const {
  return absl::StrCat(options_.callback_base, "/", id);
}

WebSubSubscriber::Subscription* WebSubSubscriber::Find(absl::string_view callback_id) {
  auto it = subscriptions_.find(callback_id);
  return it == subscriptions_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::string> WebSubSubscriber::Subscribe(absl::string_view hub,
                                                        absl::string_view topic,
                                                        absl::string_view secret, absl::Time now) {
  absl::StatusOr<cluster::NormalizedUrl> hub_url = cluster::NormalizeUrl(hub);
  if (!hub_url.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("hub ", hub_url.status().message()));
  }
  absl::StatusOr<cluster::NormalizedUrl> topic_url = cluster::NormalizeUrl(topic);
  if (!topic_url.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("topic ", topic_url.status().message()));
  }
  if (secret.size() > kMaxHubSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("secret: ", secret.size(), " bytes, at most ", kMaxHubSecretBytes));
  }
  const std::string id = CallbackId(hub_url->spec(), topic_url->spec());
  Subscription& sub = subscriptions_[id];
  sub.hub = hub_url->spec();
  sub.topic = topic_url->spec();
  sub.topic_host = std::string(topic_url->host());
  sub.secret = std::string(secret);
  sub.pending = Pending::kSubscribe;
  sub.next_request = now;
  sub.consecutive_failures = 0;
  sub.last_error.clear();
  return id;
}

absl::Status WebSubSubscriber::Unsubscribe(absl::string_view hub, absl::string_view topic,
                                           absl::Time now) {
  absl::StatusOr<cluster::NormalizedUrl> hub_url = cluster::NormalizeUrl(hub);
  absl::StatusOr<cluster::NormalizedUrl> topic_url = cluster::NormalizeUrl(topic);
  Subscription* sub = hub_url.ok() && topic_url.ok()
                          ? Find(CallbackId(hub_url->spec(), topic_url->spec()))
                          : nullptr;
  if (sub == nullptr) {
    return absl::NotFoundError(absl::StrCat("topic: no subscription of ", topic, " at hub ", hub));
  }
  sub->pending = Pending::kUnsubscribe;
  sub->next_request = now;
  sub->consecutive_failures = 0;
  sub->last_error.clear();
  return absl::OkStatus();
}

std::string WebSubSubscriber::FormBody(const Subscription& sub, absl::string_view id) const {
  const bool subscribe = sub.pending != Pending::kUnsubscribe;
  std::string body = absl::StrCat("hub.mode=", subscribe ? "subscribe" : "unsubscribe",
                                  "&hub.topic=", FormEscape(sub.topic),
                                  "&hub.callback=", FormEscape(Callback(id)));
  if (subscribe) {
    absl::StrAppend(&body, "&hub.lease_seconds=", absl::ToInt64Seconds(options_.requested_lease));
    if (!sub.secret.empty()) absl::StrAppend(&body, "&hub.secret=", FormEscape(sub.secret));
  }
  return body;
}

std::vector<HubRequest> WebSubSubscriber::DueRequests(absl::Time now) {
  std::vector<HubRequest> due;
  for (auto& [id, sub] : subscriptions_) {
    if (sub.next_request > now) continue;
    if (sub.pending == Pending::kNone) sub.pending = Pending::kSubscribe;  // renewal
    HubRequest& request = due.emplace_back();
    request.hub = sub.hub;
    request.topic = sub.topic;
    request.callback_id = id;
    request.mode = PendingName(sub.pending);
    request.form_body = FormBody(sub, id);
    sub.next_request = now + options_.verify_timeout;
  }
  std::sort(due.begin(), due.end(), [](const HubRequest& a, const HubRequest& b) {
    return std::tie(a.hub, a.topic) < std::tie(b.hub, b.topic);
  });
  return due;
}

absl::Time WebSubSubscriber::NextRequestTime() const {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [id, sub] : subscriptions_) next = std::min(next, sub.next_request);
  return next;
}

void WebSubSubscriber::Failed(Subscription* sub, std::string error, absl::Time now) {
  ++sub->consecutive_failures;
  sub->last_error = std::move(error);
  absl::Duration backoff = options_.retry_backoff;
  for (int i = 1; i < sub->consecutive_failures && backoff < options_.max_retry_backoff; ++i) {
    backoff *= 2;
  }
  sub->next_request = now + std::min(backoff, options_.max_retry_backoff);
}

absl::Status WebSubSubscriber::OnHubAnswer(absl::string_view callback_id, int http_status,
                                           absl::Time now) {
  Subscription* sub = Find(callback_id);
  if (sub == nullptr) {
    return absl::NotFoundError(absl::StrCat("callback id: ", callback_id, " is unknown"));
  }
  if (http_status < 200 || http_status > 299) {
    Failed(sub, absl::StrCat("hub ", sub->hub, " answered HTTP ", http_status), now);
  }
  return absl::OkStatus();
}

absl::Status WebSubSubscriber::OnHubFailed(absl::string_view callback_id, const absl::Status& error,
                                           absl::Time now) {
  Subscription* sub = Find(callback_id);
  if (sub == nullptr) {
    return absl::NotFoundError(absl::StrCat("callback id: ", callback_id, " is unknown"));
  }
  Failed(sub, absl::StrCat("hub ", sub->hub, ": ", error.message()), now);
  return absl::OkStatus();
}

IntentAnswer WebSubSubscriber::OnIntent(absl::string_view callback_id, const IntentRequest& request,
                                        absl::Time now) {
  IntentAnswer answer;  // 404 unless it matches
  Subscription* sub = Find(callback_id);
  if (sub == nullptr) return answer;
  absl::StatusOr<cluster::NormalizedUrl> topic = cluster::NormalizeUrl(request.topic);
  if (!topic.ok() || topic->spec() != sub->topic) return answer;
  if (request.mode == "denied") {
    // The hub refuses (or ends) the subscription.
    sub->active = false;
    if (sub->pending == Pending::kNone) sub->pending = Pending::kSubscribe;
    Failed(sub, absl::StrCat("hub ", sub->hub, " denied: ", request.reason.substr(0, 200)), now);
    answer.http_status = 200;
    return answer;
  }
  if (request.challenge.empty()) return answer;
  if (request.mode == "subscribe" && sub->pending == Pending::kSubscribe) {
    int64_t seconds = 0;
    absl::Duration lease = options_.requested_lease;
    if (absl::SimpleAtoi(request.lease_seconds, &seconds) && seconds > 0) {
      lease = absl::Seconds(seconds);
    }
    sub->active = true;
    sub->lease_end = now + lease;
    sub->pending = Pending::kNone;
    sub->next_request = now + std::max(lease, options_.min_lease) * options_.renew_fraction;
    sub->consecutive_failures = 0;
    sub->last_error.clear();
  } else if (request.mode == "unsubscribe" && sub->pending == Pending::kUnsubscribe) {
    subscriptions_.erase(subscriptions_.find(callback_id));
  } else {
    return answer;
  }
  answer.http_status = 200;
  answer.body = request.challenge;
  return answer;
}

absl::StatusOr<WebSubDelivery> WebSubSubscriber::OnDelivery(absl::string_view callback_id,
                                                            absl::string_view signature,
                                                            absl::string_view body,
                                                            absl::Time now) {
  Subscription* sub = Find(callback_id);
  if (sub == nullptr || !sub->active || now > sub->lease_end) {
    return absl::NotFoundError(
        absl::StrCat("callback id: no active subscription has id ", callback_id));
  }
  if (!sub->secret.empty()) {
    if (absl::Status s = VerifyHubSignature(signature, sub->secret, body); !s.ok()) return s;
  }
  WebSubDelivery delivery;
  auto add = [&](const std::string& url) {
    Signal& signal = delivery.signals.emplace_back();
    signal.set_url(url);
    signal.set_time(UnixSeconds(now));
    signal.set_source(SIGNAL_SOURCE_WEBSUB);
  };
  add(sub->topic);
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(body, sub->topic, options_.max_links);
  if (!links.ok()) {
    delivery.feed_error = links.status();
    return delivery;
  }
  delivery.bad_links = links->bad_links;
  for (const std::string& url : links->urls) {
    if (url == sub->topic) continue;
    if (!options_.allow_other_hosts) {
      absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(url);
      if (!normal.ok() || normal->host() != sub->topic_host) {
        ++delivery.off_host_links;
        continue;
      }
    }
    add(url);
  }
  return delivery;
}

std::vector<WebSubInfo> WebSubSubscriber::Subscriptions() const {
  std::vector<WebSubInfo> out;
  for (const auto& [id, sub] : subscriptions_) {
    WebSubInfo& info = out.emplace_back();
    info.hub = sub.hub;
    info.topic = sub.topic;
    info.callback = Callback(id);
    info.active = sub.active;
    info.pending = PendingName(sub.pending);
    if (sub.active) info.lease_end = sub.lease_end;
    info.next_request = sub.next_request;
    info.consecutive_failures = sub.consecutive_failures;
    info.last_error = sub.last_error;
  }
  std::sort(out.begin(), out.end(), [](const WebSubInfo& a, const WebSubInfo& b) {
    return std::tie(a.hub, a.topic) < std::tie(b.hub, b.topic);
  });
  return out;
}

}  // namespace feeds
}  // namespace recrawl
