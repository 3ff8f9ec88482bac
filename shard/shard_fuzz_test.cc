// Drives the fuzz target (shard_fuzz_target.cc) with deterministic inputs in
// every test run: hostile requests from FuzzInput (fuzz_input.h), sometimes
// mutated byte-wise, and raw random bytes. libFuzzer explores further from
// the same entry point (shard/build_fuzzer.sh).
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "shard/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace recrawl {
namespace shard {
namespace {

// One operation of each kind the target reads (shard_fuzz_target.cc).
std::string Payload(uint8_t kind, FuzzInput& gen) {
  switch (kind) {
    case 0:
      return gen.Upsert().SerializeAsString();
    case 1:
      return gen.Delete().SerializeAsString();
    case 2:
      return gen.Signals().SerializeAsString();
    case 3:
      return gen.Peek().SerializeAsString();
    case 4:
      return gen.Lease().SerializeAsString();
    case 5:
      return gen.Reports().SerializeAsString();
    case 6:
      return gen.UrlState().SerializeAsString();
    case 7:
      return gen.Politeness().SerializeAsString();
    case 8:
      return gen.Policy().SerializeAsString();
    case 10:  // a restart, one time in eight
      return gen.Int(8) == 0 ? "\x5a" : "";
    default:
      return "";
  }
}

TEST(ShardFuzzTest, StructuredAndRandomInputsNeitherCrashNorCorrupt) {
  FuzzInput gen(20261121);
  for (int i = 0; i < 3000; ++i) {
    const std::string input = gen.Next(11, Payload);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  SUCCEED();  // the target aborts on a broken invariant
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
