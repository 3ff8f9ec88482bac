// WebSub subscriptions (https://www.w3.org/TR/websub/), the subscriber's
// side: one state machine per (hub, topic).
//
//   Subscribe ──► DueRequests hands out the form POST to the hub ──►
//   OnHubAnswer (2xx: wait for the hub's intent verification) ──►
//   OnIntent (hub.mode=subscribe, matching topic: echo hub.challenge) ──►
//   active until now + hub.lease_seconds; DueRequests renews it once
//   renew_fraction of the lease has run ──► ...
//   Unsubscribe ──► the same with hub.mode=unsubscribe; its verification
//   removes the subscription.
//
// Each subscription has its own callback, callback_base + "/" + id, where
// id is CallbackId(hub, topic) (16 hex digits of SHA-256, stable across
// restarts); the HTTP server routes a callback's GETs to OnIntent and its
// POSTs to OnDelivery by that id.
//
// Failures: a hub answer other than 2xx, a failed POST (OnHubFailed) or a
// denial (hub.mode=denied) retries after retry_backoff, doubled for each
// further consecutive failure up to max_retry_backoff; a request the hub
// does not verify within verify_timeout is sent again. An intent that
// matches no pending request of that mode and topic is answered 404, as
// the protocol asks of a subscriber that did not ask for it.
//
// Deliveries: accepted only while the subscription is active (verified,
// lease not over). With a secret, X-Hub-Signature must verify
// (hub_signature.h). Each accepted delivery is a WEBSUB signal for the
// topic, stamped `now`, and one for each entry link of an Atom or RSS body
// (feed_links.h) on the topic's host (any host with allow_other_hosts). A
// body that is not a feed still signals the topic. Hub secrets are the
// caller's (e.g. 32 random bytes, hex); the protocol asks that they be
// sent to https hubs only.
//
// Pure logic: every call takes `now`; no I/O. Not thread-safe (one owner,
// or the caller's lock).
#ifndef RECRAWL_INGEST_FEEDS_WEBSUB_H_
#define RECRAWL_INGEST_FEEDS_WEBSUB_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest/feeds/feed_links.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace feeds {

// hub.secret "MUST be less than 200 bytes".
constexpr size_t kMaxHubSecretBytes = 199;

struct WebSubOptions {
  // Where hubs call back, without a trailing '/', e.g.
  // "https://ingest.example.com/websub".
  std::string callback_base;
  // hub.lease_seconds asked for (hubs may grant another).
  absl::Duration requested_lease = absl::Hours(240);
  // Renewal is sent once this fraction of the granted lease has run.
  double renew_fraction = 0.8;
  // Granted leases shorter than this are scheduled as if this long (no
  // renewal storms from a hub granting seconds).
  absl::Duration min_lease = absl::Minutes(5);
  absl::Duration verify_timeout = absl::Minutes(10);
  absl::Duration retry_backoff = absl::Minutes(1);
  absl::Duration max_retry_backoff = absl::Hours(6);
  size_t max_links = kDefaultMaxFeedLinks;
  bool allow_other_hosts = false;
};

// A POST to make to a hub (Content-Type application/x-www-form-urlencoded).
struct HubRequest {
  std::string hub;
  std::string topic;
  std::string callback_id;
  // "subscribe" or "unsubscribe".
  std::string mode;
  std::string form_body;
};

// The query parameters of a hub's GET to a callback ("" when absent).
struct IntentRequest {
  std::string mode;           // hub.mode
  std::string topic;          // hub.topic
  std::string challenge;      // hub.challenge
  std::string lease_seconds;  // hub.lease_seconds
  std::string reason;         // hub.reason (with hub.mode=denied)
};

// What to answer the hub's GET.
struct IntentAnswer {
  int http_status = 404;
  std::string body;
};

struct WebSubDelivery {
  // The topic first, then its entries' links (source SIGNAL_SOURCE_WEBSUB,
  // time `now` in Unix seconds).
  std::vector<Signal> signals;
  // Why no entry links were taken (the body is not a feed); OK otherwise.
  absl::Status feed_error;
  size_t bad_links = 0;
  size_t off_host_links = 0;
};

struct WebSubInfo {
  std::string hub;
  std::string topic;
  std::string callback;
  bool active = false;
  // "subscribe", "unsubscribe" or "" (nothing pending).
  std::string pending;
  std::optional<absl::Time> lease_end;
  absl::Time next_request;
  int consecutive_failures = 0;
  std::string last_error;
};

class WebSubSubscriber {
 public:
  explicit WebSubSubscriber(const WebSubOptions& options);

  // 16 lower-case hex digits naming the subscription of `topic` at `hub`
  // (both as normalised by Subscribe).
  static std::string CallbackId(absl::string_view hub, absl::string_view topic);

  // Starts (or restarts, with a new secret) the subscription of `topic` at
  // `hub`; its request is due at once. INVALID_ARGUMENT naming "hub",
  // "topic" or "secret" (at most kMaxHubSecretBytes; "" for none). Returns
  // the callback id.
  absl::StatusOr<std::string> Subscribe(absl::string_view hub, absl::string_view topic,
                                        absl::string_view secret, absl::Time now);

  // Asks the hub to end the subscription; it stays active until the hub
  // verifies. NOT_FOUND when there is no such subscription.
  absl::Status Unsubscribe(absl::string_view hub, absl::string_view topic, absl::Time now);

  // Requests due at `now` (new subscriptions, renewals, unsubscriptions,
  // retries); each is then awaited for verify_timeout.
  std::vector<HubRequest> DueRequests(absl::Time now);

  // When the next request falls due (absl::InfiniteFuture() when none).
  absl::Time NextRequestTime() const;

  // The hub's HTTP status for the request of `callback_id`: 2xx waits for
  // verification, anything else is a failure. NOT_FOUND for an unknown id.
  absl::Status OnHubAnswer(absl::string_view callback_id, int http_status, absl::Time now);
  // The request could not be made (no HTTP answer).
  absl::Status OnHubFailed(absl::string_view callback_id, const absl::Status& error,
                           absl::Time now);

  // A hub's GET to the callback of `callback_id` (see the file comment).
  IntentAnswer OnIntent(absl::string_view callback_id, const IntentRequest& request,
                        absl::Time now);

  // A content delivery (POST) to the callback of `callback_id`, with its
  // X-Hub-Signature header ("" when absent). NOT_FOUND when no active
  // subscription has that callback; PERMISSION_DENIED when the signature
  // does not verify (the protocol lets the answer still be 2xx, so that
  // a forger learns nothing; nothing is signalled either way).
  absl::StatusOr<WebSubDelivery> OnDelivery(absl::string_view callback_id,
                                            absl::string_view signature, absl::string_view body,
                                            absl::Time now);

  // Every subscription, by hub then topic.
  std::vector<WebSubInfo> Subscriptions() const;

 private:
  enum class Pending { kNone, kSubscribe, kUnsubscribe };
  struct Subscription {
    std::string hub;
    std::string topic;
    std::string topic_host;
    std::string secret;
    bool active = false;
    absl::Time lease_end;
    Pending pending = Pending::kSubscribe;
    // The next request (or renewal) is due then.
    absl::Time next_request;
    int consecutive_failures = 0;
    std::string last_error;
  };

  static const char* PendingName(Pending pending);
  Subscription* Find(absl::string_view callback_id);
  void Failed(Subscription* sub, std::string error, absl::Time now);
  std::string Callback(absl::string_view id) const;
  std::string FormBody(const Subscription& sub, absl::string_view id) const;

  const WebSubOptions options_;
  absl::flat_hash_map<std::string, Subscription> subscriptions_;  // by callback id
};

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_WEBSUB_H_
