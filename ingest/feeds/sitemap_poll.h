// Polling of registered sitemaps: which files to fetch when (with
// conditional GETs), and which URLs' <lastmod> moved forward since the
// previous poll, each turned into one SITEMAP signal stamped with that
// lastmod.
//
// Files. A registered sitemap is one file; when it turns out to be a
// sitemap index, each sitemap it lists becomes a child file, polled on its
// own schedule, and the children it stops listing are dropped. Children on
// another host than their index are skipped unless allow_other_hosts
// (sitemaps.org: an index lists sitemaps of its own site); an index listed
// by an index is not followed (the protocol forbids nesting). A file
// already tracked (registered itself, or the child of another index) is
// not added twice.
//
// Conditional GETs. A file's last ETag and Last-Modified go back as
// If-None-Match / If-Modified-Since; a 304 changes nothing. Bodies may be
// gzip whatever their Content-Type (detected by magic bytes, inflated up to
// SitemapLimits::max_bytes: a gzip bomb is an error of that file).
//
// Signals. For each URL of a file, the largest lastmod seen is kept. A
// lastmod is a signal when it is later than that, or, for a URL without
// one, later than the time its sitemap was registered: the first poll of a
// file therefore records what it lists and signals only what changed after
// registration. An operator registering a site's sitemap expects its
// changes from then on, not one signal for every URL in the site's history.
// A URL that leaves its file and comes back starts again from the
// registration time (its signal then carries the old lastmod, which the
// shard takes as a duplicate or as stale). A lastmod moving backwards is
// ignored. Entries without a lastmod, or whose <loc> is not a valid URL
// (cluster/url.h) or not on the sitemap's host (unless allow_other_hosts),
// signal nothing and are counted.
//
// Time. Signals are stamped min(lastmod, now), as the shard takes a time
// ahead of its clock within its skew (shard/shard.cc, ItemTime). A lastmod
// more than max_clock_skew ahead of `now` is not trusted: it signals
// nothing and is not recorded, so the URL's previous lastmod stays.
//
// Schedule. A file is due at once when added, then poll_interval after
// each successful poll (200 or 304). After a failed one (transport error,
// an HTTP status other than 200/304, a body that is not a sitemap), it is
// retried after error_backoff, doubled for each further consecutive
// failure up to max_error_backoff, and keeps its previous state. A fetch
// handed out by NextFetches and not reported back within in_flight_timeout
// is handed out again.
//
// State: FileStates gives each file's poll state (what the signals depend
// on: registration time, validators, the lastmods seen) for its owner to
// persist, and RestoreFile takes it back into a fresh poller, due at once,
// so that the changes made in between are signalled and nothing else is.
//
// Memory: per tracked URL with a lastmod, a 64-bit URL fingerprint and the
// lastmod in microseconds in a flat hash map: 17 bytes a slot, about 20 to
// 40 bytes per URL with the table's load factor (no URL text is kept).
// Per file, its URL, validators and schedule (a few hundred bytes).
//
// Pure logic: every call takes `now`; no I/O. Not thread-safe (one owner,
// or the caller's lock).
#ifndef RECRAWL_INGEST_FEEDS_SITEMAP_POLL_H_
#define RECRAWL_INGEST_FEEDS_SITEMAP_POLL_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cluster/url.h"
#include "ingest/feeds/sitemap_parser.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace feeds {

struct SitemapPollOptions {
  absl::Duration poll_interval = absl::Hours(1);
  absl::Duration error_backoff = absl::Minutes(5);
  absl::Duration max_error_backoff = absl::Hours(24);
  absl::Duration in_flight_timeout = absl::Minutes(5);
  // How far a lastmod may be ahead of `now` and still be taken (as `now`).
  absl::Duration max_clock_skew = absl::Minutes(5);
  // Children and entries on other hosts than their sitemap are taken.
  bool allow_other_hosts = false;
  // Per file, uncompressed (and so the inflation bound for gzip bodies).
  SitemapLimits limits;
};

// A GET to make: `url` with these validators ("" when none), the same
// fields as the gateway fetcher's request.
struct SitemapFetch {
  std::string url;
  std::string if_none_match;
  std::string if_modified_since;
};

// The parts of an HTTP response the poller reads.
struct SitemapResponse {
  int status = 0;
  // The ETag and Last-Modified response headers ("" when absent).
  std::string etag;
  std::string last_modified;
  // As received (gzip or not).
  std::string body;
};

// What one reported fetch produced.
struct SitemapPollResult {
  // One per URL whose lastmod moved forward (source SIGNAL_SOURCE_SITEMAP,
  // time in Unix seconds).
  std::vector<Signal> signals;
  // The file's failure (naming the file's URL and what was wrong), then up
  // to kMaxEntryErrors entry problems (a bad <loc>, a URL off the host).
  // Empty when all went well.
  std::vector<absl::Status> errors;
  // The file's entries, and those that signalled nothing for a reason.
  size_t entries = 0;
  size_t no_lastmod = 0;
  size_t bad_lastmods = 0;
  size_t future_lastmods = 0;
  size_t bad_urls = 0;
  size_t off_host = 0;
  // An index's children added and dropped.
  size_t children_added = 0;
  size_t children_dropped = 0;
  bool not_modified = false;
};

// One file as RegisteredFiles lists it.
struct SitemapFileInfo {
  std::string url;
  // The index that lists it; "" for a registered sitemap.
  std::string parent;
  // Known after the first successful parse.
  std::optional<SitemapKind> kind;
  absl::Time registered_at;
  absl::Time next_fetch;
  std::optional<absl::Time> last_success;
  int consecutive_errors = 0;
  std::string last_error;
  size_t tracked_urls = 0;
  size_t children = 0;
};

// One file's poll state as FileStates gives it and RestoreFile takes it.
struct SitemapFileState {
  std::string url;
  // The index that lists it; "" for a registered sitemap.
  std::string parent;
  absl::Time registered_at;
  std::optional<SitemapKind> kind;
  std::string etag;
  std::string last_modified;
  // (URL fingerprint, largest lastmod in Unix µs) of each tracked URL, in no
  // order.
  std::vector<std::pair<uint64_t, int64_t>> lastmods;
};

class SitemapPoller {
 public:
  static constexpr size_t kMaxEntryErrors = 10;

  explicit SitemapPoller(const SitemapPollOptions& options = {});

  // Adds `url` (normalised; INVALID_ARGUMENT naming "sitemap url" when not a
  // valid http(s) URL), due at once; `now` is its registration time (see the
  // file comment). Registering a registered sitemap changes nothing (OK);
  // ALREADY_EXISTS when it is tracked as another index's child.
  absl::Status Register(absl::string_view url, absl::Time now);

  // Drops a registered sitemap with its children and their state; NOT_FOUND
  // when `url` is not registered.
  absl::Status Unregister(absl::string_view url);

  // Files due at `now` (at most `max_fetches`, the most overdue first),
  // each marked in flight for in_flight_timeout.
  std::vector<SitemapFetch> NextFetches(absl::Time now,
                                        size_t max_fetches = std::numeric_limits<size_t>::max());

  // When the next file falls due (absl::InfiniteFuture() when none).
  absl::Time NextFetchTime() const;

  // A fetch's HTTP answer for `url` (as handed out by NextFetches).
  SitemapPollResult OnFetched(absl::string_view url, const SitemapResponse& response,
                              absl::Time now);

  // A fetch that got no HTTP answer (`error`: refused address, timeout,
  // oversized body...): retried with backoff.
  SitemapPollResult OnFetchFailed(absl::string_view url, const absl::Status& error, absl::Time now);

  // Every file, registered sitemaps and children, by URL.
  std::vector<SitemapFileInfo> Files() const;

  // Every file's poll state, registered sitemaps first (then by URL), so
  // that RestoreFile in this order finds each child's index.
  std::vector<SitemapFileState> FileStates() const;

  // Adds a file as FileStates gave it, due at `now`; a child joins its
  // index's children. INVALID_ARGUMENT naming the URL when it is not a
  // valid http(s) URL, when it is tracked already, or when its index is not
  // a registered sitemap tracked here.
  absl::Status RestoreFile(SitemapFileState state, absl::Time now);

  // Tracked URLs over all files (the ones with a recorded lastmod).
  size_t TrackedUrls() const;

 private:
  struct File {
    std::string url;
    std::string host;
    std::string parent;
    absl::Time registered_at;
    absl::Time next_fetch;
    std::optional<SitemapKind> kind;
    std::string etag;
    std::string last_modified;
    std::optional<absl::Time> last_success;
    int consecutive_errors = 0;
    std::string last_error;
    // URL fingerprint (cluster::UrlIdOf) -> largest lastmod, Unix µs.
    absl::flat_hash_map<uint64_t, int64_t> lastmods;
    // An index's children (normalised URLs it owns).
    std::vector<std::string> children;
  };

  File* Find(absl::string_view url);
  void AddFile(std::string url, std::string host, std::string parent, absl::Time registered_at,
               absl::Time now);
  void EraseFile(const std::string& url);
  void Schedule(File* file, absl::Time when);
  // Records a failure of `file` and schedules its retry.
  void Fail(File* file, absl::Status error, absl::Time now, SitemapPollResult* result);
  void TakeUrlset(File* file, const ParsedSitemap& parsed, absl::Time now,
                  SitemapPollResult* result);
  // An entry's <loc> normalised, or nullopt when it does not parse or is off
  // the file's host (counted in `result`, with an entry error naming `kind`,
  // "sitemap" or "sitemap index").
  std::optional<cluster::NormalizedUrl> EntryUrl(const File& file, const SitemapEntry& entry,
                                                 absl::string_view kind,
                                                 SitemapPollResult* result) const;
  void TakeIndex(File* file, const ParsedSitemap& parsed, absl::Time now,
                 SitemapPollResult* result);

  const SitemapPollOptions options_;
  // Node map: File pointers stay valid while files are added.
  absl::node_hash_map<std::string, File> files_;
  // (next_fetch, url) of every file.
  std::set<std::pair<absl::Time, std::string>> schedule_;
};

}  // namespace feeds
}  // namespace recrawl

#endif  // RECRAWL_INGEST_FEEDS_SITEMAP_POLL_H_
