#include "ingest/sitemap_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/url.h"
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

// The URL as the poller keys its files: normalised when it can be.
std::string KeyOf(absl::string_view url) {
  absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(url);
  return normal.ok() ? normal->spec() : std::string(url);
}

SitemapFileRecord RecordOf(const feeds::SitemapFileState& state) {
  SitemapFileRecord record;
  record.set_url(state.url);
  record.set_parent(state.parent);
  record.set_registered_at_unix_micros(absl::ToUnixMicros(state.registered_at));
  if (state.kind.has_value()) {
    record.set_kind(*state.kind == feeds::SitemapKind::kUrlset
                        ? SitemapFileRecord::KIND_URLSET
                        : SitemapFileRecord::KIND_SITEMAP_INDEX);
  }
  record.set_etag(state.etag);
  record.set_last_modified(state.last_modified);
  record.mutable_url_ids()->Reserve(static_cast<int>(state.lastmods.size()));
  record.mutable_lastmods_unix_micros()->Reserve(static_cast<int>(state.lastmods.size()));
  for (const auto& [id, lastmod] : state.lastmods) {
    record.add_url_ids(id);
    record.add_lastmods_unix_micros(lastmod);
  }
  return record;
}

// DATA_LOSS when the record's URL fingerprints and lastmods do not pair up.
absl::StatusOr<feeds::SitemapFileState> StateOf(const SitemapFileRecord& record) {
  if (record.url_ids_size() != record.lastmods_unix_micros_size()) {
    return absl::DataLossError(absl::StrCat("sitemap ", record.url(), ": ", record.url_ids_size(),
                                            " URL ids but ", record.lastmods_unix_micros_size(),
                                            " lastmods"));
  }
  feeds::SitemapFileState state;
  state.url = record.url();
  state.parent = record.parent();
  state.registered_at = absl::FromUnixMicros(record.registered_at_unix_micros());
  if (record.kind() == SitemapFileRecord::KIND_URLSET) state.kind = feeds::SitemapKind::kUrlset;
  if (record.kind() == SitemapFileRecord::KIND_SITEMAP_INDEX) {
    state.kind = feeds::SitemapKind::kSitemapIndex;
  }
  state.etag = record.etag();
  state.last_modified = record.last_modified();
  state.lastmods.reserve(record.url_ids_size());
  for (int i = 0; i < record.url_ids_size(); ++i) {
    state.lastmods.emplace_back(record.url_ids(i), record.lastmods_unix_micros(i));
  }
  return state;
}

}  // namespace

SitemapRunner::SitemapRunner(DeliverFn deliver, GatewayMetrics* metrics,
                             SitemapRunnerOptions options)
    : deliver_(std::move(deliver)),
      metrics_(metrics),
      options_([&] {
        options.fetch = SitemapFetchOptions(options.fetch, options.poll.limits);
        options.fetch.cancel = &cancel_;
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
  absl::MutexLock save_lock(&save_mu_);
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  for (const SitemapFileRecord& record : file.files()) {
    absl::StatusOr<feeds::SitemapFileState> state = StateOf(record);
    if (!state.ok()) return absl::DataLossError(absl::StrCat(path, ": ", state.status().message()));
    if (absl::Status s = poller_.RestoreFile(*std::move(state), now); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
  }
  for (const std::string& url : file.urls()) {
    if (absl::Status s = poller_.Register(url, now); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
    }
  }
  saved_ = Snapshot();
  wake_ = true;
  return absl::OkStatus();
}

SitemapStoreFile SitemapRunner::Snapshot() const {
  SitemapStoreFile file;
  for (const feeds::SitemapFileState& state : poller_.FileStates()) {
    *file.add_files() = RecordOf(state);
  }
  return file;
}

absl::Status SitemapRunner::Save() {
  if (options_.state_file.empty()) return absl::OkStatus();
  std::string bytes;
  bool encoded;
  {
    absl::MutexLock lock(&mu_);
    encoded = saved_.SerializeToString(&bytes);
  }
  if (!encoded) {
    return absl::InternalError(
        absl::StrCat("cannot encode the sitemaps for ", options_.state_file));
  }
  return ReplaceFileDurably(options_.state_file, bytes);
}

void SitemapRunner::SaveAcknowledged() {
  absl::MutexLock save_lock(&save_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (!changed_ || !pending_.empty()) return;
    changed_ = false;
    saved_ = Snapshot();
  }
  // Not retried: the next poll or registration saves again, and until then
  // a restart signals the changes since the last save once more.
  if (absl::Status saved = Save(); !saved.ok()) {
    spdlog::warn("sitemap poll state not saved: {}", saved.ToString());
  }
}

absl::Status SitemapRunner::Register(absl::string_view url) {
  absl::MutexLock save_lock(&save_mu_);
  const std::string key = KeyOf(url);
  {
    absl::MutexLock lock(&mu_);
    const size_t before = poller_.Files().size();
    const absl::Time now = options_.now();
    if (absl::Status s = poller_.Register(url, now); !s.ok()) return s;
    if (poller_.Files().size() == before) return absl::OkStatus();  // already registered
    SitemapFileRecord* record = saved_.add_files();
    record->set_url(key);
    record->set_registered_at_unix_micros(absl::ToUnixMicros(now));
    wake_ = true;
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    poller_.Unregister(key).IgnoreError();
    TakeRecords(key);
    return absl::InternalError(absl::StrCat("sitemap: not saved: ", saved.message()));
  }
  return absl::OkStatus();
}

absl::Status SitemapRunner::Unregister(absl::string_view url) {
  absl::MutexLock save_lock(&save_mu_);
  const std::string key = KeyOf(url);
  std::vector<SitemapFileRecord> removed;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = poller_.Unregister(key); !s.ok()) return s;
    removed = TakeRecords(key);
  }
  if (absl::Status saved = Save(); !saved.ok()) {
    absl::MutexLock lock(&mu_);
    for (SitemapFileRecord& record : removed) {
      if (absl::StatusOr<feeds::SitemapFileState> state = StateOf(record); state.ok()) {
        poller_.RestoreFile(*std::move(state), options_.now()).IgnoreError();
      }
      *saved_.add_files() = std::move(record);
    }
    return absl::InternalError(absl::StrCat("sitemap: removal not saved: ", saved.message()));
  }
  return absl::OkStatus();
}

std::vector<SitemapFileRecord> SitemapRunner::TakeRecords(const std::string& url) {
  std::vector<SitemapFileRecord> taken;
  google::protobuf::RepeatedPtrField<SitemapFileRecord> kept;
  for (SitemapFileRecord& record : *saved_.mutable_files()) {
    if (record.url() == url || record.parent() == url) {
      taken.push_back(std::move(record));
    } else {
      *kept.Add() = std::move(record);
    }
  }
  saved_.mutable_files()->Swap(&kept);
  return taken;
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
  cancel_ = true;
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
    SaveAcknowledged();
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
    // Stopping: the file stays as it was.
    if (fetched[i].status().code() == absl::StatusCode::kCancelled) continue;
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
    if (!failed && !result.not_modified) changed_ = true;
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
