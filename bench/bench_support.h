// Pieces the storage-facing benchmarks (url_store_benchmark, shard_benchmark,
// shard_server_benchmark) share, so that their numbers are comparable: the
// same synthetic URLs, the same raw RocksDB baseline, the same cold start.
#ifndef RECRAWL_BENCH_BENCH_SUPPORT_H_
#define RECRAWL_BENCH_BENCH_SUPPORT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recrawl {
namespace bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The q-quantile of `v` (0 ≤ q ≤ 1; 1 is the largest), by the element at
// rank ⌊q (n − 1)⌋ once sorted. `v` must not be empty.
double Percentile(std::vector<double> v, double q);

// Exits with the status printed unless it is OK.
void Check(const absl::Status& status);

// The benchmark's data directory: `flag_dir` when given, else a directory
// named `<name>_<pid>` under the system's temporary directory.
std::string BenchDir(const std::string& flag_dir, const std::string& name);

// URL number i of a synthetic web: query strings, ~60 bytes; hosts of
// Zipf-like sizes (rank r has a share ∝ 1/r of the URLs, 2·10^6 ranks, so
// 4·10^4 hosts hold URLs at 10^5 URLs, 2.6·10^5 at 10^6).
std::string SyntheticUrl(int64_t i);
// The host of rank r (1: the largest) in SyntheticUrl's web.
std::string SyntheticHost(int64_t rank);

// Evicts the files under `dir` from the page cache (for a cold start)
// without touching anyone else's cached files.
void EvictFromPageCache(const std::string& dir);

// The baseline the shard benchmarks' ratios are against: RocksDB alone under `dir`,
// random 8-byte keys, 120-byte values, WriteBatch of 1000, WAL on, default
// options. Returns records per second.
double RawPutRate(const std::string& dir, int64_t n);

}  // namespace bench
}  // namespace recrawl

#endif  // RECRAWL_BENCH_BENCH_SUPPORT_H_
