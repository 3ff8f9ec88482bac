#include "ingest/websub_runner.h"

#include <openssl/rand.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cluster/url.h"
#include "ingest/durable_file.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace ingest {
namespace {

absl::StatusOr<std::string> NewSecret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("secret: RAND_bytes failed");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

// The callback id of (hub, topic), or "" when either is not a valid URL.
std::string IdOf(absl::string_view hub, absl::string_view topic) {
  absl::StatusOr<cluster::NormalizedUrl> h = cluster::NormalizeUrl(hub);
  absl::StatusOr<cluster::NormalizedUrl> t = cluster::NormalizeUrl(topic);
  if (!h.ok() || !t.ok()) return "";
  return feeds::WebSubSubscriber::CallbackId(h->spec(), t->spec());
}

}  // namespace

WebSubRunner::WebSubRunner(DeliverFn deliver, GatewayMetrics* metrics, WebSubRunnerOptions options)
    : deliver_(std::move(deliver)),
      metrics_(metrics),
      options_([&] {
        options.fetch.cancel = &cancel_;
        return std::move(options);
      }()),
      subscriber_(options_.websub) {}

WebSubRunner::~WebSubRunner() { Stop(); }

absl::Status WebSubRunner::Load() {
  const std::string& path = options_.state_file;
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<std::string>> bytes = ReadFileIfPresent(path);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return absl::OkStatus();
  WebSubStoreFile file;
  if (!file.ParseFromString(**bytes)) {
    return absl::DataLossError(absl::StrCat(path, ": not a saved WebSub file"));
  }
  absl::MutexLock lock(&mu_);
  for (const StoredWebSubSubscription& s : file.subscriptions()) {
    absl::StatusOr<std::string> id =
        subscriber_.Subscribe(s.hub(), s.topic(), s.secret(), options_.now());
    if (!id.ok()) return absl::DataLossError(absl::StrCat(path, ": ", id.status().message()));
    kept_[*id] = s;
  }
  wake_ = true;
  return absl::OkStatus();
}

absl::Status WebSubRunner::Save() {
  if (options_.state_file.empty()) return absl::OkStatus();
  WebSubStoreFile file;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : kept_) *file.add_subscriptions() = s;
  }
  std::string bytes;
  if (!file.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat("cannot encode the subscriptions for ", options_.state_file));
  }
  return ReplaceFileDurably(options_.state_file, bytes);
}

absl::StatusOr<std::string> WebSubRunner::Subscribe(absl::string_view hub,
                                                    absl::string_view topic) {
  if (options_.websub.callback_base.empty()) {
    return absl::FailedPreconditionError(
        "websub: no callback base URL (--websub_callback_base) for hubs to call back on");
  }
  absl::StatusOr<std::string> secret = NewSecret();
  if (!secret.ok()) return secret.status();
  absl::MutexLock save_lock(&save_mu_);
  std::string id;
  StoredWebSubSubscription previous;
  bool had_previous = false;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<std::string> subscribed =
        subscriber_.Subscribe(hub, topic, *secret, options_.now());
    if (!subscribed.ok()) return subscribed.status();
    id = *subscribed;
    if (auto it = kept_.find(id); it != kept_.end()) {
      previous = it->second;
      had_previous = true;
    }
    StoredWebSubSubscription& kept = kept_[id];
    kept.set_hub(std::string(hub));
    kept.set_topic(std::string(topic));
    kept.set_secret(*secret);
    wake_ = true;
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    if (had_previous) {
      kept_[id] = previous;
    } else {
      kept_.erase(id);
    }
    return absl::InternalError(absl::StrCat("websub: subscription not saved: ", saved.message()));
  }
  return id;
}

absl::Status WebSubRunner::Unsubscribe(absl::string_view hub, absl::string_view topic) {
  absl::MutexLock save_lock(&save_mu_);
  const std::string id = IdOf(hub, topic);
  StoredWebSubSubscription kept;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = subscriber_.Unsubscribe(hub, topic, options_.now()); !s.ok()) return s;
    if (auto it = kept_.find(id); it != kept_.end()) {
      kept = it->second;
      kept_.erase(it);
    }
    wake_ = true;
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    kept_[id] = kept;
    return absl::InternalError(absl::StrCat("websub: removal not saved: ", saved.message()));
  }
  return absl::OkStatus();
}

std::vector<feeds::WebSubInfo> WebSubRunner::Subscriptions() const {
  absl::MutexLock lock(&mu_);
  return subscriber_.Subscriptions();
}

feeds::IntentAnswer WebSubRunner::OnIntent(absl::string_view id,
                                           const feeds::IntentRequest& request) {
  absl::MutexLock lock(&mu_);
  feeds::IntentAnswer answer = subscriber_.OnIntent(id, request, options_.now());
  wake_ = true;
  return answer;
}

absl::StatusOr<DeliveryReport> WebSubRunner::OnDelivery(absl::string_view id,
                                                        absl::string_view signature,
                                                        absl::string_view body) {
  absl::StatusOr<feeds::WebSubDelivery> delivery;
  {
    absl::MutexLock lock(&mu_);
    delivery = subscriber_.OnDelivery(id, signature, body, options_.now());
  }
  if (!delivery.ok()) return delivery.status();
  // Stamped on the cluster clock by the sink's PingClient, as the
  // gateway's other push signals are.
  for (Signal& s : delivery->signals) s.clear_time();
  return deliver_(std::move(delivery->signals));
}

void WebSubRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void WebSubRunner::Stop() {
  cancel_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void WebSubRunner::Run() {
  while (true) {
    std::vector<feeds::HubRequest> due;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      due = subscriber_.DueRequests(options_.now());
    }
    for (const feeds::HubRequest& request : due) {
      absl::StatusOr<FetchResponse> answer =
          SafePostForm(request.hub, request.form_body, options_.fetch);
      if (answer.status().code() == absl::StatusCode::kCancelled) return;  // stopping
      metrics_->Fetch("websub", answer.ok() && answer->status / 100 == 2 ? "ok" : "error");
      absl::MutexLock lock(&mu_);
      if (answer.ok()) {
        if (answer->status / 100 != 2) {
          spdlog::info("websub hub {} ({} {}): HTTP {}", request.hub, request.mode, request.topic,
                       answer->status);
        }
        subscriber_.OnHubAnswer(request.callback_id, answer->status, options_.now()).IgnoreError();
      } else {
        spdlog::info("websub hub {} ({} {}): {}", request.hub, request.mode, request.topic,
                     answer.status().ToString());
        subscriber_.OnHubFailed(request.callback_id, answer.status(), options_.now()).IgnoreError();
      }
    }
    absl::MutexLock lock(&mu_);
    const absl::Duration wait = std::clamp(subscriber_.NextRequestTime() - options_.now(),
                                           absl::ZeroDuration(), absl::Seconds(1));
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](WebSubRunner* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
                               return self->stopping_ || self->wake_;
                             },
                             this),
                         wait);
    if (stopping_) return;
    wake_ = false;
  }
}

}  // namespace ingest
}  // namespace recrawl
