// The journal's format, writer and reader: entries round-trip byte for
// byte, sequence numbers, folds of the pages that leave the window, and
// truncation.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cluster/url_id.h"
#include "gtest/gtest.h"
#include "shard/journal_format.h"
#include "shard/journal_reader.h"
#include "shard/journal_writer.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {
namespace {

TEST(JournalFormatTest, EntriesRoundTrip) {
  JournalWriter writer(/*window=*/8);
  writer.AddSignal({1, 2.5, 3});
  writer.AddState({9, 65535, ~uint64_t{0} - 1, 12.25f});
  writer.AddSignal({~uint64_t{0}, -0.0, 7});
  writer.AddLease({5, 77, 1234.5, "fetcher-1"});
  writer.AddLeaseEnd({6, 78});
  writer.AddLease({7, 79, 1.0, ""});
  const std::string entry(writer.entry());
  std::vector<JournalSignal> signals;
  std::vector<JournalState> states;
  std::vector<std::pair<JournalLease, std::string>> leases;
  std::vector<JournalLeaseEnd> ends;
  auto on_signal = [&](const JournalSignal& s) { signals.push_back(s); };
  auto on_state = [&](const JournalState& s) { states.push_back(s); };
  auto on_lease = [&](const JournalLease& l) { leases.emplace_back(l, std::string(l.holder)); };
  auto on_end = [&](const JournalLeaseEnd& e) { ends.push_back(e); };
  const JournalVisitor visit{on_signal, on_state, on_lease, on_end};
  EXPECT_TRUE(JournalReader::ForEachRecord(entry, visit));
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].url, 1u);
  EXPECT_EQ(signals[0].time, 2.5);
  EXPECT_EQ(signals[0].key, 3u);
  EXPECT_EQ(signals[1].url, ~uint64_t{0});
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].url, 9u);
  EXPECT_EQ(states[0].n_cis, 65535);
  EXPECT_EQ(states[0].filter, ~uint64_t{0} - 1);
  EXPECT_EQ(states[0].latest, 12.25f);
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[0].first.url, 5u);
  EXPECT_EQ(leases[0].first.id, 77u);
  EXPECT_EQ(leases[0].first.deadline, 1234.5);
  EXPECT_EQ(leases[0].second, "fetcher-1");
  EXPECT_EQ(leases[1].first.url, 7u);
  EXPECT_EQ(leases[1].second, "");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].url, 6u);
  EXPECT_EQ(ends[0].id, 78u);
  std::vector<cluster::UrlId> urls;
  EXPECT_TRUE(JournalReader::ForEachUrl(entry, [&](cluster::UrlId url) { urls.push_back(url); }));
  EXPECT_EQ(urls, (std::vector<cluster::UrlId>{1, 9, ~uint64_t{0}, 5, 6, 7}));
  // A torn entry or an unknown tag: the whole records before it, and false.
  signals.clear();
  states.clear();
  EXPECT_FALSE(JournalReader::ForEachRecord(absl::string_view(entry).substr(0, 30), visit));
  EXPECT_EQ(signals.size(), 1u);
  EXPECT_EQ(states.size(), 0u);
  EXPECT_FALSE(JournalReader::ForEachRecord("X", visit));
  // A lease record whose holder runs past the end.
  leases.clear();
  JournalWriter torn_writer(/*window=*/8);
  torn_writer.AddLease({5, 77, 1.0, "abcdef"});
  const std::string torn(torn_writer.entry());
  EXPECT_FALSE(
      JournalReader::ForEachRecord(absl::string_view(torn).substr(0, torn.size() - 1), visit));
  EXPECT_TRUE(leases.empty());
}

// Signals keep their source ('T'), folds their split by source with the
// joint events ('J'); records without them ('S', 'F', as stores written
// before sources were kept hold) read as of unknown source and split, and
// a split without joint events ('G', from before signals were matched)
// reads with none.
TEST(JournalFormatTest, SourcesAndSplitsRoundTrip) {
  JournalWriter writer(/*window=*/8);
  writer.AddSignal({1, 2.5, 3, /*source=*/2});
  writer.AddSignal({2, 3.5, 4});  // unknown source
  JournalState split{9, 7, 5, 0.5f};
  split.split_known = true;
  split.split.named = {1, 2, 3, 0};
  split.split.joint_events = 1;
  split.split.joint_signals = 3;
  split.split.latest_sources = 0b10011;
  writer.AddState(split);
  writer.AddState({10, 3, 6, 1.5f});  // split unknown
  std::vector<JournalSignal> signals;
  std::vector<JournalState> states;
  EXPECT_TRUE(JournalReader::ForEachRecord(
      writer.entry(), {[&](const JournalSignal& s) { signals.push_back(s); },
                       [&](const JournalState& s) { states.push_back(s); },
                       [](const JournalLease&) {}, [](const JournalLeaseEnd&) {}}));
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[0].url, 1u);
  EXPECT_EQ(signals[0].key, 3u);
  EXPECT_EQ(signals[0].source, 2);
  EXPECT_EQ(signals[1].url, 2u);
  EXPECT_EQ(signals[1].source, kUnknownJournalSource);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].url, 9u);
  EXPECT_EQ(states[0].n_cis, 7);
  EXPECT_EQ(states[0].latest, 0.5f);
  EXPECT_TRUE(states[0].split_known);
  EXPECT_EQ(states[0].split.named, split.split.named);
  EXPECT_EQ(states[0].split.joint_events, 1);
  EXPECT_EQ(states[0].split.joint_signals, 3);
  EXPECT_EQ(states[0].split.latest_sources, 0b10011);
  EXPECT_EQ(states[1].url, 10u);
  EXPECT_FALSE(states[1].split_known);
  // A 'G' record: the 'J' record's bytes without the last three.
  std::string old_split(writer.entry().substr(kJournalSourcedSignalBytes + kJournalSignalBytes,
                                              kJournalSplitStateBytes));
  old_split[0] = kJournalSplitStateTag;
  states.clear();
  EXPECT_TRUE(JournalReader::ForEachRecord(
      old_split, {[](const JournalSignal&) {}, [&](const JournalState& s) { states.push_back(s); },
                  [](const JournalLease&) {}, [](const JournalLeaseEnd&) {}}));
  ASSERT_EQ(states.size(), 1u);
  EXPECT_TRUE(states[0].split_known);
  EXPECT_EQ(states[0].n_cis, 7);
  EXPECT_EQ(states[0].split.named, split.split.named);
  EXPECT_EQ(states[0].split.joint_events, 0);
  EXPECT_EQ(states[0].split.joint_signals, 0);
  EXPECT_EQ(states[0].split.latest_sources, 0);
  // A source byte out of range reads as unknown; a torn 'T' or 'J' is cut.
  std::string bad(writer.entry().substr(0, kJournalSourcedSignalBytes));
  bad.back() = 9;
  signals.clear();
  EXPECT_TRUE(JournalReader::ForEachRecord(
      bad, {[&](const JournalSignal& s) { signals.push_back(s); }, [](const JournalState&) {},
            [](const JournalLease&) {}, [](const JournalLeaseEnd&) {}}));
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].source, kUnknownJournalSource);
  EXPECT_FALSE(JournalReader::ForEachUrl(writer.entry().substr(0, kJournalSourcedSignalBytes - 1),
                                         [](cluster::UrlId) {}));
  const size_t split_at = 2 * kJournalSourcedSignalBytes - 1;  // 'T', then 'S'
  EXPECT_FALSE(JournalReader::ForEachUrl(
      writer.entry().substr(0, split_at + kJournalJointStateBytes - 1), [](cluster::UrlId) {}));
}

// The bytes stores hold: a tag, then the fields in host byte order.
TEST(JournalFormatTest, RecordLayout) {
  auto bytes = [](auto v) { return std::string(reinterpret_cast<const char*>(&v), sizeof(v)); };
  JournalWriter writer(/*window=*/8);
  writer.AddSignal({1, 2.5, 3});
  EXPECT_EQ(writer.entry(), "S" + bytes(cluster::UrlId{1}) + bytes(2.5) + bytes(uint64_t{3}));
  EXPECT_EQ(writer.entry().size(), kJournalSignalBytes);

  JournalWriter state(/*window=*/8);
  state.AddState({9, 4, 5, 0.5f});
  EXPECT_EQ(state.entry(),
            "F" + bytes(cluster::UrlId{9}) + bytes(uint16_t{4}) + bytes(uint64_t{5}) + bytes(0.5f));
  EXPECT_EQ(state.entry().size(), kJournalStateBytes);

  JournalWriter lease(/*window=*/8);
  lease.AddLease({5, 77, 1234.5, "f1"});
  EXPECT_EQ(lease.entry(), "L" + bytes(cluster::UrlId{5}) + bytes(uint64_t{77}) + bytes(1234.5) +
                               bytes(uint16_t{2}) + "f1");
  EXPECT_EQ(lease.entry().size(), kJournalLeaseBytes + 2);

  // With the source, and with the split by source.
  JournalWriter sourced(/*window=*/8);
  sourced.AddSignal({1, 2.5, 3, /*source=*/1});
  EXPECT_EQ(sourced.entry(),
            "T" + bytes(cluster::UrlId{1}) + bytes(2.5) + bytes(uint64_t{3}) + bytes(int8_t{1}));
  EXPECT_EQ(sourced.entry().size(), kJournalSourcedSignalBytes);
  JournalWriter split(/*window=*/8);
  JournalState split_state{9, 4, 5, 0.5f};
  split_state.split_known = true;
  split_state.split.named = {1, 0, 2, 255};
  split_state.split.joint_events = 2;
  split_state.split.joint_signals = 5;
  split_state.split.latest_sources = 0b00110;
  split.AddState(split_state);
  EXPECT_EQ(split.entry(), "J" + bytes(cluster::UrlId{9}) + bytes(uint16_t{4}) +
                               bytes(uint64_t{5}) + bytes(0.5f) +
                               std::string("\x01\x00\x02\xff\x02\x05\x06", 7));
  EXPECT_EQ(split.entry().size(), kJournalJointStateBytes);

  JournalWriter end(/*window=*/8);
  end.AddLeaseEnd({6, 78});
  EXPECT_EQ(end.entry(), "E" + bytes(cluster::UrlId{6}) + bytes(uint64_t{78}));
  EXPECT_EQ(end.entry().size(), kJournalLeaseEndBytes);

  // A holder is cut to what its size field can say.
  JournalWriter long_holder(/*window=*/8);
  const std::string holder(kMaxJournalHolder + 10, 'h');
  long_holder.AddLease({5, 77, 1.0, holder});
  EXPECT_EQ(long_holder.entry().size(), kJournalLeaseBytes + kMaxJournalHolder);
  std::string read;
  EXPECT_TRUE(JournalReader::ForEachRecord(
      long_holder.entry(), {[](const JournalSignal&) {}, [](const JournalState&) {},
                            [&](const JournalLease& l) { read = std::string(l.holder); },
                            [](const JournalLeaseEnd&) {}}));
  EXPECT_EQ(read, holder.substr(0, kMaxJournalHolder));
}

TEST(UnfoldedPagesTest, FirstInFirstOutWithTheirEntries) {
  UnfoldedPages q;
  EXPECT_TRUE(q.empty());
  q.Push(3, 10);
  q.Push(3, 11);
  q.Push(5, 12);
  q.Push(9, 13);
  q.Push(9, 14);
  EXPECT_EQ(q.size(), 5u);
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (int i = 0; i < 3; ++i) {
    out.emplace_back(q.front_seq(), q.front_page());
    q.pop_front();
  }
  // Pushes behind pops, into the last run or a new one.
  q.Push(9, 15);
  q.Push(12, 16);
  while (!q.empty()) {
    out.emplace_back(q.front_seq(), q.front_page());
    q.pop_front();
  }
  const std::vector<std::pair<uint64_t, uint32_t>> expected = {{3, 10}, {3, 11}, {5, 12}, {9, 13},
                                                               {9, 14}, {9, 15}, {12, 16}};
  EXPECT_EQ(out, expected);
  q.Push(20, 1);
  EXPECT_EQ(q.front_seq(), 20u);
  EXPECT_EQ(q.front_page(), 1u);
}

// A writer and a reader on a fresh store in a temporary directory.
class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = absl::StrCat(::testing::TempDir(), "journal_", info->name());
    std::filesystem::remove_all(dir_);
    absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Ends the writer's entry into a batch of its own and writes that; the
  // pages in `unfolded` still lack their state, and each fold adds a state
  // record for its page (url = page) and is counted in folded_.
  void WriteEntry(JournalWriter* writer, const std::vector<PageId>& unfolded = {}) {
    UrlStore::Batch batch = store_->NewBatch();
    writer->WriteEntry(
        &batch,
        [&](PageId page) {
          for (PageId p : unfolded) {
            if (p == page) return true;
          }
          return false;
        },
        [&](PageId page) {
          writer->AddState({page, 1, 0, 0.0f});
          folded_.push_back(page);
        });
    ASSERT_TRUE(store_->Write(&batch).ok());
  }

  // The stored entries, by sequence number.
  std::vector<std::pair<uint64_t, std::string>> ReadAll(JournalReader* reader) {
    std::vector<std::pair<uint64_t, std::string>> entries;
    absl::StatusOr<int64_t> n = reader->ReadAll([&](uint64_t seq, absl::string_view entry) {
      entries.emplace_back(seq, std::string(entry));
    });
    EXPECT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(n.value_or(-1), static_cast<int64_t>(entries.size()));
    return entries;
  }

  std::string dir_;
  std::unique_ptr<UrlStore> store_;
  std::vector<PageId> folded_;
};

TEST_F(JournalTest, EntriesAreNumberedFromOneAndReadBack) {
  JournalWriter writer(/*window=*/8);
  EXPECT_EQ(writer.next_seq(), 1u);
  EXPECT_EQ(writer.first_kept(), 1u);
  WriteEntry(&writer);  // empty: not written, no number taken
  EXPECT_EQ(writer.next_seq(), 1u);
  writer.AddSignal({1, 2.0, 3});
  WriteEntry(&writer);
  EXPECT_TRUE(writer.entry().empty());
  writer.AddSignal({2, 4.0, 5});
  writer.AddLeaseEnd({2, 6});
  WriteEntry(&writer);
  EXPECT_EQ(writer.next_seq(), 3u);

  JournalReader reader(store_.get());
  const auto entries = ReadAll(&reader);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, 1u);
  EXPECT_EQ(entries[1].first, 2u);
  EXPECT_FALSE(reader.empty());
  EXPECT_EQ(reader.first_seq(), 1u);
  EXPECT_EQ(reader.last_seq(), 2u);
  std::vector<cluster::UrlId> urls;
  EXPECT_TRUE(JournalReader::ForEachUrl(entries[1].second,
                                        [&](cluster::UrlId url) { urls.push_back(url); }));
  EXPECT_EQ(urls, (std::vector<cluster::UrlId>{2, 2}));
}

TEST_F(JournalTest, AnEmptyJournalReadsAsEmpty) {
  JournalReader reader(store_.get());
  EXPECT_TRUE(ReadAll(&reader).empty());
  EXPECT_TRUE(reader.empty());
}

TEST_F(JournalTest, ARestoredWriterContinuesTheSequence) {
  JournalWriter writer(/*window=*/8);
  writer.Restore(/*next_seq=*/10, /*first_kept=*/4);
  EXPECT_EQ(writer.next_seq(), 10u);
  EXPECT_EQ(writer.first_kept(), 4u);
  writer.AddSignal({1, 2.0, 3});
  WriteEntry(&writer);
  EXPECT_EQ(writer.next_seq(), 11u);
  JournalReader reader(store_.get());
  const auto entries = ReadAll(&reader);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].first, 10u);
}

// A page is folded once its oldest needed entry is more than the window
// before the entry being written, into that entry, and needs it from then
// on; a page no longer unfolded is dropped without a fold.
TEST_F(JournalTest, PagesThatLeaveTheWindowAreFolded) {
  JournalWriter writer(/*window=*/2);
  writer.AddSignal({7, 1.0, 1});
  writer.AddUnfolded(writer.next_seq(), 7);
  writer.AddSignal({8, 1.0, 2});
  writer.AddUnfolded(writer.next_seq(), 8);
  WriteEntry(&writer, {7, 8});  // entry 1
  WriteEntry(&writer, {7, 8});  // nothing to write or fold
  EXPECT_EQ(writer.next_seq(), 2u);
  std::vector<uint64_t> folded_at;
  for (int i = 0; i < 6; ++i) {
    writer.AddSignal({9, 1.0, 3});
    const uint64_t seq = writer.next_seq();
    folded_.clear();
    // Page 8 was crawled at entry 3.
    WriteEntry(&writer, seq < 3 ? std::vector<PageId>{7, 8} : std::vector<PageId>{7});
    if (!folded_.empty()) {
      EXPECT_EQ(folded_, std::vector<PageId>{7});
      folded_at.push_back(seq);
    }
  }
  // Entries 2..7: page 7 needs entry 1 until it is folded into entry 4,
  // then entry 4 until it is folded into entry 7.
  EXPECT_EQ(folded_at, (std::vector<uint64_t>{4, 7}));
  EXPECT_EQ(writer.unfolded().size(), 1u);
  EXPECT_EQ(writer.unfolded().front_seq(), 7u);
  JournalReader reader(store_.get());
  const auto entries = ReadAll(&reader);
  ASSERT_EQ(entries.size(), 7u);
  std::vector<cluster::UrlId> urls;
  JournalReader::ForEachUrl(entries[3].second, [&](cluster::UrlId url) { urls.push_back(url); });
  EXPECT_EQ(urls, (std::vector<cluster::UrlId>{9, 7}));  // the signal, then the fold
}

TEST_F(JournalTest, FoldsAreSpreadOverEntries) {
  JournalWriter writer(/*window=*/1);
  std::vector<PageId> pages;
  for (PageId page = 0; page < JournalWriter::kFoldsPerCall + 10; ++page) {
    writer.AddUnfolded(1, page);
    pages.push_back(page);
  }
  writer.AddSignal({1, 1.0, 1});
  WriteEntry(&writer, pages);  // entry 1: none due yet
  EXPECT_TRUE(folded_.empty());
  writer.AddSignal({1, 1.0, 1});
  WriteEntry(&writer, pages);  // entry 2: the window is 1
  EXPECT_TRUE(folded_.empty());
  WriteEntry(&writer, pages);  // entry 3
  EXPECT_EQ(folded_.size(), static_cast<size_t>(JournalWriter::kFoldsPerCall));
  folded_.clear();
  WriteEntry(&writer, pages);  // entry 4
  EXPECT_EQ(folded_.size(), 10u);
  EXPECT_EQ(writer.next_seq(), 5u);
}

// Entries before the oldest one a page needs are deleted in steps of
// kTruncateStep.
TEST_F(JournalTest, EntriesNoPageNeedsAreTruncated) {
  constexpr uint64_t kStep = JournalWriter::kTruncateStep;
  JournalWriter writer(/*window=*/1000);
  writer.AddUnfolded(1, 5);  // needs entry 1 until it is crawled
  for (uint64_t i = 0; i < kStep + 10; ++i) {
    writer.AddSignal({1, 1.0, i});
    WriteEntry(&writer, {5});
  }
  EXPECT_EQ(writer.first_kept(), 1u);
  {
    JournalReader reader(store_.get());
    EXPECT_EQ(ReadAll(&reader).size(), kStep + 10);
    EXPECT_EQ(reader.first_seq(), 1u);
  }
  // Crawled: nothing needs the entries any more.
  writer.AddSignal({1, 1.0, 0});
  WriteEntry(&writer);
  EXPECT_EQ(writer.next_seq(), kStep + 12);
  EXPECT_EQ(writer.first_kept(), kStep + 12);
  JournalReader reader(store_.get());
  EXPECT_TRUE(ReadAll(&reader).empty());
  // Fewer than a step behind: kept.
  for (uint64_t i = 0; i < kStep - 1; ++i) {
    writer.AddSignal({1, 1.0, i});
    WriteEntry(&writer);
  }
  EXPECT_EQ(writer.first_kept(), kStep + 12);
  JournalReader again(store_.get());
  EXPECT_EQ(ReadAll(&again).size(), kStep - 1);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
