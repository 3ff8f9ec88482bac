// Deterministic hostile requests for the fuzz tests of the request
// handlers (shard/shard_fuzz_test.cc, services/coordinator_fuzz_test.cc):
// messages built from a small pool of URLs and hosts with valid and hostile
// values (NaN, ±∞, negative, huge, empty, oversized, malformed URLs,
// unknown enum values), framed as the fuzz targets read their input:
//   [kind: 1 byte][clock step: 1 byte][length: 2 bytes LE][payload].
#ifndef RECRAWL_SHARD_FUZZ_INPUT_H_
#define RECRAWL_SHARD_FUZZ_INPUT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "proto/shard.pb.h"

namespace recrawl {
namespace shard {

// Calls fn(kind, clock_step, payload, length) for each framed operation of
// a fuzz target's input (a length past the end is cut to what is left).
template <typename Fn>
void ForEachFuzzOp(const uint8_t* data, size_t size, Fn&& fn) {
  while (size >= 4) {
    const size_t len = std::min<size_t>(data[2] | (data[3] << 8), size - 4);
    fn(data[0], data[1], data + 4, len);
    data += 4 + len;
    size -= 4 + len;
  }
}

// A payload as the request `Message`; one that does not parse is the empty
// request.
template <typename Message>
Message ParseOrEmpty(const uint8_t* data, size_t len) {
  Message m;
  if (!m.ParseFromArray(data, static_cast<int>(len))) m.Clear();
  return m;
}

class FuzzInput {
 public:
  explicit FuzzInput(uint64_t seed) : rng_(seed) {}

  // The payload of an operation of `kind`, drawn from `gen`.
  using PayloadFn = std::function<std::string(uint8_t kind, FuzzInput& gen)>;
  // The next input of a fuzz test: every fifth RandomBytes(), the others
  // 1-6 operations of kinds in [0, kinds) with their payloads.
  std::string Next(int kinds, const PayloadFn& payload);

  // Up to 300 random bytes.
  std::string RandomBytes();
  // Appends one framed operation; the payload is mutated byte-wise one
  // time in four.
  void AppendOp(uint8_t kind, std::string payload, std::string* input);

  // Batch requests have 0-5 items, one time in eight 70 (over a limit of 64).
  UpsertUrlsRequest Upsert();
  DeleteUrlsRequest Delete();
  SignalBatch Signals();
  PeekTopRequest Peek();
  LeaseRequest Lease();
  ReportCrawlsRequest Reports();
  GetUrlStateRequest UrlState();
  SetHostPolitenessRequest Politeness();
  SetPolicyRequest Policy();

  int Int(int n) { return static_cast<int>(rng_() % n); }
  uint64_t Bits() { return rng_(); }
  // A special value half of the time, else ±10 scaled by 10^[-6, 5].
  double Value();
  // Around 1.7e9 (Unix seconds in 2023) two times in three, else Value().
  double Time();
  std::string Url();

 private:
  int Items() { return Int(8) == 0 ? 70 : Int(6); }
  void Model(ChangeModel* m);
  void Mutate(std::string* s);

  std::mt19937_64 rng_;
  int64_t inputs_ = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_FUZZ_INPUT_H_
