// Drives a feeds::SitemapPoller (ingest/feeds/sitemap_poll.h): a background
// thread takes the files due (NextFetches), fetches them through SafeFetch
// with their conditional headers (up to max_concurrent_fetches at once),
// reports each answer back (OnFetched / OnFetchFailed) and hands the
// signals that come out to `deliver` (the gateway's SignalSink, source
// SITEMAP). Signals whose delivery fails (the stream to the coordinator
// broken) are kept and delivered again on the next round, after
// retry_interval at the latest; they are not dropped.
//
// Persistence: with state_file, the polled files and their poll state
// (registration time, ETag / Last-Modified, each tracked URL's largest
// lastmod: feeds::SitemapFileState) are kept there
// (ingest/sitemap_store.proto, replaced whole and durably by
// ingest/durable_file.h). Register and Unregister return only once the
// change is saved, and undo it when it cannot be. The poll state is saved
// once per round that changed it, and only once every signal it produced is
// acknowledged: until then the file keeps the state before, so a crash in
// between signals those changes again after the restart rather than losing
// them. After Load each file is due at once; a URL whose lastmod moved
// while the gateway was down is signalled, the others are not. The file
// holds about 16 bytes per tracked URL (its fingerprint and lastmod) and
// the runner keeps the last saved state in memory as well.
//
// Thread-safe.
#ifndef RECRAWL_INGEST_SITEMAP_RUNNER_H_
#define RECRAWL_INGEST_SITEMAP_RUNNER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ingest/feeds/sitemap_poll.h"
#include "ingest/gateway_metrics.h"
#include "ingest/safe_fetch.h"
#include "ingest/signal_sink.h"
#include "ingest/sitemap_store.pb.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace ingest {

struct SitemapRunnerOptions {
  feeds::SitemapPollOptions poll;
  // The fetches' guards; max_body_bytes is raised to poll.limits.max_bytes
  // (a gzip body is never larger than what it inflates to).
  FetchOptions fetch;
  int max_concurrent_fetches = 4;
  // How long undelivered signals wait before they are sent again.
  absl::Duration retry_interval = absl::Seconds(5);
  // Where the registered sitemaps are kept; empty: in memory only.
  std::string state_file;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class SitemapRunner {
 public:
  // Delivers signals and says what became of them (Gateway::DeliverSignals).
  using DeliverFn = std::function<absl::StatusOr<DeliveryReport>(std::vector<Signal>)>;

  // `metrics` must outlive the runner. Polls nothing until Start.
  SitemapRunner(DeliverFn deliver, GatewayMetrics* metrics, SitemapRunnerOptions options);
  // Stop()s.
  ~SitemapRunner();
  SitemapRunner(const SitemapRunner&) = delete;
  SitemapRunner& operator=(const SitemapRunner&) = delete;

  // Restores the files and poll state saved in state_file (before any
  // Register); OK without one or when it does not exist; DATA_LOSS
  // naming the file when it cannot be read, INVALID_ARGUMENT when it holds
  // a bad URL or a child without its index.
  absl::Status Load();

  // Starts the polling thread. Once only.
  void Start();
  // Ends the polling thread: its fetches in flight are cancelled
  // (FetchOptions::cancel), the signals of the round are delivered once
  // more (the poll state of those still undelivered is not saved, so that
  // a restart signals them again). Idempotent.
  void Stop();

  // feeds::SitemapPoller::Register / Unregister, saved before they return
  // (INTERNAL when the save fails; the change is then undone).
  absl::Status Register(absl::string_view url);
  absl::Status Unregister(absl::string_view url);
  // Every tracked file (registered sitemaps and their children).
  std::vector<feeds::SitemapFileInfo> Files() const;
  // Signals waiting to be delivered again.
  size_t Undelivered() const;

 private:
  void Run();
  // One round: fetch what is due, report it, deliver what is pending.
  void Poll();
  void DeliverPending();
  // Saves the poll state when a round changed it and all its signals are
  // acknowledged.
  void SaveAcknowledged();
  // The poller's state as saved.
  SitemapStoreFile Snapshot() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes saved_ to state_file.
  absl::Status Save() ABSL_EXCLUSIVE_LOCKS_REQUIRED(save_mu_);
  // Removes the records of `url` and its children from saved_.
  std::vector<SitemapFileRecord> TakeRecords(const std::string& url)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DeliverFn deliver_;
  GatewayMetrics* const metrics_;
  // Set by Stop; options_.fetch.cancel points here.
  std::atomic<bool> cancel_{false};
  const SitemapRunnerOptions options_;

  // Serialises registrations with their saves (taken before mu_).
  absl::Mutex save_mu_;
  mutable absl::Mutex mu_;
  feeds::SitemapPoller poller_ ABSL_GUARDED_BY(mu_);
  std::deque<Signal> pending_ ABSL_GUARDED_BY(mu_);
  // What state_file holds (or is about to): the state as of the last round
  // whose signals were all acknowledged, with the registrations since.
  SitemapStoreFile saved_ ABSL_GUARDED_BY(mu_);
  // A fetch changed the poller's state since saved_ was taken from it.
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  // Set when a sitemap is registered, so that the thread wakes for it.
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_SITEMAP_RUNNER_H_
