// Counter-based random streams for the simulator. Every (seed, instance,
// page, stream) tuple names an independent SplitMix64 sequence, so a page's
// events do not depend on how many pages or threads there are, nor on the
// order in which pages are generated.
#ifndef RECRAWL_SIM_RNG_H_
#define RECRAWL_SIM_RNG_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace recrawl {
namespace sim {

// Streams of one page. Changes and signals come from separate streams so that
// turning signals on or off leaves the change process untouched (common random
// numbers across experiments).
enum class Stream : uint64_t {
  kParams = 1,
  kChanges = 2,
  kRequests = 3,
  kTrueSignals = 4,
  kFalseSignals = 5,
  kDelays = 6,
  // Whether the page has a signal source at all (demo/simulated_web.h).
  kSignalSource = 7,
  // Host structure (world.h, AddHostStructure): a page's host and noise,
  // and a host's parameters (keyed by host id).
  kHost = 8,
  kHostParams = 9,
};

// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by a Weyl
// constant and finalised by a bijective mixer. Passes BigCrush; one add and
// three multiply-xorshifts per draw. Satisfies UniformRandomBitGenerator so it
// can drive <random> distributions (gamma, Poisson).
class Rng {
 public:
  using result_type = uint64_t;

  explicit Rng(uint64_t state) : state_(state) {}
  // The stream for one page of one instance.
  Rng(uint64_t seed, uint64_t instance, uint64_t page, Stream stream)
      : state_(Mix(Mix(Mix(seed ^ 0x5851F42D4C957F2Dull) ^ instance) ^ page) ^
               static_cast<uint64_t>(stream)) {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }

  result_type operator()() {
    state_ += 0x9E3779B97F4A7C15ull;
    return Mix(state_);
  }

  // Uniform on (0, 1): 53 random bits, never 0, so log() is finite.
  double Uniform() { return (static_cast<double>((*this)() >> 11) + 0.5) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Exponential with the given rate (> 0).
  double Exponential(double rate) { return -std::log(Uniform()) / rate; }

  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_RNG_H_
