#include "cluster/url_id.h"

namespace recrawl {
namespace cluster {
namespace internal {

uint64_t Fnv1a64(absl::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV offset basis
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;  // FNV prime
  }
  return hash;
}

uint64_t MurmurFinalize64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace internal

uint64_t Fingerprint64(absl::string_view text) {
  return internal::MurmurFinalize64(internal::Fnv1a64(text));
}

int32_t JumpConsistentHash(uint64_t key, int32_t num_buckets) {
  // Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"
  // (2014), Fig. 1, verbatim.
  int64_t b = -1;
  int64_t j = 0;
  while (j < num_buckets) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<int64_t>(static_cast<double>(b + 1) * (static_cast<double>(1LL << 31) /
                                                           static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<int32_t>(b);
}

}  // namespace cluster
}  // namespace recrawl
