// The per-URL state a shard keeps in memory, by dense page id.
//
// The scheduling index addresses pages by small dense ids (its tables are
// arrays); URLs are known by their stable 64-bit UrlId. PageTable binds the
// two: page ids are handed out from a free list, so they stay dense as URLs
// come and go, and a hash set of page ids keyed by the slot's UrlId finds a
// URL's page with 4 bytes of table per URL (instead of a map's 16).
//
// It also holds each URL's text, which picks must return without reading
// the store: the "scheme://authority" part is interned (a site has many
// URLs), the path and query live in one arena after the prefix's id, both
// varint-prefixed.
#ifndef RECRAWL_SHARD_PAGE_TABLE_H_
#define RECRAWL_SHARD_PAGE_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "cluster/url_id.h"
#include "shard/index/crawl_index.h"
#include "shard/index/huge_page_allocator.h"
#include "shard/learning.h"
#include "shard/string_interner.h"
#include "shard/trust_sources.h"

namespace recrawl {
namespace shard {

inline constexpr PageId kNoPage = ~PageId{0};
inline constexpr uint32_t kNoCrawlState = ~uint32_t{0};

// What a shard needs per URL on its hot paths (signals, picks, reports)
// besides what the index holds (its host and last crawl: CrawlIndex::View).
// 48 bytes; a URL that learns or has a content digest has 100 more in the
// PageTable's crawl-state table.
struct PageSlot {
  cluster::UrlId id = 0;
  // Bloom filter of the keys of the signals counted since the last crawl
  // (signal_keys.h).
  uint64_t signal_filter = 0;
  // The latest time of a signal counted since the last crawl, as seconds
  // after it rounded up (negative: none). A signal later than that cannot
  // be a redelivery, so the filter is asked only about earlier ones: in-order
  // signals are never mistaken for duplicates however many arrive.
  float latest_signal = -1.0f;
  uint32_t path = 0;  // arena offset of the prefix id, path and query
  // The model the index ranks the page with (raw μ, Δ, λ, ν).
  float importance = 0.0f;
  float change_rate = 0.0f;
  float recall = 0.0f;
  float false_rate = 0.0f;
  // The page's entry in the crawl-state table, or kNoCrawlState
  // (PageTable::Learning, PageTable::Digest).
  uint32_t crawl_state = kNoCrawlState;
  // n_cis, saturating at kMaxSignals like the index's.
  uint16_t n_cis = 0;
  uint8_t failures = 0;  // consecutive failed fetches, saturating
  bool in_use : 1;
  // Journaled signals or a journaled lease the record does not have yet
  // (journal_writer.h).
  bool unfolded : 1;

  PageSlot() : in_use(false), unfolded(false) {}

  // Keeps `model` (rounded to float) as the one the page ranks with.
  void SetModel(const policy::PageParams& model) {
    importance = static_cast<float>(model.importance);
    change_rate = static_cast<float>(model.change_rate);
    recall = static_cast<float>(model.recall);
    false_rate = static_cast<float>(model.false_rate);
  }
};
static_assert(sizeof(PageSlot) <= 48, "PageSlot grew: it is per URL");
static_assert(kMaxSignals <= std::numeric_limits<uint16_t>::max(),
              "PageSlot::n_cis must hold kMaxSignals");

class PageTable {
 public:
  PageTable();
  PageTable(const PageTable&) = delete;
  PageTable& operator=(const PageTable&) = delete;

  // The page of `id`, or kNoPage.
  PageId Find(cluster::UrlId id) const;
  // A fresh slot for `id`, which must not be present.
  PageId Add(cluster::UrlId id);
  // A fresh slot for `id`, or kNoPage if it is present (one lookup, where
  // Find and Add take two).
  PageId TryAdd(cluster::UrlId id);

  // Bulk loading (start-up): slots added with AddUnindexed, whose ids the
  // caller knows to be distinct, are not found until IndexAll, which
  // inserts them all at once (on two threads), each looked up ahead of its
  // insertion so that the cache misses of a million random inserts overlap.
  // Only on a table whose every slot was added this way.
  PageId AddUnindexed(cluster::UrlId id);
  void IndexAll();
  // Loads the table's lines for `id` into the cache (ahead of a Find).
  void Prefetch(cluster::UrlId id) const { IdsOf(id).prefetch(ByUrl{id}); }
  // Loads the prefix table's lines for `prefix` into the cache (ahead of a
  // SetUrl with it).
  void PrefetchPrefix(const StringInterner::Hashed& prefix) const { prefixes_.Prefetch(prefix); }
  // Frees the page and its URL text; the id may be handed out again.
  void Remove(PageId page);

  PageSlot& operator[](PageId page) { return slots_[page]; }
  const PageSlot& operator[](PageId page) const { return slots_[page]; }
  // Page ids are below this.
  PageId end() const { return static_cast<PageId>(slots_.size()); }
  size_t size() const;
  // Room for `pages` pages and `path_bytes` bytes of URL paths (arena
  // entries: about a path's length and 2), so that a load of that many
  // grows no table. The arena's room beyond its contents is address space,
  // not memory (huge_page_allocator.h): an estimate may err high.
  void Reserve(size_t pages, size_t path_bytes = 0);
  // The slots' capacity beyond the pages added (huge_page_allocator.h):
  // where the next pages' slots go.
  MemoryRange SpareSlots() { return SpareCapacity(slots_); }
  // Bytes of arena entries the URL text's arena holds before it grows.
  size_t PathCapacity() const { return arena_.capacity(); }
  // At most what SetUrl of `path` adds to the arena: the path and two
  // varints.
  static size_t PathEntryBytes(absl::string_view path) { return path.size() + 10; }
  // Whether SetUrl of paths whose PathEntryBytes sum to `bytes` succeeds,
  // one after the other, with nothing else changing the table between.
  bool HasPathRoom(size_t bytes) const { return arena_.size() - garbage_ + bytes <= kPathLimit; }

  // The URL's text, split where its path begins (NormalizedUrl); the
  // prefix's interned id into *prefix_id if given. False if the arena is
  // full (4 GiB of paths).
  bool SetUrl(PageId page, absl::string_view prefix, absl::string_view path,
              uint32_t* prefix_id = nullptr) {
    return SetUrl(page, {prefix, StringInterner::HashOf(prefix)}, path, prefix_id);
  }
  bool SetUrl(PageId page, const StringInterner::Hashed& prefix, absl::string_view path,
              uint32_t* prefix_id = nullptr);
  std::string Url(PageId page) const;
  void AppendUrl(PageId page, std::string* out) const;

  // A page's learning state (learning.h). Most of a shard's URLs have not
  // been crawled since they were added, and their state is only their
  // prior, which is then also their model (an upsert sets both; only a fit
  // after a crawl moves the model away): such a page keeps no entry, and
  // InitLearning of its slot's model stands for it. That keeps the bytes
  // of a crawl state to the URLs that learn (or have a digest).
  LearningState Learning(PageId page) const;
  // Crawl outcomes the page learnt from (LearningState::crawls).
  uint32_t LearningCrawls(PageId page) const {
    const uint32_t e = slots_[page].crawl_state;
    if (e == kNoCrawlState || !crawl_states_[e].has_learning) return 0;
    return crawl_states_[e].learning.crawls;
  }
  // Stores the page's learning state; call after the slot's model is set
  // (an entry is kept only when `state` differs from what the model stands
  // for, or the page has a digest).
  void SetLearning(PageId page, const LearningState& state);
  // Whether `state` is what a slot with `model` (as PageSlot keeps it)
  // stands for: SetLearning of it keeps no entry. Thread-safe (reads only
  // its arguments), so that a bulk load may ask it on other threads.
  static bool IsModelAsPrior(const policy::PageParams& model, const LearningState& state);
  // Signals counted since the page's last crawl, by source
  // (trust_sources.h), for learning per-source trust. They are kept in the
  // page's crawl-state entry: a page crawled without an entry, one that got
  // a signal of unknown source (`source` < 0: a journal record written
  // before records kept sources), or whose count of one source passed 255
  // has no known split until its next crawl.
  //
  // Counts a signal of `source` `offset` seconds after the page's last
  // crawl; call it before the slot's latest_signal takes the signal in. A
  // signal of a source the latest signalling instant does not have yet,
  // within `joint_window` seconds of it, is taken as the same change: the
  // instant becomes (or stays) a joint event (docs/multi_source_model.md,
  // (M2); 0: signals are never matched). Returns the sources the instant
  // had before this signal joined it (bit TrustSourceIndex), 0 when the
  // signal is a single-source event or the split is not known. Only the
  // latest instant is kept: a signal delivered after another change's (a
  // sitemap polled hours after its lastmod) is its source's own event.
  uint8_t CountSourceSignal(PageId page, int source, double offset, double joint_window);
  // A journal fold's split (JournalState) at start-up: the fold holds
  // every signal of the page before it, so the page's split is the fold's,
  // whatever the signals replayed before it gave (a signal stamped ahead of
  // the clock is replayed at its clamped time and may have matched
  // otherwise); `known` false makes the split not known. A split that was
  // not known stays so.
  void RestoreSourceSignals(PageId page, bool known, const SignalSplit& split);
  // The page's split since its last crawl, for a fold; false when it is
  // not known.
  bool SignalSplitOf(PageId page, SignalSplit* split) const;
  // The page's `n_cis` signals since its last crawl as single-source
  // events by source (what the named sources and the joint events did not
  // take is "other"'s) and joint events; false when not known.
  bool SourceSplit(PageId page, int64_t n_cis, IntervalSignals* signals) const;
  // The page was crawled: its counts restart, known from now on if it has
  // an entry.
  void RestartSourceSignals(PageId page);
  // The fingerprint of the page's stored content digest, if it has one.
  bool Digest(PageId page, uint32_t* fingerprint) const;
  void SetDigest(PageId page, uint32_t fingerprint);
  // Entries of the crawl-state table.
  size_t crawl_states() const { return crawl_states_.size() - crawl_states_free_.size(); }

  // Bytes of the tables (capacity), URL text included.
  size_t MemoryBytes() const;

 private:
  // The set's elements are page ids; it hashes and compares them by their
  // slot's UrlId, and looks up by UrlId directly (transparent functors).
  struct ByUrl {
    cluster::UrlId id;
  };
  struct Hash {
    using is_transparent = void;
    const HugePageVector<PageSlot>* slots;
    // UrlIds are already well-mixed fingerprints.
    size_t operator()(PageId p) const { return (*slots)[p].id; }
    size_t operator()(ByUrl k) const { return k.id; }
  };
  struct Eq {
    using is_transparent = void;
    const HugePageVector<PageSlot>* slots;
    cluster::UrlId Id(PageId p) const { return (*slots)[p].id; }
    cluster::UrlId Id(ByUrl k) const { return k.id; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Id(a) == Id(b);
    }
  };

  static constexpr uint32_t kNoPath = ~uint32_t{0};
  // Offsets are 32 bits: 4 GiB of paths, ~50M URLs; an entry begins below
  // this.
  static constexpr size_t kPathLimit = kNoPath - 16;

  // A fresh slot for `id`, not in ids_.
  PageId NewSlot(cluster::UrlId id);
  void FreePath(PageId page);
  void CompactArena();

  // What a page keeps once crawled: its learning state (which is its
  // model as prior while has_learning is false) and its digest.
  struct CrawlState {
    LearningState learning;
    uint32_t digest = 0;
    bool has_learning : 1;
    bool has_digest : 1;
    // Whether `split` holds the signals since the last crawl.
    bool source_split_known : 1;
    SignalSplit split;

    CrawlState() : has_learning(false), has_digest(false), source_split_known(false) {}
  };
  static_assert(sizeof(CrawlState) <= 104, "CrawlState grew: it is per crawled URL");
  CrawlState& EntryOf(PageSlot& slot);
  // Frees the slot's entry if it holds neither learning nor a digest.
  void MaybeFreeEntry(PageSlot& slot);
  void FreeEntry(PageSlot& slot);

  // On 2 MiB pages where the kernel allows (huge_page_allocator.h): a
  // load touches them in growing runs, and on 4 KiB pages each first touch
  // is a page fault.
  HugePageVector<PageSlot> slots_;
  std::vector<PageId> free_;
  // Crawl states by PageSlot::crawl_state; freed ones are reused. A deque
  // grows in small blocks, where a vector's doubling could leave up to half
  // of the table unused.
  std::deque<CrawlState> crawl_states_;
  std::vector<uint32_t> crawl_states_free_;
  // Pages by id, in kIdParts tables by the id's top bits (ids are uniform
  // fingerprints, so the tables are about equal), so that IndexAll can fill
  // them on as many threads.
  using IdTable = absl::flat_hash_set<PageId, Hash, Eq>;
  static constexpr int kIdPartBits = 1;
  static constexpr int kIdParts = 1 << kIdPartBits;
  static int IdPart(cluster::UrlId id) { return static_cast<int>(id >> (64 - kIdPartBits)); }
  IdTable& IdsOf(cluster::UrlId id) { return ids_[IdPart(id)]; }
  const IdTable& IdsOf(cluster::UrlId id) const { return ids_[IdPart(id)]; }
  std::array<IdTable, kIdParts> ids_;
  size_t IdCapacity() const;
  StringInterner prefixes_;
  // Varint length, then the bytes; freed entries are garbage until the next
  // compaction.
  HugePageVector<char> arena_;
  size_t garbage_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_PAGE_TABLE_H_
