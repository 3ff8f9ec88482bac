#include "ingest/gateway.h"

#include <google/protobuf/util/json_util.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ingest/cdn_purge.h"
#include "ingest/gateway.pb.h"
#include "ingest/key_store.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kIndexNow[] = "indexnow";
constexpr char kCdn[] = "cdn";
constexpr char kAdmin[] = "admin";
constexpr char kSitemap[] = "sitemap";
constexpr char kWebSub[] = "websub";

std::string TimeText(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return "";
  return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone());
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) return "{}";
  return out;
}

HttpAnswer Answer(int status, const google::protobuf::Message& message) {
  return HttpAnswer{status, ToJson(message)};
}

// An answer whose body is {"error": message}.
HttpAnswer Error(int status, absl::string_view message) {
  DeliveryAnswer a;
  a.set_error(std::string(message));
  return Answer(status, a);
}

// The answer for an admin change refused with `error`: 400 for a bad
// request (INVALID_ARGUMENT, FAILED_PRECONDITION), 404 NOT_FOUND, 409
// ALREADY_EXISTS, else 500 (logged with `subject`).
HttpAnswer AdminError(const absl::Status& error, absl::string_view subject) {
  switch (error.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return Error(400, error.message());
    case absl::StatusCode::kNotFound:
      return Error(404, error.message());
    case absl::StatusCode::kAlreadyExists:
      return Error(409, error.message());
    default:
      spdlog::error("{}: {}", std::string(subject), error.ToString());
      return Error(500, error.message());
  }
}

// Parses `body` as the JSON form of `message`; INVALID_ARGUMENT ("JSON: ...")
// when it is not.
absl::Status ParseJson(absl::string_view body, google::protobuf::Message* message) {
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      std::string(body), message, google::protobuf::util::JsonParseOptions());
  if (parsed.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("JSON: ", parsed.ToString()));
}

// 503 when the stream to the coordinator failed; else the report in `a`.
HttpAnswer Delivered(int status, const absl::StatusOr<DeliveryReport>& report, DeliveryAnswer a) {
  if (!report.ok()) {
    return Error(503, absl::StrCat("signals not delivered: ", report.status().ToString()));
  }
  a.set_accepted(report->accepted);
  a.set_unknown(report->unknown);
  a.set_rejected(report->rejected);
  if (!report->error.ok()) a.set_error(report->error.ToString());
  return Answer(status, a);
}

}  // namespace

Gateway::Gateway(SignalSink* sink, const cluster::TokenTable* tokens, GatewayMetrics* metrics,
                 GatewayOptions options)
    : sink_(sink),
      tokens_(tokens),
      metrics_(metrics),
      options_([&] {
        options.fetch.cancel = &cancel_;
        return std::move(options);
      }()),
      keys_(options_.keys),
      limiter_(options_.rate) {
  for (int i = 0; i < options_.key_check_threads; ++i) {
    checkers_.emplace_back([this] { CheckKeys(); });
  }
  SitemapRunnerOptions sitemaps;
  sitemaps.poll = options_.sitemap_poll;
  sitemaps.fetch = options_.fetch;
  sitemaps.max_concurrent_fetches = options_.sitemap_fetches;
  sitemaps.state_file = options_.sitemap_state_file;
  sitemaps.now = options_.now;
  sitemaps_ = std::make_unique<SitemapRunner>(
      [this](std::vector<Signal> signals) { return DeliverSignals(std::move(signals), kSitemap); },
      metrics_, std::move(sitemaps));
  sitemaps_->Start();
  WebSubRunnerOptions websub;
  websub.websub.callback_base = options_.websub_callback_base;
  websub.fetch = options_.fetch;
  websub.state_file = options_.websub_state_file;
  websub.now = options_.now;
  websub_ = std::make_unique<WebSubRunner>(
      [this](std::vector<Signal> signals) { return DeliverSignals(std::move(signals), kWebSub); },
      metrics_, std::move(websub));
  websub_->Start();
}

Gateway::~Gateway() { Stop(); }

void Gateway::Stop() {
  cancel_ = true;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    checks_.clear();
  }
  for (std::thread& t : checkers_) {
    if (t.joinable()) t.join();
  }
  sitemaps_->Stop();
  websub_->Stop();
}

HttpAnswer Gateway::Authorized(absl::string_view authorization, cluster::Role role,
                               const char* route, absl::FunctionRef<HttpAnswer()> act) {
  HttpAnswer answer = Authorize(authorization, role);
  if (answer.status == 0) answer = act();
  metrics_->Request(route, answer.status);
  return answer;
}

HttpAnswer Gateway::Admin(absl::string_view authorization, absl::FunctionRef<HttpAnswer()> act) {
  return Authorized(authorization, cluster::Role::kOperator, kAdmin, act);
}

HttpAnswer Gateway::Authorize(absl::string_view authorization, cluster::Role role) const {
  if (tokens_ == nullptr) return HttpAnswer{0, ""};
  absl::string_view token = authorization;
  if (!absl::ConsumePrefix(&token, "Bearer ") || token.empty()) {
    return Error(401, "Authorization: needs \"Bearer <token>\"");
  }
  cluster::Role found;
  if (!tokens_->Find(token, &found)) return Error(401, "Authorization: unknown token");
  if (found != role) {
    return Error(403, absl::StrCat("Authorization: a ", cluster::RoleName(found),
                                   " token may not call this; it takes ", cluster::RoleName(role)));
  }
  return HttpAnswer{0, ""};
}

absl::StatusOr<DeliveryReport> Gateway::Deliver(const std::vector<std::string>& urls,
                                                SignalSource source,
                                                const std::string& metric_source) {
  std::vector<Signal> signals;
  signals.reserve(urls.size());
  for (const std::string& url : urls) {
    Signal& s = signals.emplace_back();
    s.set_url(url);
    s.set_source(source);
  }
  return DeliverSignals(std::move(signals), metric_source);
}

absl::StatusOr<DeliveryReport> Gateway::DeliverSignals(std::vector<Signal> signals,
                                                       const std::string& metric_source) {
  const size_t n = signals.size();
  absl::StatusOr<DeliveryReport> report = sink_->Deliver(std::move(signals));
  if (!report.ok()) {
    metrics_->Signals(metric_source, "rejected", n);
    return report;
  }
  metrics_->Signals(metric_source, "accepted", report->accepted);
  metrics_->Signals(metric_source, "unknown", report->unknown);
  metrics_->Signals(metric_source, "rejected", report->rejected);
  return report;
}

HttpAnswer Gateway::IndexNow(const IndexNowParse& parsed) {
  HttpAnswer answer;
  if (parsed.answer != IndexNowAnswer::kOk) {
    answer = Error(static_cast<int>(parsed.answer), parsed.message);
  } else {
    const IndexNowSubmission& submission = parsed.submission;
    const IndexNowDecision decision = DecideIndexNow(submission, &keys_, &limiter_, options_.now());
    DeliveryAnswer body;
    body.set_message(decision.message);
    if (decision.forward) {
      answer = Delivered(static_cast<int>(decision.answer),
                         Deliver(submission.urls, SIGNAL_SOURCE_INDEXNOW, kIndexNow), body);
    } else if (decision.answer == IndexNowAnswer::kAccepted) {
      metrics_->Signals(kIndexNow, "held", submission.urls.size());
      answer = Answer(202, body);
    } else {
      answer = Error(static_cast<int>(decision.answer), decision.message);
    }
    if (decision.verify) {
      absl::MutexLock lock(&mu_);
      if (!stopping_) checks_.push_back(submission.key_file);
    }
  }
  metrics_->Request(kIndexNow, answer.status);
  return answer;
}

HttpAnswer Gateway::IndexNowGet(absl::string_view url, absl::string_view key,
                                absl::string_view key_location) {
  return IndexNow(ParseIndexNowGet(url, key, key_location));
}

HttpAnswer Gateway::IndexNowPost(absl::string_view body) {
  return IndexNow(ParseIndexNowPost(body));
}

HttpAnswer Gateway::CdnPurge(absl::string_view authorization, absl::string_view body) {
  return Authorized(authorization, cluster::Role::kPinger, kCdn, [&] {
    absl::StatusOr<std::vector<std::string>> urls = ParseCdnPurge(body);
    if (!urls.ok()) return Error(400, urls.status().message());
    return Delivered(200, Deliver(*urls, SIGNAL_SOURCE_CDN, kCdn), DeliveryAnswer());
  });
}

HttpAnswer Gateway::RegisterKey(absl::string_view authorization, absl::string_view body) {
  return Admin(authorization, [&] {
    RegisteredKey key;
    if (absl::Status parsed = ParseJson(body, &key); !parsed.ok()) return AdminError(parsed, "key");
    absl::MutexLock lock(&save_mu_);
    const absl::StatusOr<bool> added = keys_.Register(key.host(), key.key());
    if (!added.ok()) return Error(400, added.status().message());
    if (absl::Status saved = *added ? Save() : absl::OkStatus(); !saved.ok()) {
      keys_.Unregister(key.host(), key.key());
      spdlog::error("key for {} not registered: {}", key.host(), saved.ToString());
      return Error(500, absl::StrCat("key: not saved: ", saved.message()));
    }
    return Answer(200, key);
  });
}

HttpAnswer Gateway::UnregisterKey(absl::string_view authorization, absl::string_view host,
                                  absl::string_view key) {
  return Admin(authorization, [&] {
    absl::MutexLock lock(&save_mu_);
    if (!keys_.Unregister(host, key)) {
      return Error(404, absl::StrCat("key: not registered for host \"", host, "\""));
    }
    if (absl::Status saved = Save(); !saved.ok()) {
      keys_.Register(host, key).IgnoreError();
      spdlog::error("key for {} not removed: {}", std::string(host), saved.ToString());
      return Error(500, absl::StrCat("key: removal not saved: ", saved.message()));
    }
    return Answer(200, RegisteredKey());
  });
}

HttpAnswer Gateway::ListKeys(absl::string_view authorization, absl::string_view host) {
  return Admin(authorization, [&] {
    RegisteredKeys list;
    for (const KeyCache::RegisteredKey& k : keys_.Registered(host)) {
      RegisteredKey* out = list.add_keys();
      out->set_host(k.host);
      out->set_key(k.key);
    }
    return Answer(200, list);
  });
}

HttpAnswer Gateway::RegisterSitemap(absl::string_view authorization, absl::string_view body) {
  return Admin(authorization, [&] {
    RegisteredSitemap sitemap;
    absl::Status s = ParseJson(body, &sitemap);
    if (s.ok()) s = sitemaps_->Register(sitemap.url());
    return s.ok() ? Answer(200, sitemap) : AdminError(s, absl::StrCat("sitemap ", sitemap.url()));
  });
}

HttpAnswer Gateway::UnregisterSitemap(absl::string_view authorization, absl::string_view url) {
  return Admin(authorization, [&] {
    const absl::Status s = sitemaps_->Unregister(url);
    return s.ok() ? Answer(200, RegisteredSitemap()) : AdminError(s, absl::StrCat("sitemap ", url));
  });
}

HttpAnswer Gateway::ListSitemaps(absl::string_view authorization) {
  return Admin(authorization, [&] {
    SitemapList list;
    for (const feeds::SitemapFileInfo& f : sitemaps_->Files()) {
      SitemapStatus* out = list.add_sitemaps();
      out->set_url(f.url);
      out->set_parent(f.parent);
      if (f.kind.has_value()) out->set_kind(feeds::SitemapKindName(*f.kind));
      out->set_registered_at(TimeText(f.registered_at));
      out->set_next_fetch(TimeText(f.next_fetch));
      if (f.last_success.has_value()) out->set_last_success(TimeText(*f.last_success));
      out->set_consecutive_errors(static_cast<uint32_t>(f.consecutive_errors));
      out->set_last_error(f.last_error);
      out->set_tracked_urls(static_cast<uint32_t>(f.tracked_urls));
      out->set_children(static_cast<uint32_t>(f.children));
    }
    return Answer(200, list);
  });
}

absl::Status Gateway::LoadSitemaps() { return sitemaps_->Load(); }

absl::Status Gateway::LoadWebSub() { return websub_->Load(); }

HttpAnswer Gateway::SubscribeWebSub(absl::string_view authorization, absl::string_view body) {
  return Admin(authorization, [&] {
    WebSubTopic topic;
    const absl::Status parsed = ParseJson(body, &topic);
    absl::StatusOr<std::string> id =
        parsed.ok() ? websub_->Subscribe(topic.hub(), topic.topic()) : parsed;
    if (!id.ok()) return AdminError(id.status(), absl::StrCat("websub ", topic.topic()));
    topic.set_callback_id(*id);
    return Answer(200, topic);
  });
}

HttpAnswer Gateway::UnsubscribeWebSub(absl::string_view authorization, absl::string_view hub,
                                      absl::string_view topic) {
  return Admin(authorization, [&] {
    const absl::Status s = websub_->Unsubscribe(hub, topic);
    return s.ok() ? Answer(200, WebSubTopic()) : AdminError(s, absl::StrCat("websub ", topic));
  });
}

HttpAnswer Gateway::ListWebSub(absl::string_view authorization) {
  return Admin(authorization, [&] {
    WebSubList list;
    for (const feeds::WebSubInfo& w : websub_->Subscriptions()) {
      WebSubStatus* out = list.add_subscriptions();
      out->set_hub(w.hub);
      out->set_topic(w.topic);
      out->set_callback(w.callback);
      out->set_active(w.active);
      out->set_pending(w.pending);
      if (w.lease_end.has_value()) out->set_lease_end(TimeText(*w.lease_end));
      out->set_next_request(TimeText(w.next_request));
      out->set_consecutive_failures(static_cast<uint32_t>(w.consecutive_failures));
      out->set_last_error(w.last_error);
    }
    return Answer(200, list);
  });
}

HttpAnswer Gateway::WebSubIntent(absl::string_view id, const feeds::IntentRequest& request) {
  const feeds::IntentAnswer intent = websub_->OnIntent(id, request);
  HttpAnswer answer{intent.http_status, intent.body, "text/plain"};
  metrics_->Request(kWebSub, answer.status);
  return answer;
}

HttpAnswer Gateway::WebSubDelivery(absl::string_view id, absl::string_view signature,
                                   absl::string_view body) {
  absl::StatusOr<DeliveryReport> report = websub_->OnDelivery(id, signature, body);
  HttpAnswer answer;
  if (report.ok()) {
    answer = Delivered(202, report, DeliveryAnswer());
  } else if (report.status().code() == absl::StatusCode::kNotFound) {
    answer = Error(404, report.status().message());
  } else if (report.status().code() == absl::StatusCode::kPermissionDenied) {
    spdlog::warn("websub delivery to {} refused: {}", std::string(id), report.status().ToString());
    metrics_->Signals(kWebSub, "forged", 1);
    answer = Answer(202, DeliveryAnswer());
  } else {
    answer = Delivered(503, report, DeliveryAnswer());
  }
  metrics_->Request(kWebSub, answer.status);
  return answer;
}

absl::Status Gateway::LoadKeys() {
  if (options_.key_state_file.empty()) return absl::OkStatus();
  return ingest::LoadKeys(options_.key_state_file, &keys_, options_.now());
}

absl::Status Gateway::SaveKeys() {
  absl::MutexLock lock(&save_mu_);
  return Save();
}

absl::Status Gateway::Save() {
  if (options_.key_state_file.empty()) return absl::OkStatus();
  return ingest::SaveKeys(options_.key_state_file, keys_, options_.now());
}

void Gateway::CheckKeys() {
  while (true) {
    KeyFile file;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Gateway* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->checks_.empty();
          },
          this));
      if (stopping_) return;
      file = std::move(checks_.front());
      checks_.pop_front();
    }
    CheckKey(file);
  }
}

void Gateway::CheckKey(const KeyFile& file) {
  absl::StatusOr<FetchResponse> fetched = SafeFetch({file.url, "", ""}, options_.fetch);
  if (fetched.status().code() == absl::StatusCode::kCancelled) return;  // stopping
  bool proved = false;
  if (!fetched.ok()) {
    metrics_->KeyCheck("error");
    spdlog::info("key file {}: {}", file.url, fetched.status().ToString());
  } else {
    proved = fetched->status == 200 && KeyFileProves(fetched->body, file.key);
    metrics_->KeyCheck(proved ? "proved" : "refused");
    if (!proved) {
      spdlog::info("key file {}: HTTP {}, does not hold the key", file.url, fetched->status);
    }
  }
  const std::vector<std::string> held = keys_.Complete(file, proved, options_.now());
  if (held.empty()) return;
  absl::StatusOr<DeliveryReport> report = Deliver(held, SIGNAL_SOURCE_INDEXNOW, kIndexNow);
  if (!report.ok()) {
    spdlog::warn("{} URLs held for key file {} not delivered: {}", held.size(), file.url,
                 report.status().ToString());
  }
}

}  // namespace ingest
}  // namespace recrawl
