// The fast CrawlIndex: Algorithm 1's argmax without scanning every page.
//
// Why it works (main paper Lemma 1, Sec. 5.2): V_i grows with τ_eff, so page
// i's value crosses a level Λ at the due time
//   d_i(Λ) = last_crawl_i + ι_i(Λ) − β_i n_i,
// and while some eligible page has V ≥ Λ only pages past their due time can
// be the argmax. The index keeps
//   * a level Λ (level()): set by a rebuild (the only O(m) step: at start,
//     after SetPolicy, when no eligible page is left above Λ, and when more
//     than an eighth of the pages joined the pool between two picks) so that a
//     few hundred pages are above it, and raised only when far more pile up
//     (bandwidth fell). In steady state every page crosses Λ once per crawl
//     and is picked soon after, so Λ stays put (Sec. 5.2's level Λ);
//   * a queue of the other pages (a radix heap, due_queue.h) keyed by a
//     lower bound on d_i(Λ): ι_i(Λ)
//     is found once (steps from below along the growth bound of V, which is
//     exact to first order: Lemma 3's dV/dι) and kept across crawls, so a
//     crawl re-keys a page at t + ι_i without valuing it, a signal moves
//     the key earlier by β, and a page wakes once per crawl (entries are
//     deleted lazily: no queue move writes into the pages). A new model
//     for the page (a learnt estimate after a crawl) keeps ι_i where it is
//     still a lower bound under the new model (CarryBound);
//   * the candidates (V ≥ Λ when they woke) in a CandidatePool, which bounds
//     each value by its last exact value and a bound on dV/dτ_eff (App. F's
//     tiers in miniature); PickTop values exactly only the candidates
//     whose growth bound can still beat the best exact value. The pool's
//     heap moves write into its own slot table (about the pool's size), and
//     a page records only its slot, when it joins (and when the pool
//     compacts the table);
//   * after a rebuild, the pages below Λ down to a floor, by value (the
//     burst reserve): a lease burst that empties the pool moves the next of
//     them to the pool instead of rebuilding;
//   * pages alike (one model, one crawl time, one signal count: one value
//     at all times, as in an import of URLs of one importance) as cohorts:
//     the one of lowest id stands in the pool for the others, which wait
//     outside it by id and lose every tie to it, and the next takes its
//     place when it leaves. Without them every pick would value every page
//     of the cohort, since only exact values show that a tie loses on its
//     id. A cohort forms where a pick finds two pages tied and alike
//     (across hosts too: a page a host's token gave up joins a page alike
//     valued in the same pick), where a token's opening meets pages of its
//     host alike its best, and in a rebuild; a page leaves it at any change
//     (signal, crawl, model).
// Keys are lower bounds and every eligible page with V ≥ Λ is a candidate,
// so PickTop returns the same pages as BruteForceIndex (ties broken by id)
// whenever its k-th pick is ≥ Λ (or clears the reserve's bound); otherwise
// it pulls from the reserve or lowers Λ by a rebuild.
//
// Not thread-safe. A rebuild of many pages values them on up to 4 threads
// of its own, joined before it returns.
#ifndef RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_
#define RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "policy/crawl_policy.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"
#include "shard/index/candidate_pool.h"
#include "shard/index/crawl_index.h"
#include "shard/index/due_queue.h"
#include "shard/index/hosts.h"
#include "shard/index/huge_page_allocator.h"
#include "shard/index/parked_classes.h"
#include "shard/index/reserve_classes.h"

namespace recrawl {
namespace shard {

class SchedulingIndex : public CrawlIndex {
 public:
  struct Options {
    // A rebuild sets Λ so that about this many pages are candidates. By
    // Little's law the pool then holds R × (wait from crossing Λ to being
    // picked) pages. A larger pool keeps random dips of the picked values
    // from emptying it, which would cost a rebuild; a smaller one is
    // faster: the wait is shorter, so the candidates' growth bounds are
    // tighter when they compete for a pick (fewer valuations), and the
    // class heaps are smaller.
    int target_candidates = 1024;
    // Above this many candidates Λ is raised back to target_candidates.
    int max_candidates = 4096;
    // Both scale up with the pages held, to at least this share of them
    // (keeping their ratio): with a fixed size the wait shrinks as R grows
    // with m, the random drift of the pick level crosses it sooner, and
    // every raise of Λ makes each page re-solve its due time once. m/1024
    // keeps raises rare and rebuilds out of the steady state at 10^6–10^7
    // pages, with cheaper picks than a larger share (docs/benchmarks.md,
    // "Scheduling index").
    double target_fraction = 1.0 / 1024;
  };
  // Work counters, for tests and the benchmark.
  struct Stats {
    // Pages valued exactly (ValueWithGrowth, Refine's steps, Rebuild).
    uint64_t valuations = 0;
    uint64_t wakeups = 0;      // queue pops
    uint64_t refinements = 0;  // due times solved for by root finding
    uint64_t rebuilds = 0;     // O(m) rebuilds (Λ lowered, policy changed)
    uint64_t raises = 0;       // Λ raised
    // Candidates whose growth bound ruled them out without a valuation.
    uint64_t tightenings = 0;
    // Candidates Select valued afresh (ValueCandidate; in valuations too).
    uint64_t candidate_valuations = 0;
    uint64_t pulls = 0;  // chunks moved from the burst reserve to the pool
    // Signals that gave a queued page a new queue entry (the others were
    // within the signal count its key allows for).
    uint64_t signal_rekeys = 0;
    uint64_t compactions = 0;  // stale queue entries dropped (Compact)
    // Model updates whose page kept its due-time bound (CarryBound).
    uint64_t carried_bounds = 0;
    // Pages that joined a cohort of pages alike (in a pick or a rebuild).
    uint64_t follows = 0;
    // Pages a wake-up or a pick found with their host held (parked, or
    // queued again for the host's allowed time).
    uint64_t host_waits = 0;
    // Parked entries whose bound was computed for a host's token (Park).
    uint64_t parked_scans = 0;
  };

  explicit SchedulingIndex(const policy::CrawlPolicy& policy = policy::CrawlPolicy::GreedyNcis());
  SchedulingIndex(const policy::CrawlPolicy& policy, const Options& options);

  void Upsert(PageId page, const policy::PageParams& params, HostId host,
              double last_crawl) override;
  void Remove(PageId page) override;
  bool Contains(PageId page) const override;
  size_t size() const override { return size_; }
  void RecordSignals(PageId page, double t, int64_t count) override;
  void RecordCrawl(PageId page, double t) override;
  void Lease(PageId page) override;
  bool LeaseAt(PageId page, double t) override;
  void ReleaseLease(PageId page) override;
  void SetHostDelay(HostId host, double min_delay) override;
  void BlockHost(HostId host, double until) override;
  std::vector<PickedPage> PickTop(double t, int k) override;
  // The slots share the per-call work (scratch space, re-leveling checks)
  // and a pick goes straight from the candidates to leased.
  std::vector<SlotPick> PickSlots(const std::vector<double>& slot_times) override;
  double Value(PageId page, double t) const override;
  std::optional<PageView> View(PageId page) const override;
  // Loads the page's line into the cache (ahead of a View or an update).
  void Prefetch(PageId page) const {
    if (page < pages_.size()) __builtin_prefetch(&pages_[page]);
  }
  void SetPolicy(const policy::CrawlPolicy& policy) override;
  const policy::CrawlPolicy& policy() const override { return policy_; }

  // Sizes the tables for page ids below `pages` and host ids below `hosts`
  // (they grow by doubling otherwise, which can leave up to half of them
  // unused).
  void Reserve(size_t pages, size_t hosts = 0);
  // The page records' capacity beyond the highest page id held
  // (huge_page_allocator.h).
  MemoryRange SparePages() { return SpareCapacity(pages_); }

  // Λ, the candidates' level (Sec. 5.2; 0: every eligible page is one).
  double level() const { return level_; }
  size_t candidates() const { return candidates_.size(); }
  const Stats& stats() const { return stats_; }
  // Entries the due-time queue moved (splits, compactions, growth).
  const DueQueue::Work& queue_work() const { return queue_.work(); }
  // Candidates placed in the pool's heaps (candidate_pool.h).
  uint64_t candidate_placements() const { return candidates_.placements(); }
  // Entries in the due-time queue, live and stale.
  size_t queue_entries() const { return queue_.size(); }
  // Pages waiting in a cohort behind an alike page of lower id.
  size_t followers() const { return followers_; }
  // Checks the cohorts' invariant (scheduling_index.h, Cohort), for
  // tests: an empty string when it holds, else what is wrong. O(m).
  std::string CheckCohorts() const;
  // Bytes held by the index's tables (capacity, not size).
  size_t MemoryBytes() const;

 private:
  // kPicked: returned by the last PickTop and held out of the pool until
  // the next call that needs the pool (it is back in the pool by then);
  // PickTop + RecordCrawl or Lease, the common sequence, then never puts it
  // back only to take it out again.
  // kWaking: popped from the queue, being valued by Wake.
  // kFollower: in a cohort, behind its leader (a candidate alike it).
  // kParked: a candidate a pick found with its host held, waiting with its
  // pool entry until the host allows it (Park).
  enum State : uint8_t {
    kAbsent,
    kQueued,
    kCandidate,
    kLeased,
    kPicked,
    kWaking,
    kFollower,
    kParked
  };

  // 40 bytes. The model is stored as floats (the index's view of the page;
  // Upsert rounds the parameters) and derived quantities are recomputed on
  // demand, which keeps the index within 64 bytes a page with its queue
  // entry. n_cis saturates at kMaxSignals signals since the last crawl.
  struct Page {
    float importance;
    float change_rate;
    float recall;
    float false_rate;
    double last_crawl;
    // Lower bound on ι(key_level_), the τ_eff at which V reaches key_level_
    // (+∞: not before the next signal or crawl).
    float iota_lb;
    HostId host;
    // While queued: the stamp of its live queue entry (the queue deletes
    // lazily, see Queued); while a candidate: its slot in the pool (set
    // when it joins the pool and when the pool compacts its slot table;
    // the pool's heap moves write into that table, not here); while a
    // follower: its cohort; while parked: the stamp of its live entry
    // among its host's (ParkedEntry).
    uint32_t pos;
    uint16_t n_cis;
    uint16_t state : 3;  // a State
    // While queued: the signal count its live key was solved for (>= n_cis
    // up to kMaxKeyedSignals; see SignalsToKeyFor), so that a signal within
    // it needs no new entry.
    uint16_t keyed_signals : 13;
  };
  static constexpr int64_t kMaxKeyedSignals = (1 << 13) - 1;
  static_assert(sizeof(Page) <= 40, "Page grew");
  // What makes two pages alike (Alike): the model's four floats and the
  // crawl time, 24 bytes from the record's start, and n_cis.
  static constexpr size_t kLikenessBytes = 4 * sizeof(float) + sizeof(double);
  static_assert(kMaxSignals <= std::numeric_limits<uint16_t>::max(),
                "Page::n_cis must hold kMaxSignals");
  // The due-time queue deletes lazily: an entry is live while its page is
  // queued with the same stamp (Page::pos). A re-key (a signal) pushes a new
  // entry and a page leaving the queue just changes state, so no queue move
  // writes into the page table (a random cache miss a move);
  // stale entries are dropped when popped or by Compact. Stamps come from
  // one counter (next_stamp_), not from the page's last stamp: while the
  // page was a candidate Page::pos held its pool slot, and counting on from
  // that can give the page back a stamp one of its stale entries carries,
  // which then wakes it again for nothing (a valuation and a due-time
  // solve).
  // Its key: a lower bound on the time the page may reach key_level_.
  using Queued = DueQueue::Entry;
  // Tokens are pool entries with page ids from kTokenBase on (pages are
  // below it), so that they lose every tie to a page in the pool's order;
  // Select compares them as id 0 (a parked page may tie and win on its id).
  static constexpr PageId kTokenBase = PageId{1} << 31;
  static constexpr uint32_t kNoToken = ~uint32_t{0};
  static bool IsToken(PageId page) { return page >= kTokenBase; }
  // A host's token (Park), by its page id − kTokenBase.
  struct Token {
    HostId host;
    uint32_t slot;  // in the pool
  };
  // The candidate pool keeps each candidate's slot in the page table.
  class PageTableSlots : public CandidatePool::PageSlots {
   public:
    PageTableSlots(HugePageVector<Page>* pages, const HostTable* hosts, std::vector<Token>* tokens)
        : pages_(pages), hosts_(hosts), tokens_(tokens) {}
    void SetSlot(PageId page, uint32_t slot) override {
      if (IsToken(page)) {
        (*tokens_)[page - kTokenBase].slot = slot;
      } else {
        (*pages_)[page].pos = slot;
      }
    }
    uint32_t Slot(PageId page) const override {
      return IsToken(page) ? (*tokens_)[page - kTokenBase].slot : (*pages_)[page].pos;
    }
    // What Select reads to value a candidate: its record and its host.
    void Prefetch(PageId page, uint32_t host) const override {
      if (!IsToken(page)) __builtin_prefetch(&(*pages_)[page]);
      hosts_->Prefetch(host);
    }

   private:
    HugePageVector<Page>* pages_;
    const HostTable* hosts_;
    std::vector<Token>* tokens_;
  };

  // A page's crawl value at t and how fast it may grow until its next
  // signal or crawl (growth.later_slope holds for ever: what a due time can
  // rest on).
  struct Valuation {
    double value;
    CandidatePool::Growth growth;
  };

  // The policy's belief of a page's model (cached per page id), and the
  // same computed afresh (thread-safe: reads only the page and the policy).
  policy::PageModel Belief(const Page& p) const;
  policy::PageModel UncachedBelief(const Page& p) const;
  double EffectiveElapsed(const Page& p, const policy::PageModel& b, double t) const;
  // Valuing a page: its crawl value V at t (Theorem 1, Sec. 5.1: BeliefGrowth
  // of belief b in the page's state (t − last_crawl, n_cis), the value Value
  // and BruteForceIndex give to the last bit), with GrowthOf's bound on its
  // growth until the next signal or crawl. Reads only the page and the
  // policy (thread-safe: Rebuild's threads call it) and counts nothing.
  Valuation ValueWithGrowth(const Page& p, const policy::PageModel& b, double t) const;
  // The same with the page's cached belief, counted in stats_.valuations.
  Valuation ValueWithGrowth(PageId id, double t);
  CandidatePool::Growth GrowthOf(const policy::PageModel& b, const policy::ValueGrowth& g) const;
  // The earliest time the page may reach key_level_ with `signals` signals
  // since its last crawl (>= p.n_cis, so that it is a lower bound).
  double KeyOf(const Page& p, const policy::PageModel& b, int64_t signals) const;
  // The signal count a queued page's key is solved for when a signal
  // re-keys it at t: n_cis plus half the signals expected before it would
  // be due (at the rate λΔ + ν). Later signals within that allowance leave
  // the key a lower bound, so they push no entry; under `semi`'s ~50
  // signals a crawl cycle, a new entry a signal made the queue's stale
  // entries, and compacting them, a quarter of the run time.
  int64_t SignalsToKeyFor(const Page& p, const policy::PageModel& b, double t) const;
  // Raises p.iota_lb after V(t) = v.value < admission_level_ was found: the
  // growth bound gives a lower bound on the crossing of key_level_; with
  // `solve`, steps on from there (one valuation a step, counted) until the
  // page would be admitted when it next wakes.
  void Refine(Page& p, const policy::PageModel& b, double t, const Valuation& v, bool solve);
  // After a known page's model changed (p holds the new one): sets
  // p.iota_lb from `old_iota`, its bound under the old model, where that is
  // still a lower bound under the new one (one valuation, then Refine's).
  void CarryBound(Page& p, float old_iota);

  void Wake(PageId id, double t, std::vector<PageId>* deferred);
  void Drain(double t);
  void AddCandidate(PageId id, double t, const Valuation& v);
  void Detach(PageId id);  // from the queue or the candidates
  void Enqueue(PageId id);
  void EnqueueAt(PageId id, double key);
  // Pushes the page's live entry (a new stamp) with a key solved for
  // `keyed_signals` signals (>= n_cis).
  void PushQueued(PageId id, double key, int64_t keyed_signals);
  // Gives the page a new queue stamp (any older entry of it is stale) and
  // records the signal count its new entry's key is solved for; returns
  // the stamp.
  uint32_t Restamp(Page& p, int64_t keyed_signals);
  bool Live(const Queued& e) const {
    const Page& p = pages_[e.page];
    return p.state == kQueued && p.pos == e.stamp;
  }
  // Drops the stale entries (when the queue is full and they are 1/16 of
  // it, so that the queue stays within 17 bytes a page; and at least this
  // many, so that a small queue is not rewritten for every stale entry).
  static constexpr size_t kMinStaleToCompact = 64;
  void Compact();
  // The best k eligible candidates at t into *picked; the picks are taken
  // out of the pool (into taken_) for the caller to lease or put back.
  void Select(double t, int k, std::vector<PickedPage>* picked);
  // PickTop's work at t: Λ re-leveled as needed so that the picks are
  // exact; they are left in taken_.
  void PickExact(double t, int k, std::vector<PickedPage>* picked);
  void ReturnTaken(double t);
  // A candidate's valuation at t: its exact value, as ValueWithGrowth(e.page,
  // t) gives it (not the pool's bound), and its growth bound. Taken from the
  // pool entry when that holds a valuation at t already (woken, pulled or
  // picked at t; the growth then rounded up to floats), else valued afresh
  // (counted in stats_.candidate_valuations too).
  Valuation ValueCandidate(const CandidatePool::Entry& e, double t);
  // Rebuilds of at least this many pages value them on up to 4 threads.
  static constexpr size_t kParallelRebuildPages = 1 << 16;
  void Rebuild(double t, size_t target);
  bool ShouldRaise() const;
  // Whether so many pages joined the pool since the last pick (signals on
  // most pages, or time passing with no picks, as when fetchers were away)
  // that a rebuild, O(m) on several threads, is cheaper than picking from
  // the pool and raising Λ over it (O(pool) valuations on one thread).
  bool PoolFlooded() const;
  // Raises Λ so that the last rebuild's target of candidates stay.
  void Raise(double t);

  // The burst reserve. A lease burst picks many slots at (nearly) one time,
  // faster than pages cross Λ, so the pool runs dry and Λ must come down;
  // without this each time is an O(m) rebuild (every pool's worth of picks). A
  // rebuild values every page anyway, so it keeps the next pages below Λ
  // (down to the floor, the size_/4-th value), each bounded by its value
  // and its slope class's rate from when it was valued (ReserveClasses:
  // slow pages do not take the bound of the fastest). With G >= every
  // page's later slope, the pages below the floor have V(t) < FloorBound(t)
  // := floor + G (t − reserve_at_), so every eligible page outside the pool
  // has V(t) < ClearBound(t) := the larger of FloorBound(t) and the
  // reserve's top bound; picks at or above it are exact whatever Λ, and
  // when they are not, PullReserve moves the next chunk of the reserve (by
  // bound) into the pool (one valuation a page) instead of rebuilding.
  // Pages that change meanwhile (signals, crawls, a model re-fitted by
  // Upsert, a lease released) are valued and re-certified below the floor,
  // or join the reserve (below Λ) or the pool; so do pages
  // that wake between the floor and Λ. Reports re-fit models all the time,
  // and a reserve dropped at each would leave a falling level to O(m)
  // rebuilds. Events that cannot be checked cheaply (re-keys, raises) drop
  // it, and so does time once the floor's bound has passed Λ (it no longer
  // helps).
  double FloorBound(double t) const {
    return reserve_floor_ + reserve_growth_ * std::max(t - reserve_at_, 0.0);
  }
  double ClearBound(double t) const;
  // A queued page found between the floor's bound and admission_level_
  // (woken or re-valued) while the reserve is active joins it, so that a
  // pull brings it to the pool in its turn; the pool itself keeps to pages
  // admitted (at or above admission_level_).
  void AddToReserve(PageId id, double t, const Valuation& v);
  // After page `id` (queued) was valued `v` at t while the reserve is
  // active: raises G to its later slope; between the floor's bound and
  // admission_level_ adds it to the reserve; above, moves it to the pool (or,
  // when its host is held, keys it at the host's allowed time). True when
  // it left the queue's normal keying.
  bool Recertify(PageId id, double t, const Valuation& v);
  // Recertify for a queued page that changed between picks, valued at the
  // latest of the reserve's time and the last pick's (no-op without an
  // active reserve).
  void RecertifyQueued(PageId id);
  // Queues a page that left the pool unvalued (its host is held): keyed
  // at the host's allowed time while the reserve is active.
  void Requeue(PageId id);
  bool PullReserve(double t, int k);
  void DropReserve();
  // Options::target_candidates scaled to the pages held, and the pool size
  // above which Λ is raised after a rebuild to `target` (max_candidates
  // scaled as target_candidates is, for the default target).
  size_t TargetCandidates() const;
  size_t MaxCandidates(size_t target) const;
  size_t MaxCandidates() const { return MaxCandidates(TargetCandidates()); }
  // The first target of a rebuild that lowers Λ because the pool ran dry.
  // When the last rebuild's pool lasted fewer than twice its target picks,
  // the pick level is falling faster than pages cross it (the transient
  // after a start, when the stalest pages go first, or a lease burst), and
  // a rebuild of the same depth would follow as soon: rebuild 4× deeper
  // (up to size_/16 pages), so that each O(m) rebuild serves more picks.
  size_t RefillTarget(int k) const;
  // Whether the last rebuild's pool has served fewer than twice its target
  // in picks: the pick level is falling fast (RefillTarget, PoolTarget).
  bool LevelFalling() const;
  // The pool size a raise of Λ keeps: the last rebuild's target while the
  // level is falling, TargetCandidates() after. Without the decay a burst's
  // deep pool would stay deep for good.
  size_t PoolTarget() const;
  // Puts the last PickTop's picks that are still kPicked back in the pool.
  void RestorePicks();

  // Candidates of held and of delayed hosts. A pick that finds a
  // candidate's host held (crawled since, or blocked) parks it with its
  // pool entry, still an upper bound on its value later, instead of
  // queuing it to be valued and solved for again. When the host allows
  // crawls again (ReleaseHosts, from Drain) its parked pages stay out of
  // the pool behind one token: a pool entry whose bound at the release is
  // the largest of theirs, growing as the envelope of their classes' lines
  // (parked_classes.h), so that it bounds each of them from then on. A pick
  // that meets the token takes the host's best page if it can beat the
  // pick's best so far, popping the host's pages in the order of their
  // bounds (OpenToken), and puts the token back for the rest. The
  // candidates of a host with a crawl delay wait so even while it allows
  // crawls (JoinParked), except a cohort's leader, which stands in the pool
  // for its cohort. Such a host with many pages over Λ so costs a few heap
  // steps a crawl (a few of its pages valued), not a valuation and a queue
  // entry each, and its pages do not fill the pool.
  // Between calls every parked page's host is held with a due entry in
  // host_wakes_, or has its token in the pool. A parked page that changes
  // (a signal, a crawl, a new model, a lease, a removal) leaves a stale
  // entry in its host's heap, dropped when it comes to the top or at the
  // heap's next compaction. Parking a page ends the host's token (it may
  // not bound the new entry): the host waits for its wake.
  void Park(PageId id, double t, const CandidatePool::Entry& entry);
  // A candidate of a host that gives one page a pick (a crawl delay) waits
  // parked as well while its host allows crawls: the token, placed or
  // raised to bound it, stands for it in the pool, so that such a host's
  // many pages over Λ take one place there (AddCandidate).
  void JoinParked(PageId id, double t, const CandidatePool::Entry& entry);
  // Adds to the pool the entry of token `token` of `host`: never valued,
  // `bound` from t on (its base one ulp above).
  void AddToken(uint32_t token, HostId host, double t, const ParkedClasses::Envelope& bound);
  // The pool entry of a page valued `v` at t.
  static CandidatePool::Entry ExactEntry(PageId id, HostId host, double t, const Valuation& v);
  // Puts in the pool the token of every host whose wake is due at t and
  // that allows crawls at t; the others wake again when they do.
  void ReleaseHosts(double t);
  // Select met host `token.tag`'s token at t, out of the pool now, its best
  // pick so far being `floor`. Returns false when the host is held (the
  // token is dropped and the host waits for its wake), when none of its
  // pages is live (the host is forgotten) and when none can beat `floor`
  // (the host goes to below_floor_, for Select to place its token again
  // once the pick is made). Else takes the host's best parked page out
  // (TakeBestParked; a candidate out of the pool, into *best) and puts a
  // token back for the others, if any.
  bool OpenToken(const CandidatePool::Entry& token, double t, const PickedPage& floor, PageId* best,
                 Valuation* value);
  // A floor every page beats.
  static constexpr PickedPage kNoFloor{0, -std::numeric_limits<double>::infinity()};
  // Takes host's best live parked page at t out of its heap (exact, into
  // *best and *value; the page is still kParked), if it can beat `floor`
  // or tie it (on a lower id). Pops in the order of their bounds until no
  // bound left can beat the better of the floor and the best so far:
  // pages alike the best have its value, the others are valued and go back
  // exact. Returns false when none could beat the floor (nothing
  // taken out). With `gather_alike`, pages alike the best met on the way
  // (tied with it) follow it instead of going back (a host's pages loaded
  // alike are then opened once, not at every pick); the best then leads
  // them as a candidate. The host must have parked entries.
  bool TakeBestParked(HostId host, double t, const PickedPage& floor, bool gather_alike,
                      CandidatePool::Entry* best, Valuation* value);
  // Sends every live parked page of `host` (its token out of the pool) back
  // to the queue, each valued and keyed for Λ, and forgets the host (Raise:
  // its best page is below Λ).
  void ReturnParked(HostId host, double t);
  // Adds host's token to the pool, bounding its parked entries from t on,
  // or forgets the host when none is live.
  void PlaceToken(HostId host, double t);
  // Forgets every parked entry and token (a rebuild places every page
  // anew; the pool is cleared with it).
  void DropParked();
  // Pushes a wake-up at its allowed time for every host with parked pages
  // and no token (after a host's allowed time moved earlier).
  void RewakeParkedHosts();
  size_t ParkedBytes() const;
  void WakeHostAt(HostId host, double at);
  struct ParkedHost {
    // Entries' `slot` is the page's stamp (Page::pos) when parked.
    ParkedClasses pages;
    uint32_t token = kNoToken;  // in tokens_, while in the pool
  };
  struct HostWake {
    double at;
    HostId host;
    bool operator>(const HostWake& o) const { return at > o.at; }
  };
  // Returns host's token id to the free list (its pool entry is gone or
  // about to be).
  void FreeToken(ParkedHost* parked) {
    free_tokens_.push_back(parked->token);
    parked->token = kNoToken;
  }
  // Whether a parked entry is its page's current one.
  bool LiveParked(const CandidatePool::Entry& e) const;
  // LiveParked as the predicate ParkedHeap takes (`is_live`).
  auto LiveParkedPredicate() const {
    return [this](const CandidatePool::Entry& e) { return LiveParked(e); };
  }
  // Stamps page `id` parked with `entry` at t in its host's heap; returns
  // the host's record and whether it is new (the caller keeps the wake /
  // token invariant).
  std::pair<ParkedHost*, bool> AddParked(PageId id, double t, const CandidatePool::Entry& entry);
  absl::flat_hash_map<HostId, ParkedHost> parked_;
  std::vector<HostWake> host_wakes_;  // min-heap by time
  std::vector<Token> tokens_;
  std::vector<uint32_t> free_tokens_;
  std::vector<CandidatePool::Entry> reparked_;  // TakeBestParked's valued

  // Cohorts of pages alike. Between calls a cohort's leader is a
  // candidate in the pool, its followers (kFollower, Page::pos = the
  // cohort) are alike it and of higher ids, and so each has the leader's
  // value at all times and loses to it: the pool's bound for the leader
  // bounds them too, and the follower of lowest id is the best of them once
  // the leader is gone. Followers wait in a min-heap by id that deletes
  // lazily (a page that left its cohort, or left and came back, leaves an
  // entry that is skipped or found again), compacted when stale entries
  // outnumber live ones.
  struct Cohort {
    PageId leader = kNoPage;
    size_t live = 0;                // followers
    std::vector<PageId> followers;  // min-heap by id, with stale entries
  };
  static constexpr uint32_t kNoCohort = ~uint32_t{0};
  // Whether the two pages have one value at all times (one model, one
  // crawl time, one signal count; bit for bit).
  bool Alike(const Page& a, const Page& b) const;
  // What Alike compares, as a hash key.
  struct Likeness {
    std::array<char, kLikenessBytes> bytes;
    uint16_t n_cis;
    bool operator==(const Likeness& o) const { return n_cis == o.n_cis && bytes == o.bytes; }
    template <typename H>
    friend H AbslHashValue(H h, const Likeness& l) {
      return H::combine(std::move(h), absl::string_view(l.bytes.data(), l.bytes.size()), l.n_cis);
    }
  };
  static Likeness LikenessOf(const Page& p);
  size_t CohortBytes() const;
  // The cohort `page` leads, or kNoCohort.
  uint32_t LedCohort(PageId page) const;
  uint32_t NewCohort(PageId leader);
  // Frees the cohort's record (its followers must have left or moved).
  void ReleaseCohort(uint32_t c);
  // Ends the cohort: its leader leads no more, and its followers must be
  // placed by the caller.
  void FreeCohort(uint32_t c);
  // Makes `page` (out of the pool, alike `leader`, of a higher id) a
  // follower of leader's cohort; a cohort `page` led is merged into it
  // (the smaller into the larger).
  void Follow(PageId page, PageId leader);
  // Removes and returns the cohort's follower of lowest id (kNoPage: none).
  PageId NextFollower(uint32_t c);
  // `leader` leaves cohort `c`, which it leads (picked, taken out of the
  // pool, changed): the next follower leads the rest and is returned
  // (kNoPage: none) as a candidate out of the pool, for the caller to
  // place. The cohort ends when none is left to follow the returned page.
  PageId HandOver(PageId leader, uint32_t c);
  // HandOver, the next follower placed in the pool with the leader's
  // entry `like`.
  void HandOverInPool(PageId leader, uint32_t c, const CandidatePool::Entry& like);
  // A follower leaves its cohort into the pool, with its leader's entry.
  void Unfollow(PageId page);
  // Sends leader's cohort back to the queue with it (Raise): each follower
  // takes the leader's due-time bound.
  void EnqueueCohort(PageId leader);
  void DropCohorts();
  void RekeyAll();
  void SetLevel(double level);

  policy::CrawlPolicy policy_;
  Options options_;
  HugePageVector<Page> pages_;
  size_t size_ = 0;
  HostTable hosts_;
  // A radix heap: a page wakes once per crawl, and a pop reads entries in
  // sequence instead of log m scattered ones (due_queue.h).
  DueQueue queue_;
  size_t queued_ = 0;  // pages in state kQueued (live entries)
  // The last stamp given. It wraps after 2^32 pushes; a stale entry that
  // old meeting its page's stamp again would only wake the page once more.
  uint32_t next_stamp_ = 0;
  PageTableSlots page_slots_;
  CandidatePool candidates_;
  double level_ = 0.0;  // Λ: every eligible page with V ≥ Λ is a candidate
  // Λ(1 − kKeyMargin), just below Λ: the level queue keys and ι_lb are
  // solved for, so that rounding in V cannot keep a page with V ≥ Λ out of
  // the candidates.
  double key_level_ = 0.0;
  // Λ(1 − kAdmissionMargin), below key_level_: a page valued at or above
  // it is admitted to the candidates (Wake, Rebuild, Raise, Recertify).
  double admission_level_ = 0.0;
  // A raise that found nothing to raise (ties at Λ) waits until the pool
  // is larger than this (0: no such wait).
  size_t retry_raise_above_ = 0;
  // A rebuild that left pages tied at Λ in the pool: no rebuild for a flood
  // until the pool is larger than this (0: no such wait). Unlike
  // retry_raise_above_, a raise that found ties leaves it: the flood rule
  // still bounds a pool that raises cannot shrink.
  size_t flood_above_ = 0;
  bool needs_rebuild_ = true;
  // Picks returned so far, and at the last rebuild, which aimed at
  // rebuild_target_ candidates (for RefillTarget).
  uint64_t picks_ = 0;
  uint64_t picks_at_rebuild_ = 0;
  size_t rebuild_target_ = 0;
  size_t size_at_rebuild_ = 0;
  bool reserve_active_ = false;
  ReserveClasses reserve_;
  double reserve_at_ = 0.0;
  double reserve_floor_ = 0.0;
  double reserve_growth_ = 0.0;  // G
  bool needs_rekey_ = false;
  Stats stats_;

  // Select's scratch space, kept across calls (no allocation per pick).
  struct Exact {
    PageId page;
    Valuation v;
  };
  // The target-th largest value of `ranked` (pages valued at one time), a
  // cohort's leader counting for its followers too (they have its value)
  // and a host that gives one page a pick counting once (as in Rebuild);
  // Λ itself when there are no more than `target`.
  double LevelKeeping(std::vector<Exact> ranked, size_t target) const;
  std::vector<HostId> used_hosts_;
  std::vector<Exact> valued_;  // valued at t, out of the pool
  std::vector<Exact> taken_;   // picked, out of the pool
  // Pages of delayed hosts in valued_, the lowest id of each likeness.
  absl::flat_hash_map<Likeness, Exact> alike_valued_;
  std::vector<PageId> requeue_;  // hosts no longer allowed
  // Candidates whose host had its pick in this call, out of the pool, and
  // hosts whose token met it (a new token for them after the call).
  std::vector<CandidatePool::Entry> set_aside_;
  std::vector<HostId> retoken_;
  std::vector<HostId> below_floor_;  // OpenToken's, placed again after the pick
  std::vector<PageId> deferred_;     // Drain's
  std::vector<Cohort> cohorts_;
  std::vector<uint32_t> free_cohorts_;
  absl::flat_hash_map<PageId, uint32_t> led_by_;  // leader → cohort
  size_t followers_ = 0;
  // Beliefs of recently valued pages, direct-mapped by page id (ids are
  // dense): building one (PageModel::Create, a log1p) is ~20% of a
  // valuation, and the same few candidates near the top are valued pick
  // after pick, then re-keyed when crawled. A slot per 128 pages (a power
  // of two, at least 256) keeps it under 1 byte a page.
  struct CachedBelief {
    PageId page;
    policy::PageModel belief;
  };
  static constexpr PageId kNoPage = ~PageId{0};
  mutable std::vector<CachedBelief> beliefs_;
  void SizeBeliefCache();
  void ForgetBelief(PageId id);
  // The last PickTop's picks (kPicked), as valued at picked_at_.
  std::vector<Exact> picked_;
  double picked_at_ = 0.0;
  // The latest time picked at (picks never go back).
  double last_pick_at_ = -std::numeric_limits<double>::infinity();
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_
