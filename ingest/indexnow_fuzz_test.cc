// Drives the IndexNow fuzz target (indexnow_fuzz_target.cc) with
// deterministic inputs in every test run: well-formed requests of each
// kind, the same with bytes flipped, and raw random bytes. libFuzzer
// explores further from the same entry point
// (FUZZ_TARGET=//ingest:indexnow_fuzz_target shard/build_fuzzer.sh).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace recrawl {
namespace ingest {
namespace {

int Feed(const std::string& input) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::vector<std::string> Seeds() {
  const std::string key = "0123456789abcdef";
  std::vector<std::string> seeds;
  for (int salt = 0; salt < 6; ++salt) {
    const char s = static_cast<char>(salt);
    seeds.push_back(
        absl::StrCat(std::string(1, '\0'), std::string(1, s), R"({"host":"a.com","key":")", key,
                     R"(","urlList":["https://a.com/x","https://a.com/y","https://a.com/x"]})"));
    seeds.push_back(absl::StrCat(
        std::string(1, '\0'), std::string(1, s), R"({"host":"b.com","key":")", key,
        R"(","keyLocation":"https://b.com/n/k.txt","urlList":["https://b.com/n/1"]})"));
    seeds.push_back(absl::StrCat(std::string(1, '\1'), std::string(1, s), "https://c.com/p?q=1",
                                 std::string(1, '\0'), key, std::string(1, '\0'), ""));
    seeds.push_back(absl::StrCat(std::string(1, '\2'), std::string(1, s),
                                 R"({"urls":["https://d.com/1","HTTPS://D.com:443/1"]})"));
  }
  return seeds;
}

TEST(IndexNowFuzzTest, SeedsAndMutations) {
  std::mt19937 rng(7);
  for (const std::string& seed : Seeds()) {
    EXPECT_EQ(Feed(seed), 0);
    for (int i = 0; i < 300; ++i) {
      std::string mutated = seed;
      const int flips = 1 + rng() % 4;
      for (int f = 0; f < flips; ++f) {
        mutated[rng() % mutated.size()] = static_cast<char>(rng());
      }
      EXPECT_EQ(Feed(mutated), 0);
    }
  }
}

TEST(IndexNowFuzzTest, RandomBytes) {
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string input(rng() % 200, '\0');
    for (char& c : input) c = static_cast<char>(rng());
    EXPECT_EQ(Feed(input), 0);
  }
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
