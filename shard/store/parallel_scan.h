// The start-up scan of a store's URL records on several threads.
//
// A shard's restart is mostly this scan: RocksDB's iteration, LZ4 and the
// protobuf parse of every record (~1.5 µs a record here), then the shard's
// own tables built from it. The first part needs no shared state, so it
// runs on `parts` threads, each over its own range of ids (ids are
// uniform fingerprints, so equal ranges hold about equal numbers of
// records); each decodes its records into the caller's compact Item there,
// and the calling thread loads the items into its tables as they come, in
// chunks. On a loaded machine more threads also get the restart a larger
// share of the cores.
#ifndef RECRAWL_SHARD_STORE_PARALLEL_SCAN_H_
#define RECRAWL_SHARD_STORE_PARALLEL_SCAN_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "cluster/url_id.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {

// Calls decode(id, record, &item) for every well-formed record on the
// scanning threads (it must be thread-safe; `item` is reused, so decode sets
// every field it uses), and load(part, items) on the calling thread with
// consecutive runs of one part's items, in key order within each part (a
// run lets the loader fetch its tables' lines for the next items while it
// loads the current one). With parts < 1 everything runs on the calling
// thread, as part 0, in runs of one item. Returns the scans' stats added
// up, or the first scan's error.
template <typename Item>
absl::StatusOr<ScanStats> ParallelScanUrls(
    const UrlStore& store, int parts,
    const std::function<void(cluster::UrlId, const UrlRecord&, Item*)>& decode,
    absl::FunctionRef<void(int part, absl::Span<const Item> items)> load) {
  if (parts < 1) {
    // No scanning threads: all on the calling thread, as one part.
    Item item;
    return store.ScanUrls([&](cluster::UrlId id, const UrlRecord& record) {
      decode(id, record, &item);
      load(0, absl::MakeConstSpan(&item, 1));
    });
  }
  // Chunks made here and recycled: memory a scanning thread allocates
  // stays resident in its malloc arena after the thread exits (glibc's
  // malloc_trim does not trim the top of a thread's arena), so the threads
  // allocate as little as they can, and the chunks are few. They are not
  // small: each hand-over may wake a sleeping thread, and with 256-item
  // chunks those wake-ups (~40,000 at 10^7 URLs) cost a restart seconds.
  constexpr size_t kChunk = 1024;
  const int kChunks = parts + 8;
  struct Chunk {
    int part = 0;
    size_t size = 0;
    std::vector<Item> items;
  };
  struct Queue {
    absl::Mutex mu;
    std::deque<Chunk> full ABSL_GUARDED_BY(mu);
    std::deque<Chunk> empty ABSL_GUARDED_BY(mu);
    int scanning ABSL_GUARDED_BY(mu) = 0;
    static bool HasEmpty(Queue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu) {
      return !q->empty.empty();
    }
    static bool Ready(Queue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu) {
      return !q->full.empty() || q->scanning == 0;
    }
  };
  Queue q;
  {
    absl::MutexLock lock(&q.mu);
    q.scanning = parts;
    for (int i = 0; i < kChunks; ++i) {
      q.empty.emplace_back().items.resize(kChunk);
    }
  }
  std::vector<absl::StatusOr<ScanStats>> stats(parts);

  auto scan = [&](int part) {
    const cluster::UrlId step = ~cluster::UrlId{0} / static_cast<cluster::UrlId>(parts);
    const cluster::UrlId first = step * static_cast<cluster::UrlId>(part);
    const cluster::UrlId last =
        part + 1 == parts ? ~cluster::UrlId{0} : step * static_cast<cluster::UrlId>(part + 1) - 1;
    Chunk chunk;
    auto take_empty = [&] {
      q.mu.Await(absl::Condition(&Queue::HasEmpty, &q));
      chunk = std::move(q.empty.front());
      q.empty.pop_front();
      chunk.part = part;
      chunk.size = 0;
    };
    {
      absl::MutexLock lock(&q.mu);
      take_empty();
    }
    auto hand_over = [&] {
      absl::MutexLock lock(&q.mu);
      q.full.push_back(std::move(chunk));
      take_empty();
    };
    stats[part] = store.ScanUrlRange(first, last, [&](cluster::UrlId id, const UrlRecord& record) {
      decode(id, record, &chunk.items[chunk.size++]);
      if (chunk.size == kChunk) hand_over();
    });
    absl::MutexLock lock(&q.mu);
    if (chunk.size > 0) {
      q.full.push_back(std::move(chunk));
    } else {
      q.empty.push_back(std::move(chunk));
    }
    --q.scanning;
  };
  std::vector<std::thread> threads;
  for (int part = 0; part < parts; ++part) threads.emplace_back(scan, part);

  while (true) {
    Chunk chunk;
    {
      absl::MutexLock lock(&q.mu);
      q.mu.Await(absl::Condition(&Queue::Ready, &q));
      if (q.full.empty()) break;
      chunk = std::move(q.full.front());
      q.full.pop_front();
    }
    load(chunk.part, absl::MakeConstSpan(chunk.items.data(), chunk.size));
    absl::MutexLock lock(&q.mu);
    q.empty.push_back(std::move(chunk));
  }
  for (std::thread& t : threads) t.join();

  ScanStats total;
  for (absl::StatusOr<ScanStats>& s : stats) {
    if (!s.ok()) return s.status();
    total.records += s->records;
    total.malformed += s->malformed;
    total.orphans += s->orphans;
    for (std::string& e : s->errors) {
      if (total.errors.size() < ScanStats::kMaxErrors) {
        total.errors.push_back(std::move(e));
      }
    }
  }
  return total;
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_STORE_PARALLEL_SCAN_H_
