#include "shard/page_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <thread>
#include <utility>

namespace recrawl {
namespace shard {
namespace {

void PutVarint(size_t v, HugePageVector<char>* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

size_t GetVarint(const HugePageVector<char>& arena, size_t* i) {
  size_t v = 0;
  for (int shift = 0;; shift += 7) {
    const unsigned char b = static_cast<unsigned char>(arena[(*i)++]);
    v |= static_cast<size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

// The entry at `offset`: its path bytes, its prefix id, and the size of the
// whole entry.
absl::string_view GetEntry(const HugePageVector<char>& arena, size_t offset, uint32_t* prefix,
                           size_t* entry_size) {
  size_t i = offset;
  *prefix = static_cast<uint32_t>(GetVarint(arena, &i));
  const size_t len = GetVarint(arena, &i);
  *entry_size = i - offset + len;
  return absl::string_view(arena.data() + i, len);
}

}  // namespace

PageTable::PageTable() {
  for (IdTable& ids : ids_) ids = IdTable(0, Hash{&slots_}, Eq{&slots_});
}

PageId PageTable::Find(cluster::UrlId id) const {
  const IdTable& ids = IdsOf(id);
  auto it = ids.find(ByUrl{id});
  return it == ids.end() ? kNoPage : *it;
}

size_t PageTable::IdCapacity() const {
  size_t capacity = 0;
  for (const IdTable& ids : ids_) capacity += ids.capacity();
  return capacity;
}

size_t PageTable::size() const {
  size_t pages = 0;
  for (const IdTable& ids : ids_) pages += ids.size();
  return pages;
}

PageId PageTable::Add(cluster::UrlId id) { return TryAdd(id); }

PageId PageTable::TryAdd(cluster::UrlId id) {
  const PageId page = NewSlot(id);
  if (!IdsOf(id).insert(page).second) {
    slots_[page] = PageSlot();
    free_.push_back(page);
    return kNoPage;
  }
  return page;
}

PageId PageTable::AddUnindexed(cluster::UrlId id) { return NewSlot(id); }

PageId PageTable::NewSlot(cluster::UrlId id) {
  PageId page;
  if (!free_.empty()) {
    page = free_.back();
    free_.pop_back();
  } else {
    page = static_cast<PageId>(slots_.size());
    slots_.emplace_back();
  }
  PageSlot& slot = slots_[page];
  slot = PageSlot();
  slot.id = id;
  slot.in_use = true;
  slot.path = kNoPath;
  return page;
}

void PageTable::IndexAll() {
  // Each part's table on its own thread, which reads the slots and writes
  // only its table.
  auto index_part = [this](int part) {
    constexpr PageId kAhead = 16;
    IdTable& ids = ids_[part];
    const PageId end = static_cast<PageId>(slots_.size());
    for (PageId page = 0; page < end; ++page) {
      if (page + kAhead < end) {
        const PageSlot& ahead = slots_[page + kAhead];
        if (ahead.in_use && IdPart(ahead.id) == part) ids.prefetch(ByUrl{ahead.id});
      }
      const PageSlot& slot = slots_[page];
      if (slot.in_use && IdPart(slot.id) == part) ids.insert(page);
    }
  };
  // A small table is not worth a thread.
  constexpr size_t kParallelPages = size_t{1} << 16;
  const int first_helped = slots_.size() < kParallelPages ? kIdParts : 1;
  std::vector<std::thread> helpers;
  for (int part = first_helped; part < kIdParts; ++part) helpers.emplace_back(index_part, part);
  for (int part = 0; part < first_helped; ++part) index_part(part);
  for (std::thread& helper : helpers) helper.join();
}

void PageTable::Remove(PageId page) {
  PageSlot& slot = slots_[page];
  if (!slot.in_use) return;
  IdsOf(slot.id).erase(ByUrl{slot.id});
  FreePath(page);
  FreeEntry(slot);
  slot = PageSlot();
  free_.push_back(page);
  if (garbage_ > (size_t{1} << 20) && garbage_ > arena_.size() / 2) {
    CompactArena();
  }
}

void PageTable::Reserve(size_t pages, size_t path_bytes) {
  slots_.reserve(pages);
  // Ids are uniform: a part's share is within a few standard deviations
  // of an equal one (a table that must grow still may).
  const size_t share = pages / kIdParts;
  for (IdTable& ids : ids_) ids.reserve(pages == 0 ? 0 : share + share / 64 + 64);
  arena_.reserve(std::min<size_t>(path_bytes, kNoPath));
}

namespace {

// The state a page without an entry has: its model (the slot's floats) as
// its prior.
LearningState ModelAsPrior(float change_rate, float recall, float false_rate) {
  policy::PageParams prior;
  prior.change_rate = change_rate;
  prior.recall = recall;
  prior.false_rate = false_rate;
  return InitLearning(prior);
}
LearningState ModelAsPrior(const PageSlot& slot) {
  return ModelAsPrior(slot.change_rate, slot.recall, slot.false_rate);
}

bool SameState(const LearningState& a, const LearningState& b) {
  return std::memcmp(&a, &b, sizeof(LearningState)) == 0;
}

}  // namespace

bool PageTable::IsModelAsPrior(const policy::PageParams& model, const LearningState& state) {
  return state.crawls == 0 && SameState(state, ModelAsPrior(static_cast<float>(model.change_rate),
                                                            static_cast<float>(model.recall),
                                                            static_cast<float>(model.false_rate)));
}

LearningState PageTable::Learning(PageId page) const {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state != kNoCrawlState) {
    const CrawlState& e = crawl_states_[slot.crawl_state];
    if (e.has_learning) return e.learning;
  }
  return ModelAsPrior(slot);
}

void PageTable::SetLearning(PageId page, const LearningState& state) {
  PageSlot& slot = slots_[page];
  if (state.crawls == 0 && SameState(state, ModelAsPrior(slot))) {
    if (slot.crawl_state != kNoCrawlState) {
      crawl_states_[slot.crawl_state].has_learning = false;
      MaybeFreeEntry(slot);
    }
    return;
  }
  CrawlState& e = EntryOf(slot);
  e.learning = state;
  e.has_learning = true;
}

uint8_t PageTable::CountSourceSignal(PageId page, int source, double offset, double joint_window) {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return 0;
  CrawlState& e = crawl_states_[slot.crawl_state];
  if (!e.source_split_known) return 0;
  // Until the next crawl: an unknown source, or a count past its byte.
  const auto forget = [&e] {
    e.source_split_known = false;
    return uint8_t{0};
  };
  if (source < 0 || source > kOtherTrustSource) return forget();
  SignalSplit& split = e.split;
  const uint8_t bit = static_cast<uint8_t>(1u << source);
  const uint8_t instant = split.latest_sources;
  if (instant != 0 && (instant & bit) == 0 && joint_window > 0.0 &&
      std::abs(offset - static_cast<double>(slot.latest_signal)) <= joint_window) {
    // The same change as the latest instant's signals. A single-source
    // event becomes a joint event of two signals; a joint event takes one
    // more.
    const bool single = __builtin_popcount(instant) == 1;
    const int first = __builtin_ctz(instant);
    const bool named_first = single && first != kOtherTrustSource;
    if (split.joint_signals > 0xff - (single ? 2 : 1) || (single && split.joint_events == 0xff) ||
        (named_first && split.named[first] == 0)) {
      return forget();
    }
    if (named_first) --split.named[first];
    split.joint_events += single;
    split.joint_signals += single ? 2 : 1;
    split.latest_sources = instant | bit;
    return instant;
  }
  if (source != kOtherTrustSource) {
    if (split.named[source] == 0xff) return forget();
    ++split.named[source];
  }
  // A signal no earlier than the latest one starts a new instant.
  if (offset >= static_cast<double>(slot.latest_signal)) split.latest_sources = bit;
  return 0;
}

bool PageTable::SourceSplit(PageId page, int64_t n_cis, IntervalSignals* signals) const {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return false;
  const CrawlState& e = crawl_states_[slot.crawl_state];
  if (!e.source_split_known) return false;
  int64_t taken = e.split.joint_signals;
  for (int s = 0; s < kOtherTrustSource; ++s) {
    signals->single[s] = e.split.named[s];
    taken += e.split.named[s];
  }
  if (taken > n_cis) return false;  // n_cis saturated
  signals->single[kOtherTrustSource] = n_cis - taken;
  signals->joint = e.split.joint_events;
  return true;
}

void PageTable::RestoreSourceSignals(PageId page, bool known, const SignalSplit& split) {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return;
  CrawlState& e = crawl_states_[slot.crawl_state];
  if (!known) e.source_split_known = false;
  if (e.source_split_known) e.split = split;
}

bool PageTable::SignalSplitOf(PageId page, SignalSplit* split) const {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return false;
  const CrawlState& e = crawl_states_[slot.crawl_state];
  if (!e.source_split_known) return false;
  *split = e.split;
  return true;
}

void PageTable::RestartSourceSignals(PageId page) {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return;
  CrawlState& e = crawl_states_[slot.crawl_state];
  e.source_split_known = true;
  e.split = SignalSplit();
}

bool PageTable::Digest(PageId page, uint32_t* fingerprint) const {
  const PageSlot& slot = slots_[page];
  if (slot.crawl_state == kNoCrawlState) return false;
  const CrawlState& e = crawl_states_[slot.crawl_state];
  *fingerprint = e.digest;
  return e.has_digest;
}

void PageTable::SetDigest(PageId page, uint32_t fingerprint) {
  CrawlState& e = EntryOf(slots_[page]);
  e.digest = fingerprint;
  e.has_digest = true;
}

PageTable::CrawlState& PageTable::EntryOf(PageSlot& slot) {
  if (slot.crawl_state == kNoCrawlState) {
    if (!crawl_states_free_.empty()) {
      slot.crawl_state = crawl_states_free_.back();
      crawl_states_free_.pop_back();
      crawl_states_[slot.crawl_state] = CrawlState();
    } else {
      slot.crawl_state = static_cast<uint32_t>(crawl_states_.size());
      crawl_states_.emplace_back();
    }
  }
  return crawl_states_[slot.crawl_state];
}

void PageTable::MaybeFreeEntry(PageSlot& slot) {
  const CrawlState& e = crawl_states_[slot.crawl_state];
  if (!e.has_learning && !e.has_digest) FreeEntry(slot);
}

void PageTable::FreeEntry(PageSlot& slot) {
  if (slot.crawl_state == kNoCrawlState) return;
  crawl_states_free_.push_back(slot.crawl_state);
  slot.crawl_state = kNoCrawlState;
}

void PageTable::FreePath(PageId page) {
  if (slots_[page].path == kNoPath) return;
  size_t entry_size;
  uint32_t prefix;
  GetEntry(arena_, slots_[page].path, &prefix, &entry_size);
  garbage_ += entry_size;
}

bool PageTable::SetUrl(PageId page, const StringInterner::Hashed& prefix, absl::string_view path,
                       uint32_t* prefix_id_out) {
  if (arena_.size() + path.size() > kPathLimit && garbage_ > 0) CompactArena();
  if (arena_.size() + path.size() > kPathLimit) return false;
  const uint32_t prefix_id = prefixes_.Intern(prefix);
  FreePath(page);
  PageSlot& slot = slots_[page];
  slot.path = static_cast<uint32_t>(arena_.size());
  // The arena grows as a vector does, doubling: it and the slots are
  // mapped (huge_page_allocator.h), so capacity beyond their contents is
  // address space, not memory, and doubling copies each byte about once.
  PutVarint(prefix_id, &arena_);
  PutVarint(path.size(), &arena_);
  arena_.insert(arena_.end(), path.begin(), path.end());
  if (prefix_id_out != nullptr) *prefix_id_out = prefix_id;
  return true;
}

void PageTable::AppendUrl(PageId page, std::string* out) const {
  const PageSlot& slot = slots_[page];
  if (slot.path == kNoPath) return;
  size_t entry_size;
  uint32_t prefix_id;
  const absl::string_view path = GetEntry(arena_, slot.path, &prefix_id, &entry_size);
  const absl::string_view prefix = prefixes_.Get(prefix_id);
  out->append(prefix.data(), prefix.size());
  out->append(path.data(), path.size());
}

std::string PageTable::Url(PageId page) const {
  std::string url;
  AppendUrl(page, &url);
  return url;
}

// Copies the live entries into a new arena, in page order.
void PageTable::CompactArena() {
  HugePageVector<char> arena;
  arena.reserve(arena_.size() - garbage_);
  for (PageSlot& slot : slots_) {
    if (!slot.in_use || slot.path == kNoPath) continue;
    size_t entry_size;
    uint32_t prefix;
    GetEntry(arena_, slot.path, &prefix, &entry_size);
    const size_t offset = arena.size();
    arena.insert(arena.end(), arena_.begin() + slot.path, arena_.begin() + slot.path + entry_size);
    slot.path = static_cast<uint32_t>(offset);
  }
  arena_ = std::move(arena);
  garbage_ = 0;
}

size_t PageTable::MemoryBytes() const {
  return AllocatedBytes(slots_) + free_.capacity() * sizeof(PageId) +
         crawl_states_.size() * sizeof(CrawlState) +
         crawl_states_free_.capacity() * sizeof(uint32_t) + IdCapacity() * (sizeof(PageId) + 1) +
         AllocatedBytes(arena_) + prefixes_.MemoryBytes();
}

}  // namespace shard
}  // namespace recrawl
