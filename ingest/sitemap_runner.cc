#include "ingest/sitemap_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ingest/durable_file.h"
#include "ingest/sitemap_store.pb.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kSitemap[] = "sitemap";

FetchOptions SitemapFetchOptions(FetchOptions fetch, const feeds::SitemapLimits& limits) {
  fetch.max_body_bytes = limits.max_bytes;
  return fetch;
}

}  // namespace

SitemapRunner::SitemapRunner(DeliverFn deliver, GatewayMetrics* metrics,
                             SitemapRunnerOptions options)
    : deliver_(std::move(deliver)),
      metrics_(metrics),
      options_([&] {
        options.fetch = SitemapFetchOptions(options.fetch, options.poll.limits);
        options.max_concurrent_fetches = std::max(1, options.max_concurrent_fetches);
        return std::move(options);
      }()),
      poller_(options_.poll) {}

SitemapRunner::~SitemapRunner() { Stop(); }

absl::Status SitemapRunner::Load() {
  const std::string& path = options_.state_file;
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<std::string>> bytes = ReadFileIfPresent(path);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return absl::OkStatus();
  SitemapStoreFile file;
  if (!file.ParseFromString(**bytes)) {
    return absl::DataLossError(absl::StrCat(path, ": not a saved sitemap file"));
  }
  absl::MutexLock lock(&mu_);
  for (const std::string& url : file.urls()) {
    if (absl::Status s = poller_.Register(url, options_.now()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
  }
  wake_ = true;
  return absl::OkStatus();
}

absl::Status SitemapRunner::Save() {
  if (options_.state_file.empty()) return absl::OkStatus();
  SitemapStoreFile file;
  {
    absl::MutexLock lock(&mu_);
    for (const feeds::SitemapFileInfo& f : poller_.Files()) {
      if (f.parent.empty()) file.add_urls(f.url);
    }
  }
  std::string bytes;
  if (!file.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat("cannot encode the sitemaps for ", options_.state_file));
  }
  return ReplaceFileDurably(options_.state_file, bytes);
}

absl::Status SitemapRunner::Register(absl::string_view url) {
  absl::MutexLock save_lock(&save_mu_);
  size_t before;
  {
    absl::MutexLock lock(&mu_);
    before = poller_.Files().size();
    if (absl::Status s = poller_.Register(url, options_.now()); !s.ok()) return s;
    if (poller_.Files().size() == before) return absl::OkStatus();  // already registered
    wake_ = true;
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    poller_.Unregister(url).IgnoreError();
    return absl::InternalError(absl::StrCat("sitemap: not saved: ", saved.message()));
  }
  return absl::OkStatus();
}

absl::Status SitemapRunner::Unregister(absl::string_view url) {
  absl::MutexLock save_lock(&save_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = poller_.Unregister(url); !s.ok()) return s;
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    poller_.Register(url, options_.now()).IgnoreError();
    return absl::InternalError(absl::StrCat("sitemap: removal not saved: ", saved.message()));
  }
  return absl::OkStatus();
}

std::vector<feeds::SitemapFileInfo> SitemapRunner::Files() const {
  absl::MutexLock lock(&mu_);
  return poller_.Files();
}

size_t SitemapRunner::Undelivered() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

void SitemapRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void SitemapRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void SitemapRunner::Run() {
  while (true) {
    Poll();
    DeliverPending();
    absl::MutexLock lock(&mu_);
    absl::Time until = poller_.NextFetchTime();
    if (!pending_.empty()) until = std::min(until, options_.now() + options_.retry_interval);
    // The poller's clock may not be the wall clock; wake at least each
    // second to look again.
    const absl::Duration wait =
        std::clamp(until - options_.now(), absl::ZeroDuration(), absl::Seconds(1));
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](SitemapRunner* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
                               return self->stopping_ || self->wake_;
                             },
                             this),
                         wait);
    if (stopping_) return;
    wake_ = false;
  }
}

void SitemapRunner::Poll() {
  std::vector<feeds::SitemapFetch> due;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    due = poller_.NextFetches(options_.now(), static_cast<size_t>(options_.max_concurrent_fetches));
  }
  if (due.empty()) return;
  std::vector<absl::StatusOr<FetchResponse>> fetched(due.size(), absl::UnknownError("not fetched"));
  std::vector<std::thread> fetchers;
  for (size_t i = 0; i < due.size(); ++i) {
    fetchers.emplace_back([this, &due, &fetched, i] {
      fetched[i] =
          SafeFetch({due[i].url, due[i].if_none_match, due[i].if_modified_since}, options_.fetch);
    });
  }
  for (std::thread& t : fetchers) t.join();

  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < due.size(); ++i) {
    feeds::SitemapPollResult result;
    if (!fetched[i].ok()) {
      result = poller_.OnFetchFailed(due[i].url, fetched[i].status(), options_.now());
    } else {
      feeds::SitemapResponse response;
      response.status = fetched[i]->status;
      response.etag = fetched[i]->etag;
      response.last_modified = fetched[i]->last_modified;
      response.body = std::move(fetched[i]->body);
      result = poller_.OnFetched(due[i].url, response, options_.now());
    }
    const bool failed =
        !fetched[i].ok() || (!result.errors.empty() && result.entries == 0 && !result.not_modified);
    metrics_->Fetch(kSitemap, failed ? "error" : result.not_modified ? "not_modified" : "ok");
    for (const absl::Status& error : result.errors) {
      spdlog::info("sitemap {}: {}", due[i].url, error.ToString());
    }
    for (Signal& s : result.signals) pending_.push_back(std::move(s));
  }
}

void SitemapRunner::DeliverPending() {
  std::vector<Signal> signals;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.empty()) return;
    signals.assign(std::make_move_iterator(pending_.begin()),
                   std::make_move_iterator(pending_.end()));
    pending_.clear();
  }
  absl::StatusOr<DeliveryReport> report = deliver_(signals);
  if (report.ok()) return;
  spdlog::warn("{} sitemap signals not delivered, kept for the next round: {}", signals.size(),
               report.status().ToString());
  absl::MutexLock lock(&mu_);
  for (Signal& s : signals) pending_.push_back(std::move(s));
}

}  // namespace ingest
}  // namespace recrawl
