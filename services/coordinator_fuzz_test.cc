// Drives the coordinator's fuzz target (coordinator_fuzz_target.cc) with
// deterministic inputs in every test run: hostile requests from
// shard/fuzz_input.h plus the coordinator's own (lease sizes, lookaheads,
// bandwidths, modes), sometimes mutated byte-wise, and raw random bytes.
// libFuzzer explores further from the same entry point
// (shard/build_fuzzer.sh //services:coordinator_fuzz_target).
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "proto/coordinator.pb.h"
#include "shard/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace recrawl {
namespace services {
namespace {

using shard::FuzzInput;

FetchLeaseRequest Lease(FuzzInput& gen) {
  FetchLeaseRequest r;
  r.set_max_urls(gen.Int(4) ? gen.Int(12) : static_cast<uint32_t>(gen.Bits()));
  if (gen.Int(2)) r.set_lookahead(gen.Int(2) ? gen.Value() : 0.1 * gen.Int(20));
  r.set_holder(gen.Int(10) ? "f" : std::string(400, 'h'));
  return r;
}

SetBandwidthRequest Bandwidth(FuzzInput& gen) {
  SetBandwidthRequest r;
  if (gen.Int(2)) r.set_bandwidth(gen.Int(2) ? gen.Value() : 10.0 * gen.Int(300));
  r.set_mode(static_cast<CoordinatorMode>(gen.Int(5)));
  return r;
}

// One operation of each kind the target reads (coordinator_fuzz_target.cc).
std::string Payload(uint8_t kind, FuzzInput& gen) {
  switch (kind) {
    case 0:
      return gen.Upsert().SerializeAsString();
    case 1:
      return gen.Delete().SerializeAsString();
    case 2:
      return gen.Signals().SerializeAsString();
    case 3:
      return Lease(gen).SerializeAsString();
    case 4:
      return gen.Reports().SerializeAsString();
    case 5:
      return gen.UrlState().SerializeAsString();
    case 6:
      return gen.Politeness().SerializeAsString();
    case 7:
      return gen.Policy().SerializeAsString();
    case 8:
      return Bandwidth(gen).SerializeAsString();
    case 10: {
      StreamLeasesRequest r;
      r.set_holder(gen.Int(10) ? "s" : std::string(400, 'h'));
      return r.SerializeAsString();
    }
    default:
      return "";
  }
}

TEST(CoordinatorFuzzTest, StructuredAndRandomInputsNeitherCrashNorWedge) {
  FuzzInput gen(20261125);
  for (int i = 0; i < 400; ++i) {
    const std::string input = gen.Next(12, Payload);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  SUCCEED();  // the target aborts on a broken invariant
}

}  // namespace
}  // namespace services
}  // namespace recrawl
