#include "ingest/feeds/sitemap_poll.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/url.h"
#include "cluster/url_id.h"
#include "ingest/feeds/gzip.h"

namespace recrawl {
namespace feeds {

namespace {

// One `T` per file of `files`, made by `make`, in the order `before` gives.
template <typename T, typename Files, typename Make, typename Before>
std::vector<T> PerFile(const Files& files, Make make, Before before) {
  std::vector<T> out;
  out.reserve(files.size());
  for (const auto& [url, file] : files) out.push_back(make(file));
  std::sort(out.begin(), out.end(), before);
  return out;
}

}  // namespace

SitemapPoller::SitemapPoller(const SitemapPollOptions& options) : options_(options) {}

SitemapPoller::File* SitemapPoller::Find(absl::string_view url) {
  auto it = files_.find(url);
  return it == files_.end() ? nullptr : &it->second;
}

void SitemapPoller::Schedule(File* file, absl::Time when) {
  schedule_.erase({file->next_fetch, file->url});
  file->next_fetch = when;
  schedule_.insert({when, file->url});
}

void SitemapPoller::AddFile(std::string url, std::string host, std::string parent,
                            absl::Time registered_at, absl::Time now) {
  File& file = files_[url];
  file.url = std::move(url);
  file.host = std::move(host);
  file.parent = std::move(parent);
  file.registered_at = registered_at;
  file.next_fetch = now;
  schedule_.insert({now, file.url});
}

void SitemapPoller::EraseFile(const std::string& url) {
  auto it = files_.find(url);
  if (it == files_.end()) return;
  schedule_.erase({it->second.next_fetch, url});
  files_.erase(it);
}

absl::Status SitemapPoller::Register(absl::string_view url, absl::Time now) {
  absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(url);
  if (!normal.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("sitemap ", normal.status().message()));
  }
  if (const File* file = Find(normal->spec()); file != nullptr) {
    if (file->parent.empty()) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat(
        "sitemap url: ", normal->spec(), " is already polled as a child of ", file->parent));
  }
  AddFile(normal->spec(), std::string(normal->host()), "", now, now);
  return absl::OkStatus();
}

absl::Status SitemapPoller::Unregister(absl::string_view url) {
  absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(url);
  const std::string key = normal.ok() ? normal->spec() : std::string(url);
  File* file = Find(key);
  if (file == nullptr || !file->parent.empty()) {
    return absl::NotFoundError(absl::StrCat("sitemap url: ", key, " is not registered"));
  }
  for (const std::string& child : file->children) EraseFile(child);
  EraseFile(key);
  return absl::OkStatus();
}

std::vector<SitemapFetch> SitemapPoller::NextFetches(absl::Time now, size_t max_fetches) {
  std::vector<SitemapFetch> due;
  while (due.size() < max_fetches && !schedule_.empty() && schedule_.begin()->first <= now) {
    File* file = Find(schedule_.begin()->second);
    SitemapFetch fetch;
    fetch.url = file->url;
    fetch.if_none_match = file->etag;
    fetch.if_modified_since = file->last_modified;
    due.push_back(std::move(fetch));
    Schedule(file, now + options_.in_flight_timeout);
  }
  return due;
}

absl::Time SitemapPoller::NextFetchTime() const {
  return schedule_.empty() ? absl::InfiniteFuture() : schedule_.begin()->first;
}

void SitemapPoller::Fail(File* file, absl::Status error, absl::Time now,
                         SitemapPollResult* result) {
  ++file->consecutive_errors;
  file->last_error = std::string(error.message());
  absl::Duration backoff = options_.error_backoff;
  for (int i = 1; i < file->consecutive_errors && backoff < options_.max_error_backoff; ++i) {
    backoff *= 2;
  }
  Schedule(file, now + std::min(backoff, options_.max_error_backoff));
  result->errors.insert(result->errors.begin(), std::move(error));
}

SitemapPollResult SitemapPoller::OnFetchFailed(absl::string_view url, const absl::Status& error,
                                               absl::Time now) {
  SitemapPollResult result;
  File* file = Find(url);
  if (file == nullptr) {
    result.errors.push_back(
        absl::NotFoundError(absl::StrCat("sitemap url: ", url, " is not polled")));
    return result;
  }
  Fail(file, absl::Status(error.code(), absl::StrCat("sitemap ", url, ": ", error.message())), now,
       &result);
  return result;
}

SitemapPollResult SitemapPoller::OnFetched(absl::string_view url, const SitemapResponse& response,
                                           absl::Time now) {
  SitemapPollResult result;
  File* file = Find(url);
  if (file == nullptr) {
    result.errors.push_back(
        absl::NotFoundError(absl::StrCat("sitemap url: ", url, " is not polled")));
    return result;
  }
  if (response.status == 304) {
    result.not_modified = true;
  } else if (response.status != 200) {
    Fail(file,
         absl::UnavailableError(absl::StrCat("sitemap ", file->url, ": HTTP status ",
                                             response.status, ", not 200 or 304")),
         now, &result);
    return result;
  } else {
    absl::StatusOr<std::string> xml = MaybeInflateGzip(response.body, options_.limits.max_bytes);
    absl::StatusOr<ParsedSitemap> parsed =
        xml.ok() ? ParseSitemap(*xml, options_.limits) : xml.status();
    if (parsed.ok() && parsed->kind == SitemapKind::kSitemapIndex && !file->parent.empty()) {
      parsed = absl::InvalidArgumentError(
          "sitemap: a sitemap index listed by a sitemap index is not followed");
    }
    if (!parsed.ok()) {
      Fail(file,
           absl::Status(parsed.status().code(),
                        absl::StrCat("sitemap ", file->url, ": ",
                                     absl::StripPrefix(parsed.status().message(), "sitemap: "))),
           now, &result);
      return result;
    }
    result.entries = parsed->entries.size();
    result.bad_lastmods = parsed->bad_lastmods;
    file->kind = parsed->kind;
    if (parsed->kind == SitemapKind::kUrlset) {
      TakeUrlset(file, *parsed, now, &result);
    } else {
      TakeIndex(file, *parsed, now, &result);
    }
    file->etag = response.etag;
    file->last_modified = response.last_modified;
  }
  file->consecutive_errors = 0;
  file->last_error.clear();
  file->last_success = now;
  Schedule(file, now + options_.poll_interval);
  return result;
}

void SitemapPoller::TakeUrlset(File* file, const ParsedSitemap& parsed, absl::Time now,
                               SitemapPollResult* result) {
  // An index that became a urlset lets its children go.
  for (const std::string& child : file->children) EraseFile(child);
  result->children_dropped += file->children.size();
  file->children.clear();

  const int64_t registered = absl::ToUnixMicros(file->registered_at);
  const absl::Time latest_trusted = now + options_.max_clock_skew;
  absl::flat_hash_map<uint64_t, int64_t> next;
  next.reserve(parsed.entries.size());
  for (const SitemapEntry& entry : parsed.entries) {
    std::optional<cluster::NormalizedUrl> url = EntryUrl(*file, entry, "sitemap", result);
    if (!url.has_value()) continue;
    const uint64_t id = cluster::UrlIdOf(url->spec());
    auto old = file->lastmods.find(id);
    std::optional<int64_t> seen;
    if (old != file->lastmods.end()) seen = old->second;
    if (auto again = next.find(id); again != next.end()) seen = again->second;  // listed twice
    if (!entry.lastmod.has_value()) {
      ++result->no_lastmod;
    } else if (*entry.lastmod > latest_trusted) {
      ++result->future_lastmods;
    } else {
      const int64_t lastmod = absl::ToUnixMicros(*entry.lastmod);
      if (lastmod > seen.value_or(registered)) {
        Signal& signal = result->signals.emplace_back();
        signal.set_url(url->spec());
        signal.set_time(absl::ToDoubleSeconds(std::min(*entry.lastmod, now) - absl::UnixEpoch()));
        signal.set_source(SIGNAL_SOURCE_SITEMAP);
      }
      seen = std::max(seen.value_or(lastmod), lastmod);
    }
    if (seen.has_value()) next[id] = *seen;
  }
  file->lastmods = std::move(next);
}

std::optional<cluster::NormalizedUrl> SitemapPoller::EntryUrl(const File& file,
                                                              const SitemapEntry& entry,
                                                              absl::string_view kind,
                                                              SitemapPollResult* result) const {
  auto entry_error = [&](absl::Status status) {
    if (result->errors.size() < kMaxEntryErrors) result->errors.push_back(std::move(status));
  };
  absl::StatusOr<cluster::NormalizedUrl> url = cluster::NormalizeUrl(entry.loc);
  if (!url.ok()) {
    ++result->bad_urls;
    entry_error(absl::InvalidArgumentError(
        absl::StrCat(kind, " ", file.url, ": <loc> ", url.status().message())));
    return std::nullopt;
  }
  if (!options_.allow_other_hosts && url->host() != file.host) {
    ++result->off_host;
    entry_error(absl::InvalidArgumentError(
        absl::StrCat(kind, " ", file.url, ": <loc> ", url->spec(), " is not on host ", file.host)));
    return std::nullopt;
  }
  return *std::move(url);
}

void SitemapPoller::TakeIndex(File* file, const ParsedSitemap& parsed, absl::Time now,
                              SitemapPollResult* result) {
  file->lastmods = {};
  absl::flat_hash_set<std::string> listed;
  std::vector<std::string> children;
  for (const SitemapEntry& entry : parsed.entries) {
    std::optional<cluster::NormalizedUrl> url = EntryUrl(*file, entry, "sitemap index", result);
    if (!url.has_value()) continue;
    if (!listed.insert(url->spec()).second) continue;
    const File* existing = Find(url->spec());
    if (existing == nullptr) {
      AddFile(url->spec(), std::string(url->host()), file->url, file->registered_at, now);
      ++result->children_added;
    } else if (existing->parent != file->url) {
      continue;  // tracked already, registered itself or another index's child
    }
    children.push_back(url->spec());
  }
  for (const std::string& child : file->children) {
    if (!listed.contains(child)) {
      EraseFile(child);
      ++result->children_dropped;
    }
  }
  file->children = std::move(children);
}

std::vector<SitemapFileInfo> SitemapPoller::Files() const {
  return PerFile<SitemapFileInfo>(
      files_,
      [](const File& file) {
        SitemapFileInfo info;
        info.url = file.url;
        info.parent = file.parent;
        info.kind = file.kind;
        info.registered_at = file.registered_at;
        info.next_fetch = file.next_fetch;
        info.last_success = file.last_success;
        info.consecutive_errors = file.consecutive_errors;
        info.last_error = file.last_error;
        info.tracked_urls = file.lastmods.size();
        info.children = file.children.size();
        return info;
      },
      [](const SitemapFileInfo& a, const SitemapFileInfo& b) { return a.url < b.url; });
}

std::vector<SitemapFileState> SitemapPoller::FileStates() const {
  return PerFile<SitemapFileState>(
      files_,
      [](const File& file) {
        return SitemapFileState{file.url,
                                file.parent,
                                file.registered_at,
                                file.kind,
                                file.etag,
                                file.last_modified,
                                {file.lastmods.begin(), file.lastmods.end()}};
      },
      [](const SitemapFileState& a, const SitemapFileState& b) {
        return std::make_pair(!a.parent.empty(), a.url) < std::make_pair(!b.parent.empty(), b.url);
      });
}

absl::Status SitemapPoller::RestoreFile(SitemapFileState state, absl::Time now) {
  absl::StatusOr<cluster::NormalizedUrl> normal = cluster::NormalizeUrl(state.url);
  if (!normal.ok() || normal->spec() != state.url) {
    return absl::InvalidArgumentError(
        absl::StrCat("sitemap url: \"", state.url, "\" is not a normalised http(s) URL"));
  }
  if (Find(state.url) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("sitemap url: ", state.url, " is restored twice"));
  }
  File* parent = nullptr;
  if (!state.parent.empty()) {
    parent = Find(state.parent);
    if (parent == nullptr || !parent->parent.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("sitemap url: ", state.url, " is listed by ",
                                                     state.parent, ", not a registered sitemap"));
    }
    parent->children.push_back(state.url);
  }
  AddFile(state.url, std::string(normal->host()), std::move(state.parent), state.registered_at,
          now);
  File* file = Find(state.url);
  file->kind = state.kind;
  file->etag = std::move(state.etag);
  file->last_modified = std::move(state.last_modified);
  file->lastmods.reserve(state.lastmods.size());
  for (const auto& [id, lastmod] : state.lastmods) file->lastmods[id] = lastmod;
  return absl::OkStatus();
}

size_t SitemapPoller::TrackedUrls() const {
  size_t n = 0;
  for (const auto& [url, file] : files_) n += file.lastmods.size();
  return n;
}

}  // namespace feeds
}  // namespace recrawl
