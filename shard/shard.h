// The shard core: a set of URLs, their durable state, and the answer to
// "what should be crawled next here" at any time.
//
// Pure logic: every call takes the shard's current time `now` (seconds,
// proto/common.proto) and no call does network I/O. The server
// (services/shard_server.cc) adapts gRPC to these calls and serialises them;
// a Shard is not thread-safe. Inside a call it may use a second thread of
// its own (SideThread: a bulk upsert's pages, start-up's memory), which has
// finished whenever the call returns.
//
// State. The hot per-URL state lives in memory: the scheduling index
// (shard/index/) ranks pages, PageTable holds what signals, picks and
// reports need besides (docs/design.md, "Why memory first": a shard cannot read RocksDB per signal
// or per pick). Every mutation is also written to the UrlStore, as whole records for new URLs and
// as blind patches (UrlStore::Batch::PatchUrl) for hot updates, one WriteBatch per request; a
// request is acknowledged (the call returns OK) only after that batch is in RocksDB's write-ahead
// log, and with `sync` after it is on disk. Counted signals and lease
// grants are the exception: a batch's go into one journal entry
// (journal_writer.h), and a URL's record takes them in when the URL is
// crawled or, for URLs whose entries are older than the journal's window,
// in a fold; start-up replays the journal on top of the records (each
// record says from which entry on).
// Point reads of the store serve the operator paths only: an upsert of an
// existing URL (its stored prior and URL, which also catches id
// collisions), delete and GetUrlState.
//
// Start-up rebuilds memory from one scan of the store (Open), restores
// leases, holds and learning state, and builds the index, so that the first
// pick is as fast as any.
//
// Requests and answers are the wire messages of proto/shard.proto: the
// server stays a thin adapter, and the fuzz target drives these handlers
// directly. A handler fails as a whole (non-OK status) only when the request
// is malformed as a whole (too many items: RESOURCE_EXHAUSTED; an invalid
// field of the request itself: INVALID_ARGUMENT) or the store failed;
// otherwise each rejected item is reported in its BatchResult and the rest
// is applied.
#ifndef RECRAWL_SHARD_SHARD_H_
#define RECRAWL_SHARD_SHARD_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/limits.h"
#include "cluster/routing.h"
#include "cluster/url.h"
#include "cluster/url_id.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "proto/shard.pb.h"
#include "shard/host_prior_table.h"
#include "shard/host_registry.h"
#include "shard/host_trust.h"
#include "shard/index/scheduling_index.h"
#include "shard/journal_writer.h"
#include "shard/learning.h"
#include "shard/lease_request_log.h"
#include "shard/lease_table.h"
#include "shard/page_table.h"
#include "shard/peek_log.h"
#include "shard/probe_queue.h"
#include "shard/rate_window.h"
#include "shard/side_thread.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {

struct ShardOptions {
  // This shard's place among num_shards: it owns the URLs routed to
  // shard_index (routing.h). Checked against the store.
  uint32_t shard_index = 0;
  uint32_t num_shards = 1;
  // The routing rule of a new store (default: site). A store keeps the one
  // it was made with; a different one given here is refused.
  std::optional<cluster::Routing> routing;

  // The crawl value function and T_DELAY (main paper App. C) of a new
  // store; a store keeps the ones last set (SetPolicy) unless overridden.
  policy::CrawlPolicy policy = policy::CrawlPolicy::GreedyNcis();
  double t_delay = 0.0;
  bool override_policy = false;
  bool override_t_delay = false;

  // The change model of URLs whose upsert leaves it out (per second).
  double default_change_rate = 1.0 / 86400;
  double default_recall = 0.5;
  double default_false_rate = 0.1 / 86400;
  // Signals for unknown URLs: register the URL with the defaults and this
  // importance, or count and skip it.
  bool register_unknown_urls = false;
  double default_importance = 1.0;

  // Times (signals, fetches, a new URL's last crawl) may be this far ahead
  // of `now`; beyond, they are rejected with OUT_OF_RANGE, or taken as
  // `now` with clamp_future_times.
  double max_clock_skew = 300.0;
  bool clamp_future_times = false;
  // PeekTop and Lease times at most this far ahead of `now`.
  double max_lookahead = 3600.0;

  double default_lease_duration = 600.0;
  double max_lease_duration = cluster::kMaxLeaseDuration;
  // A failed fetch holds the URL back this long, doubled for each further
  // consecutive failure, at most max_failure_backoff.
  double failure_backoff = 60.0;
  double max_failure_backoff = 86400.0;

  // Input limits.
  int max_batch_items = 10000;
  cluster::UrlLimits url_limits;
  size_t max_holder_bytes = cluster::kMaxHolderBytes;
  size_t max_digest_bytes = 64;
  double max_importance = 1e12;
  double max_rate = 1e6;  // Δ and ν, per second
  double max_host_delay = 30 * 86400.0;
  double max_t_delay = 30 * 86400.0;
  int max_approx_terms = 1000;

  // Signals of a precision λΔ/(λΔ + ν) below this are ignored in ranking:
  // the index sees the page without signals. Such a signal is worth less
  // than min_signal_precision / α of elapsed time (β ≈ precision / α), and
  // the exact NCIS value costs time linear in ν/Δ (4 ms at ν/Δ = 100 with
  // λ → 0, 0.7 s at 10^5), which a client's prior or a learnt estimate
  // must not be able to impose on every pick. At 1% the worst case measured
  // was 0.08 ms per value.
  double min_signal_precision = 0.01;
  // A host's pages are ranked by the signals of the sources whose log-odds
  // per signal is at least this share of its best source's, once its crawls
  // show it (host_trust.h; policy::MultiSourceModel::TrustedSources). 0: by
  // every source's signals.
  double trusted_source_share = 0.5;
  // Signals of different sources whose times lie within this many seconds
  // of each other are taken as one change's (a joint event,
  // docs/multi_source_model.md (M2)) when learning per-source trust and
  // when a host is ranked by its trusted sources' merged stream; 0: every
  // signal is its source's own event.
  double joint_signal_window = 60.0;

  LearningOptions learning;
  // Host pooling (host_prior_table.h): a page whose prior is the default
  // learns from its host's prior once the host's crawls have fitted one.
  // Its memory: 4 bytes per host, and 100 per host with crawl outcomes on
  // two of its pages or more (~2 bytes a URL in the 10^7-URL benchmark,
  // docs/benchmarks.md).
  bool pool_host_priors = true;
  HostLearningOptions host_learning;
  // The index is told about a new estimate when it moved by this much
  // (ChangedMeaningfully).
  double push_threshold = 0.02;

  // Signal batches kept in the journal before the URLs they touched and that
  // were not crawled since get their signal state written to their records
  // (a fold). Start-up replays up to this many batches (~0.1 µs a signal).
  uint64_t journal_window = 8192;

  // Threads that scan the store at start-up (store/parallel_scan.h),
  // besides the one that builds the tables; 0: that one scans too. With 2
  // the building thread's CPU time fell by a third (4.0 -> 2.7 s at 10^6
  // URLs), which shortens a restart where a core is free; the process's
  // CPU time stays (~4 s, so no gain on a saturated machine). With glibc's
  // default settings the scanning threads' malloc arenas keep their free
  // tops resident after the threads exit (7-12 MB at 10^6 URLs, more than
  // the 200 B/URL memory target can spare): a process that runs a shard
  // sets SetShardMallocOptions (malloc_options.h), with which a restart's
  // resident memory is the same with 2 threads as with 0.
  int startup_threads = 2;

  // Sync every write, whatever the request asks.
  bool sync_writes = false;
  // Lease ids are reserved in blocks of this many (one meta write each).
  uint64_t lease_id_block = uint64_t{1} << 20;

  // The index's candidate pool: larger than the index's own default, which
  // suits one pick at a time. A shard leases in batches and in bursts (many
  // fetchers starting at once), and each time the pool runs dry the index
  // lowers its level Λ by an O(m) rebuild; with 8192 candidates leases ran
  // 1.6x (steady) to 4.7x (burst) faster at 3·10^5 URLs (shard_benchmark).
  SchedulingIndex::Options index = {/*target_candidates=*/8192,
                                    /*max_candidates=*/32768};
};

// What Open found in the store.
struct StartupReport {
  int64_t urls = 0;
  int64_t hosts = 0;
  int64_t leases = 0;  // active leases restored
  int64_t holds = 0;
  // Records skipped: unreadable (ScanStats) or with values the shard
  // rejects; the first few described.
  int64_t malformed = 0;
  int64_t orphans = 0;
  // Journal entries replayed.
  int64_t journal_entries = 0;
  // Host records whose per-source trust was inconsistent (the host starts
  // learning afresh).
  int64_t skipped_host_trust = 0;
  // The store's estimate of its URL count, which the tables were sized for.
  int64_t estimated_urls = 0;
  // Wall time of the steps: the host records' scan, the scan of the URL
  // records loaded into memory, the journal's replay, the index built from
  // memory, and its level set (the index's one O(m) step, at the first
  // pick).
  double hosts_seconds = 0.0;
  double load_seconds = 0.0;
  double replay_seconds = 0.0;
  double index_seconds = 0.0;
  double level_seconds = 0.0;
  std::vector<std::string> errors;
};

class Shard {
 public:
  // Opens a shard on `store` at time `now`: reads its settings, rebuilds the
  // in-memory state from a scan, and builds the index. Fails if the store
  // belongs to another shard index or count, or cannot be read.
  static absl::StatusOr<std::unique_ptr<Shard>> Open(std::unique_ptr<UrlStore> store,
                                                     const ShardOptions& options, double now);

  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;
  ~Shard();

  absl::StatusOr<UpsertUrlsResponse> UpsertUrls(const UpsertUrlsRequest& req, double now);
  absl::StatusOr<DeleteUrlsResponse> DeleteUrls(const DeleteUrlsRequest& req, double now);
  absl::StatusOr<SignalBatchAck> IngestSignals(const SignalBatch& batch, double now);
  absl::StatusOr<PeekTopResponse> PeekTop(const PeekTopRequest& req, double now);
  absl::StatusOr<LeaseResponse> Lease(const LeaseRequest& req, double now);
  absl::StatusOr<ReleaseLeasesResponse> ReleaseLeases(const ReleaseLeasesRequest& req, double now);
  absl::StatusOr<RenewLeasesResponse> RenewLeases(const RenewLeasesRequest& req, double now);
  absl::StatusOr<ReportCrawlsResponse> ReportCrawls(const ReportCrawlsRequest& req, double now);
  absl::StatusOr<UrlState> GetUrlState(const GetUrlStateRequest& req, double now);
  ShardStats GetStats(double now);
  absl::StatusOr<SetHostPolitenessResponse> SetHostPoliteness(const SetHostPolitenessRequest& req,
                                                              double now);
  absl::StatusOr<SetPolicyResponse> SetPolicy(const SetPolicyRequest& req, double now);

  // Writes the per-source trust of every host that learnt since its last
  // write (host_trust.h), then RocksDB's memtables to disk (graceful
  // shutdown: a restart then replays no log).
  absl::Status Flush();

  const StartupReport& startup() const { return startup_; }
  const ShardOptions& options() const { return options_; }
  // Fits of never-crawled pages' priors made (PriorRanking), for tests.
  uint64_t prior_fits() const { return prior_ranking_.fits(); }
  // Bytes of the in-memory tables (index, pages, URL text, hosts, leases);
  // RocksDB's own memory is not included.
  size_t MemoryBytes() const;
  // RocksDB's own memory.
  StoreMemory StoreMemoryBytes() const { return store_->Memory(); }
  const SchedulingIndex& index() const { return index_; }

  // An UpsertUrls batch with at least this many new URLs makes their pages
  // on a second thread while the store writes their records.
  static constexpr size_t kOverlappedItems = 64;

 private:
  Shard(std::unique_ptr<UrlStore> store, const ShardOptions& options);

  // shard.cc
  absl::Status Start(double now);
  // What the index holds of a page of pages_ (all of them are in it), so
  // that the page table need not keep a copy.
  PageView Indexed(PageId page) const { return index_.View(page).value(); }
  double LastCrawl(PageId page) const { return Indexed(page).last_crawl; }
  // Moves the clock to max(now_, now) and ends the leases and holds due.
  absl::Status Advance(double now);
  absl::Status CheckWritable() const;
  // What every mutating request does first: CheckWritable, then Advance.
  absl::Status BeginWrite(double now);
  // RESOURCE_EXHAUSTED naming `field` when a batch has more than
  // max_batch_items items.
  absl::Status CheckBatchSize(absl::string_view field, int items) const;
  // Writes batch_; the error, if any, is latched (write_error_).
  absl::Status Commit(bool sync);
  // Commit, with `work` (`items` items of it) done meanwhile: for a batch of
  // at least kOverlappedItems, `work` runs on Side() while this thread writes
  // the store, and both have ended when this returns; a smaller one is
  // written after `work`. `work` must touch neither batch_ nor store_, and
  // must not fail: its result is in memory whether or not the write
  // succeeds, as Commit's callers' is.
  absl::Status CommitAlongside(bool sync, size_t items, absl::FunctionRef<void()> work);
  // side_, made if it was not.
  SideThread& Side();
  void WriteMeta();
  uint64_t NextLeaseId();
  // Leases `page` (taken out of the index already) for slot `slot` of
  // `req`, valued `value` at `time`, into `response` and the journal entry.
  void GrantLease(PageId page, double value, double time, size_t slot, const LeaseRequest& req,
                  double duration, LeaseResponse* response);
  // A request's lease_duration: 0 means the default; else in (0, max].
  absl::StatusOr<double> LeaseDuration(double requested) const;
  // A time given by a client for an item: 0 means now; must be finite and
  // >= 0; ahead of now_ by at most the clock skew (else OUT_OF_RANGE, or
  // now_ with clamp_future_times); clamped to now_ otherwise.
  absl::StatusOr<double> ItemTime(double t, const char* field) const;
  // The shard owning `host`'s URLs under the store's routing.
  int32_t OwnerOf(absl::string_view host) const;
  // FAILED_PRECONDITION naming `field` unless this shard owns `host`.
  absl::Status CheckOwner(absl::string_view host, const char* field) const;
  policy::PageParams Defaults() const;
  // Memory and store: the page and everything about it.
  void RemovePage(PageId page);
  // Ends the page's lease or hold, if any, in memory.
  bool EndLeaseAndHold(PageId page);
  // A page's model for the index, checked the way the index checks it.
  static bool IndexableModel(const policy::PageParams& params, double max_rate);
  // What the index ranks a page of `host` with: `model`, with the (λ, ν) of
  // the host's trusted sources where it has a choice (host_trust.h), and
  // without signals of negligible precision (min_signal_precision).
  policy::PageParams IndexView(HostId host, const policy::PageParams& model) const;
  // The model a page of `host` is ranked by, before IndexView: its learnt
  // `model`, or for a page without a crawl outcome (`learnt` false) its
  // prior `model` made optimistic (PriorRanking), or, when that prior is the
  // default and the host has a pooled prior, that one made optimistic
  // (host_prior_table.h).
  policy::PageParams RankingModel(HostId host, const policy::PageParams& model, bool learnt);
  // Writes the host's record (politeness, trust, pooled learning) into
  // batch_ and marks what it holds as written.
  void WriteHost(HostId host);

  // shard_recovery.cc: start-up's load of the records and replay of the
  // journal (shard_recovery.h).
  class Recovery;
  // The loaded pages' signal counts, as the replay left them, and their
  // leases and holds, into the index.
  void IndexLoadedState();
  // Of `page`'s n_cis signals since its last crawl, those that count in
  // ranking: for a host ranked by its trusted sources (host_trust.h) and a
  // split by source that is known, TrustedSignals; else all.
  int64_t RankedSignals(PageId page, int64_t n_cis) const;
  // Of the signals in `split`, the events of `host`'s trusted sources'
  // merged stream: their single-source events and the joint events.
  int64_t TrustedSignals(HostId host, const IntervalSignals& split) const;

  // shard_urls.cc
  // A URL being added: what its page and its record are made of.
  struct NewPage {
    cluster::UrlId id = 0;  // UrlIdOf(url.spec())
    cluster::NormalizedUrl url;
    std::string host;  // the politeness host
    policy::PageParams model;
    double last_crawl = 0.0;
  };
  // Applies `spec` to the existing URL `url` (`id` is UrlIdOf(url.spec())),
  // or, for a URL the shard does not hold, puts its record into batch_ and
  // appends it to `added`, whose pages the caller makes (AddPage).
  // `added_path_bytes` counts the URL text the pages of `added` will take,
  // so that a URL is refused here, not there, when the arena would be full.
  absl::Status UpsertOne(const UrlSpec& spec, cluster::NormalizedUrl url, cluster::UrlId id,
                         std::vector<NewPage>* added, size_t* added_path_bytes);
  // The new page in memory and in the index, or kNoPage if the URL text
  // arena is full. Touches neither batch_ nor store_.
  PageId AddPage(const NewPage& page);
  // The new page's record: what it leaves out reads as its start (the
  // estimate as the prior, no crawls, signals or learning; records.proto).
  UrlRecord NewRecord(const NewPage& page) const;

  // shard_signals.cc
  // Re-ranks the page at its `slot.n_cis`-th signal since its crawl,
  // received at `t` (`indexed`: the index's view of the page, whose model
  // a signal does not change), with its signal rate re-estimated over
  // the open interval too (SignalCountRefreshesRate, SignalRate): signals
  // say how often a page is signalled long before crawls say how often it
  // changes. The store keeps the fitted model; after a restart the page
  // ranks by it until its next crawl or refresh.
  void RankBySignalRate(PageId page, const PageSlot& slot, const PageView& indexed, double t);
  // Whether a page of `host` that never learnt, with prior `model`, is
  // indexed with `indexed` = IndexView(RankingModel(host, model, false))
  // rescaled to some signal rate (WithSignalRate), rounded to float: its
  // ranking model is its own prior's fit (not a pooled host prior), the
  // host has no trusted model that IndexView puts in, and the view has
  // signals. Every Upsert of such a page's model is of that form.
  bool RanksByOwnPriorFit(HostId host, const policy::PageParams& model,
                          const policy::PageParams& indexed) const;
  // The page has journaled signals or a lease its record lacks (from entry
  // `seq` on).
  void MarkUnfolded(PageId page, uint64_t seq);
  // Ends the request's journal entry (JournalWriter::WriteEntry) into
  // batch_: folds the pages whose oldest unfolded entry left the window,
  // writes the entry, and drops the entries no record needs any more.
  void FoldJournal();
  // The page's signal state as a patch, as of the next journal entry.
  void SignalStatePatch(const PageSlot& slot, double last_crawl, UrlRecord* patch) const;
  // The time of the page's latest signal as shown: latest_signal is of the
  // senders' times (the duplicate check's), which may be a little ahead of
  // the clock; this is not. Negative when none since the last crawl.
  double LastSignalTime(const PageSlot& slot, double last_crawl) const;

  // The host's record: its politeness and what its crawls taught about
  // its signal sources.
  HostRecord HostRecordOf(HostId host) const;

  // shard_crawls.cc
  absl::Status ReportOne(const CrawlReport& report, ReportCrawlsResponse* response);
  void RecordSuccess(PageId page, double fetch_time, const std::string& digest,
                     CrawlOutcome outcome, ReportCrawlsResponse* response);
  void RecordFailure(PageId page, double fetch_time);
  // Adds a crawl interval whose signals are known by source to the host's
  // per-source trust, and writes the host's record when it is due.
  void LearnTrust(HostId host, const LearnedModel& fit, double tau, const IntervalSignals& signals,
                  bool changed);
  // Ends lease `id` unfetched if it is active (its URL eligible again);
  // true if it was.
  bool ReleaseLease(uint64_t id);

  ShardOptions options_;
  std::unique_ptr<UrlStore> store_;
  UrlStore::Batch batch_;
  // A report's record patch, cleared and reused: it keeps its sub-messages
  // allocated (about ten allocations a report otherwise).
  UrlRecord patch_;
  absl::Status write_error_;
  // The shard's second thread (CommitAlongside, Start's zeroing ahead);
  // made at its first use, by Side().
  std::unique_ptr<SideThread> side_;

  SchedulingIndex index_;
  PriorRanking prior_ranking_;
  // Exploration crawls that Lease gives slots to ahead of the argmax.
  ProbeQueue probes_;
  PageTable pages_;
  HostRegistry hosts_;
  // Per host: how far each signal source can be trusted, and the prior its
  // pages' crawls pooled have taught.
  HostTrustTable trust_;
  HostPriorTable host_priors_;
  LeaseTable leases_;
  LeaseRequestLog lease_requests_;
  // Recent peeks' picks, for the Lease that names one (peek_log.h).
  PeekLog peeks_;
  std::vector<PeekLog::Pick> peek_picks_;  // Lease's, kept to spare an allocation

  // Settings.
  cluster::Routing routing_ = cluster::Routing::kSite;
  policy::CrawlPolicy policy_;
  double t_delay_ = 0.0;
  uint64_t next_lease_id_ = 1;
  uint64_t lease_id_limit_ = 1;

  // The journal of signals and leases: the entry being built, its
  // sequence numbers, and the pages whose records lack journaled state.
  JournalWriter journal_;

  double now_ = 0.0;
  // PickTop times never go back (the index's values are for non-decreasing
  // times): a request for an earlier time is answered for this one.
  double pick_time_ = 0.0;
  std::vector<double> slot_times_;  // Lease's, kept to spare an allocation
  std::vector<double> run_times_;   // the slots of one PickSlots call
  // IngestSignals': each signal's URL id and its page (kNoPage when
  // unknown or the URL is bad), looked up ahead of counting. A URL that
  // came in normal form (cluster::NormalFormHost) is not normalised unless
  // it must be registered; `url` holds the others' normalisation.
  struct SignalLookup {
    // The URL has an id: it came in normal form or normalised without error.
    bool has_id() const { return normal_form || url.ok(); }
    bool normal_form = false;
    cluster::UrlId id = 0;
    PageId page = kNoPage;
    absl::StatusOr<cluster::NormalizedUrl> url;
  };
  std::vector<SignalLookup> signal_lookups_;

  // Stats.
  // The crawl value of the latest pick leased (ShardStats.crawl_value_level):
  // the level this shard is picking at.
  double last_pick_value_ = 0.0;
  RateWindow signal_rate_;
  RateWindow pick_rate_;
  RateWindow report_rate_;
  uint64_t signals_total_ = 0;
  uint64_t leases_total_ = 0;
  uint64_t reports_total_ = 0;
  uint64_t expired_leases_total_ = 0;
  uint64_t leases_released_total_ = 0;
  uint64_t peeked_leases_total_ = 0;
  uint64_t urls_learning_ = 0;
  uint64_t observed_crawls_sum_ = 0;
  uint64_t rejected_fits_ = 0;
  uint64_t rejected_trust_ = 0;  // intervals the trust estimator refused

  StartupReport startup_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SHARD_H_
