#include "shard/journal_writer.h"

namespace recrawl {
namespace shard {

JournalWriter::JournalWriter(uint64_t window) : window_(window) {}

void JournalWriter::Restore(uint64_t next_seq, uint64_t first_kept) {
  next_seq_ = next_seq;
  first_kept_ = first_kept;
}

void JournalWriter::WriteEntry(UrlStore::Batch* batch,
                               absl::FunctionRef<bool(PageId)> still_unfolded,
                               absl::FunctionRef<void(PageId)> fold) {
  const uint64_t horizon = next_seq_ > window_ ? next_seq_ - window_ : 0;
  int folds = 0;
  while (!unfolded_.empty()) {
    const uint64_t seq = unfolded_.front_seq();
    const PageId page = unfolded_.front_page();
    if (still_unfolded(page)) {
      // (Crawled and journaled again since `seq`, it is folded early: no
      // harm.)
      if (seq >= horizon || folds == kFoldsPerCall) break;
      fold(page);
      unfolded_.Push(next_seq_, page);
      ++folds;
    }
    unfolded_.pop_front();
  }
  if (!entry_.empty()) {
    batch->PutJournal(next_seq_++, entry_);
    entry_.clear();
  }
  const uint64_t keep = unfolded_.empty() ? next_seq_ : unfolded_.front_seq();
  if (keep >= first_kept_ + kTruncateStep) {
    batch->DeleteJournal(first_kept_, keep);
    first_kept_ = keep;
  }
}

}  // namespace shard
}  // namespace recrawl
