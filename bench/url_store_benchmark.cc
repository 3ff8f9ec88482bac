// Measures what the shard server needs from its store: bulk writes of full
// records, blind patches (signals), and the start-up path — open, scan every
// record and build the in-memory array an index is made from — warm and with
// the store's files evicted from the page cache (cold).
//
//   bazel run -c opt //shard/store:url_store_benchmark -- --records=1000000

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_support.h"
#include "cluster/url_id.h"
#include "shard/store/records.pb.h"
#include "shard/store/url_store.h"

ABSL_FLAG(int64_t, records, 1000000, "URL records to write and load");
ABSL_FLAG(int, outcomes, 16, "crawl outcomes in each record's window");
ABSL_FLAG(int, batch, 1000, "mutations per write batch");
ABSL_FLAG(int64_t, gets, 100000, "random point reads");
ABSL_FLAG(std::string, dir, "", "store directory (default: a new temp dir)");
ABSL_FLAG(bool, keep, false, "keep the store directory afterwards");
ABSL_FLAG(int, write_buffer_mb, 0, "memtable size of column family urls (0: the store's default)");

namespace recrawl {
namespace shard {
namespace {

using bench::BenchDir;
using bench::Check;
using bench::Clock;
using bench::EvictFromPageCache;
using bench::Seconds;
using bench::SyntheticUrl;

// A record as a shard holds it after a while: priors, estimates, a full
// window of outcomes, signal keys, a digest.
UrlRecord FullRecord(int64_t i, int outcomes, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  UrlRecord r;
  r.set_url(SyntheticUrl(i));
  r.set_politeness_host(absl::StrCat("www.site", i % 50000, ".com"));
  r.set_importance(u(rng));
  r.mutable_prior()->set_change_rate(u(rng) * 1e-4);
  r.mutable_prior()->set_recall(u(rng));
  r.mutable_prior()->set_false_rate(u(rng) * 1e-5);
  r.mutable_estimate()->set_change_rate(u(rng) * 1e-4);
  r.mutable_estimate()->set_recall(u(rng));
  r.mutable_estimate()->set_false_rate(u(rng) * 1e-5);
  r.set_observed_crawls(40);
  const double now = 1.7e9 + u(rng) * 1e6;
  r.set_last_crawl_time(now);
  r.set_signals_since_crawl(2);
  r.set_last_signal_time(now + 100);
  for (int k = 0; k < 4; ++k) r.add_recent_signal_keys(rng());
  for (int k = 0; k < outcomes; ++k) {
    AddOutcome(static_cast<float>(3600 * (1 + u(rng))), k % 2, k % 3 == 0, r.mutable_outcomes());
  }
  r.set_content_digest(std::string(8, static_cast<char>(i)));
  return r;
}

// The per-URL state an index is built from.
struct HotState {
  cluster::UrlId id;
  double importance;
  double change_rate;
  double recall;
  double false_rate;
  double last_crawl_time;
  uint32_t signals;
};

UrlStoreOptions Options() {
  UrlStoreOptions options;
  if (absl::GetFlag(FLAGS_write_buffer_mb) > 0) {
    options.write_buffer_bytes = (size_t{1} << 20) * absl::GetFlag(FLAGS_write_buffer_mb);
  }
  return options;
}

void Load(const std::string& dir, const char* label, int64_t records) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir, Options());
  Check(store.status());
  const double open_s = Seconds(start);
  std::vector<HotState> hot;
  hot.reserve(records);
  absl::StatusOr<ScanStats> stats =
      (*store)->ScanUrls([&hot](cluster::UrlId id, const UrlRecord& r) {
        const ChangeModel& m = r.has_estimate() ? r.estimate() : r.prior();
        hot.push_back({id, r.importance(), m.change_rate(), m.recall(), m.false_rate(),
                       r.last_crawl_time(), r.signals_since_crawl()});
      });
  Check(stats.status());
  const double total_s = Seconds(start);
  std::printf(
      "%-28s open %.3f s, open+scan+array %.3f s: %.2fM records/s "
      "(%lld records, %lld malformed)\n",
      label, open_s, total_s, hot.size() / total_s / 1e6, static_cast<long long>(hot.size()),
      static_cast<long long>(stats->malformed));
}

int64_t DirectoryBytes(const std::string& dir) {
  int64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  return bytes;
}

void Run() {
  const int64_t n = absl::GetFlag(FLAGS_records);
  const int outcomes = absl::GetFlag(FLAGS_outcomes);
  const int batch_size = absl::GetFlag(FLAGS_batch);
  const std::string dir = BenchDir(absl::GetFlag(FLAGS_dir), "recrawl_store_bench");
  std::filesystem::remove_all(dir);
  std::mt19937_64 rng(1);

  {
    absl::StatusOr<std::unique_ptr<UrlStore>> opened = UrlStore::Open(dir, Options());
    Check(opened.status());
    UrlStore& store = **opened;
    UrlStore::Batch batch = store.NewBatch();

    // Records are built outside the timed loop: the store's cost is wanted.
    int64_t value_bytes = 0;
    double write_s = 0;
    std::vector<UrlRecord> chunk;
    for (int64_t i = 0; i < n;) {
      chunk.clear();
      for (; i < n && static_cast<int64_t>(chunk.size()) < batch_size; ++i) {
        chunk.push_back(FullRecord(i, outcomes, rng));
        value_bytes += chunk.back().ByteSizeLong();
      }
      const Clock::time_point start = Clock::now();
      for (const UrlRecord& r : chunk) batch.PutUrl(r);
      Check(store.Write(&batch));
      write_s += Seconds(start);
    }
    std::printf("records: %lld, mean value %.0f bytes (window of %d)\n", static_cast<long long>(n),
                double(value_bytes) / n, outcomes);
    std::printf("%-28s %.2f s: %.0fK records/s\n", "put, WAL, batches", write_s, n / write_s / 1e3);

    Clock::time_point start = Clock::now();
    Check(store.Flush());
    Check(store.Compact());
    std::printf("%-28s %.2f s; store %.0f MB on disk\n", "flush + compact", Seconds(start),
                DirectoryBytes(dir) / 1e6);

    // Signals: one blind patch per URL, random order.
    std::vector<cluster::UrlId> ids(n);
    for (int64_t i = 0; i < n; ++i) ids[i] = cluster::UrlIdOf(SyntheticUrl(i));
    std::vector<cluster::UrlId> order = ids;
    std::shuffle(order.begin(), order.end(), rng);
    start = Clock::now();
    UrlRecord patch;
    for (int64_t i = 0; i < n; ++i) {
      patch.set_signals_since_crawl(3);
      patch.set_last_signal_time(1.7e9 + i);
      patch.clear_recent_signal_keys();
      patch.add_recent_signal_keys(i);
      batch.PatchUrl(order[i], patch);
      if (batch.count() == batch_size) Check(store.Write(&batch));
    }
    Check(store.Write(&batch));
    const double patch_s = Seconds(start);
    std::printf("%-28s %.2f s: %.0fK patches/s\n", "patch (signal), WAL", patch_s,
                n / patch_s / 1e3);

    const int64_t gets = std::min<int64_t>(absl::GetFlag(FLAGS_gets), n);
    start = Clock::now();
    for (int64_t i = 0; i < gets; ++i) {
      Check(store.GetUrl(ids[rng() % n]).status());
    }
    const double get_s = Seconds(start);
    std::printf("%-28s %.2f s: %.0fK gets/s (patches pending)\n", "point get, random", get_s,
                gets / get_s / 1e3);
  }

  // After a crash: the patches are replayed from the log.
  Load(dir, "start, patches in log", n);
  // After a clean shutdown, which flushes: patches in table files, not yet
  // merged by a compaction.
  {
    absl::StatusOr<std::unique_ptr<UrlStore>> opened = UrlStore::Open(dir, Options());
    Check(opened.status());
    Check((*opened)->Flush());
  }
  Load(dir, "start, patches flushed", n);
  {
    absl::StatusOr<std::unique_ptr<UrlStore>> opened = UrlStore::Open(dir, Options());
    Check(opened.status());
    Check((*opened)->Compact());
  }
  Load(dir, "start, compacted, warm", n);
  EvictFromPageCache(dir);
  Load(dir, "start, compacted, cold", n);

  if (!absl::GetFlag(FLAGS_keep)) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  recrawl::shard::Run();
  return 0;
}
