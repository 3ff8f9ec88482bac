#include "bench/bench_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace recrawl {
namespace bench {

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

void Check(const absl::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::exit(1);
  }
}

std::string BenchDir(const std::string& flag_dir, const std::string& name) {
  if (!flag_dir.empty()) return flag_dir;
  return (std::filesystem::temp_directory_path() / absl::StrCat(name, "_", getpid())).string();
}

std::string SyntheticUrl(int64_t i) {
  // The host's rank is log-uniform over [1, kHostRanks]: P(rank r) ∝ 1/r,
  // Zipf's law with exponent 1 (the largest host holds 1/ln(kHostRanks), about
  // 7% of the URLs). Drawn from a hash of i so that URL i is the same in
  // every benchmark.
  constexpr double kHostRanks = 2e6;
  uint64_t z = static_cast<uint64_t>(i) + 0x9e3779b97f4a7c15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double x = static_cast<double>(z >> 11) * 0x1.0p-53;
  const int64_t rank = static_cast<int64_t>(std::exp(x * std::log(kHostRanks)));
  return absl::StrCat("https://", SyntheticHost(rank), "/section", i % 97, "/page-", i,
                      ".html?id=", i * 7919 % 1000003);
}

std::string SyntheticHost(int64_t rank) { return absl::StrCat("www.site", rank, ".com"); }

void EvictFromPageCache(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int fd = open(entry.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

double RawPutRate(const std::string& dir, int64_t n) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(options, dir, &raw).ok()) std::exit(1);
  std::unique_ptr<rocksdb::DB> db(raw);
  std::mt19937_64 rng(3);
  std::string value(120, 'v');
  rocksdb::WriteBatch batch;
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = rng();
    for (int k = 0; k < 8; ++k) value[k] = static_cast<char>(rng());
    batch.Put(rocksdb::Slice(reinterpret_cast<const char*>(&key), 8), value);
    if (batch.Count() == 1000) {
      if (!db->Write(rocksdb::WriteOptions(), &batch).ok()) std::exit(1);
      batch.Clear();
    }
  }
  if (!db->Write(rocksdb::WriteOptions(), &batch).ok()) std::exit(1);
  return n / Seconds(start);
}

}  // namespace bench
}  // namespace recrawl
