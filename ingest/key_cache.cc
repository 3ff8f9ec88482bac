#include "ingest/key_cache.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cluster/url.h"

namespace recrawl {
namespace ingest {

KeyFile DefaultKeyFile(absl::string_view host, absl::string_view key) {
  return KeyFile{std::string(host), std::string(key),
                 absl::StrCat("https://", host, "/", key, ".txt"), "/"};
}

absl::Status ValidateIndexNowKey(absl::string_view key) {
  if (key.size() < 8 || key.size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: must be 8 to 128 characters, not ", key.size()));
  }
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return absl::InvalidArgumentError("key: may hold only a-z, A-Z, 0-9 and '-'");
    }
  }
  return absl::OkStatus();
}

bool KeyFileProves(absl::string_view content, absl::string_view key) {
  absl::ConsumePrefix(&content, "\xEF\xBB\xBF");
  return !key.empty() && absl::StripAsciiWhitespace(content) == key;
}

absl::StatusOr<bool> KeyCache::Register(absl::string_view host, absl::string_view key) {
  absl::StatusOr<std::string> normal = cluster::NormalizeHost(host);
  if (!normal.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("host: ", normal.status().message()));
  }
  if (absl::Status s = ValidateIndexNowKey(key); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  return registered_.emplace(*normal, std::string(key)).second;
}

bool KeyCache::Unregister(absl::string_view host, absl::string_view key) {
  absl::StatusOr<std::string> normal = cluster::NormalizeHost(host);
  if (!normal.ok()) return false;
  absl::MutexLock lock(&mu_);
  return registered_.erase({*normal, std::string(key)}) > 0;
}

std::vector<KeyCache::RegisteredKey> KeyCache::Registered(absl::string_view host) const {
  std::vector<RegisteredKey> out;
  std::string normal;
  if (!host.empty()) {
    absl::StatusOr<std::string> n = cluster::NormalizeHost(host);
    if (!n.ok()) return out;
    normal = *std::move(n);
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [h, k] : registered_) {
    if (normal.empty() || h == normal) out.push_back({h, k});
  }
  return out;
}

std::vector<KeyCache::ProvenKeyFile> KeyCache::Proven(absl::Time now) const {
  std::vector<ProvenKeyFile> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [url, entry] : entries_) {
    if (entry.state == State::kVerified && entry.until > now)
      out.push_back({entry.file, entry.until});
  }
  return out;
}

bool KeyCache::RestoreProven(const KeyFile& file, absl::Time until, absl::Time now) {
  if (until <= now) return false;
  absl::MutexLock lock(&mu_);
  if (entries_.count(file.url) > 0 || entries_.size() >= options_.max_entries) return false;
  Entry& entry = entries_[file.url];
  entry.file = file;
  entry.state = State::kVerified;
  entry.until = until;
  return true;
}

void KeyCache::Expire(absl::Time now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.state != State::kPending && it->second.until <= now) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

bool KeyCache::Hold(Entry* entry, const std::vector<std::string>& urls) {
  if (held_urls_ + urls.size() > options_.max_held_urls) return false;
  entry->held.insert(entry->held.end(), urls.begin(), urls.end());
  held_urls_ += urls.size();
  return true;
}

KeyCache::Admission KeyCache::Admit(const KeyFile& file, const std::vector<std::string>& urls,
                                    absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (registered_.count({file.host, file.key}) > 0) return Admission::kGranted;
  auto it = entries_.find(file.url);
  if (it != entries_.end() && it->second.state != State::kPending && it->second.until <= now) {
    entries_.erase(it);
    it = entries_.end();
  }
  if (it == entries_.end()) {
    if (entries_.size() >= options_.max_entries) Expire(now);
    if (entries_.size() >= options_.max_entries) return Admission::kBusy;
    Entry entry;
    entry.file = file;
    entry.state = State::kPending;
    entry.until = now + options_.pending_timeout;
    if (!Hold(&entry, urls)) return Admission::kBusy;
    entries_.emplace(file.url, std::move(entry));
    return Admission::kStartCheck;
  }
  Entry& entry = it->second;
  switch (entry.state) {
    case State::kVerified:
      return Admission::kGranted;
    case State::kFailed:
      return Admission::kFailed;
    case State::kPending:
      if (!Hold(&entry, urls)) return Admission::kBusy;
      if (entry.until <= now) {
        entry.until = now + options_.pending_timeout;
        return Admission::kStartCheck;
      }
      return Admission::kPending;
  }
  return Admission::kBusy;
}

std::vector<std::string> KeyCache::Complete(const KeyFile& file, bool proved, absl::Time now) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[file.url];
  entry.file = file;
  std::vector<std::string> held = std::move(entry.held);
  entry.held.clear();
  held_urls_ -= std::min(held_urls_, held.size());
  entry.state = proved ? State::kVerified : State::kFailed;
  entry.until = now + (proved ? options_.verified_ttl : options_.failed_ttl);
  if (!proved) held.clear();
  return held;
}

size_t KeyCache::pending() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [url, entry] : entries_) n += entry.state == State::kPending;
  return n;
}

size_t KeyCache::held_urls() const {
  absl::MutexLock lock(&mu_);
  return held_urls_;
}

}  // namespace ingest
}  // namespace recrawl
