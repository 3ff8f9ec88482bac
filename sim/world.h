// The simulated web (main paper Sec. 3 and 6.1): m pages whose requests and
// changes are Poisson processes, each change signalled with probability λ
// (recall) and false signals arriving as Poisson(ν), optionally delayed, and
// a crawler bandwidth R(t) that fixes the slot times j/R of Algorithm 1.
//
// An Instance is the pages' parameters (drawn once per repetition); a
// Realization is one draw of their change and signal processes, shared by
// every policy run on the instance (common random numbers). Everything is a
// pure function of (seed, instance number).
#ifndef RECRAWL_SIM_WORLD_H_
#define RECRAWL_SIM_WORLD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/page_model.h"

namespace recrawl {
namespace sim {

// A distribution of one per-page parameter.
struct Distribution {
  enum class Kind {
    kConstant,    // a
    kUniform,     // U[a, b]
    kBeta,        // Beta(a, b)
    kPareto,      // Pareto with shape a, scale (minimum) b: heavy-tailed
    kLogUniform,  // exp(U[log a, log b])
  };
  Kind kind = Kind::kConstant;
  double a = 0.0;
  double b = 0.0;

  static Distribution Constant(double v) { return {Kind::kConstant, v, v}; }
  static Distribution Uniform(double lo, double hi) { return {Kind::kUniform, lo, hi}; }
  static Distribution Beta(double a, double b) { return {Kind::kBeta, a, b}; }
  static Distribution Pareto(double shape, double scale) { return {Kind::kPareto, shape, scale}; }
  static Distribution LogUniform(double lo, double hi) { return {Kind::kLogUniform, lo, hi}; }
  // "const:v", "uniform:lo,hi", "beta:a,b", "pareto:shape,scale",
  // "loguniform:lo,hi".
  static absl::StatusOr<Distribution> Parse(const std::string& text);
  std::string ToString() const;
};

// Delay between a change and its (true) signal (App. C). False signals are
// not delayed: they are not tied to a change.
struct SignalDelay {
  enum class Kind {
    kNone,
    kPoissonSlots,  // Poisson(mean)/R(0): a whole number of slots
    kExponential,   // Exponential with the given mean
  };
  Kind kind = Kind::kNone;
  double mean = 0.0;
};

// Piecewise-constant bandwidth: rate[k] from start[k] (start[0] = 0).
struct BandwidthSchedule {
  std::vector<double> start = {0.0};
  std::vector<double> rate = {100.0};

  static BandwidthSchedule Constant(double r) { return {{0.0}, {r}}; }
  double At(double t) const;
  // Slot times t_1 < t_2 < ... <= horizon: t_{j+1} = t_j + 1/R(t_j), t_0 = 0.
  std::vector<double> SlotTimes(double horizon) const;
};

struct WorldConfig {
  int num_pages = 100;                                     // m
  Distribution importance = Distribution::Uniform(0, 1);   // μ
  Distribution change_rate = Distribution::Uniform(0, 1);  // Δ
  Distribution recall = Distribution::Constant(0);         // λ
  Distribution false_rate = Distribution::Constant(0);     // ν
  SignalDelay delay;
  BandwidthSchedule bandwidth;
  double horizon = 1000.0;  // simulate t in (0, horizon]
};

struct Instance {
  std::vector<policy::PageParams> pages;  // importance = raw μ
  // Page i's host, in [0, num_hosts); empty without host structure.
  std::vector<int32_t> host;
};

// Draws the pages' parameters for instance `instance` (a repetition number).
Instance GenerateInstance(const WorldConfig& config, uint64_t seed, uint64_t instance);

// One draw of the change and signal processes of an instance. Every page was
// crawled (and so fresh) at t = 0.
struct Realization {
  double horizon = 0.0;
  std::vector<double> slot_times;  // t_1 .. t_S
  // Page i's change times, increasing: change_times[change_begin[i] ..
  // change_begin[i+1]).
  std::vector<int64_t> change_begin;
  std::vector<double> change_times;
  // Signals bucketed by the slot before whose pick they arrive:
  // t_{j-1} < time <= t_j for bucket j (0-based: bucket j precedes slot j).
  // Within a bucket the order is by page, then time; a crawl value depends
  // only on the count of signals, so order inside a slot does not matter.
  std::vector<int64_t> signal_begin;  // size S + 1
  std::vector<int32_t> signal_page;
  std::vector<double> signal_time;
  int64_t num_true_signals = 0;
  int64_t num_false_signals = 0;
};

// Host structure: a host's pages share (Δ, λ, ν) up to noise. Off (the
// worlds as they are) when mean_pages_per_host is 0.
struct HostStructure {
  // H = max(1, round(m / mean_pages_per_host)) hosts; page i's host is drawn
  // with P(h) ∝ (h + 1)^−zipf_exponent (h = 0 .. H − 1), so hosts have
  // Zipf-like sizes and some of the small ones may have no page.
  double mean_pages_per_host = 0.0;
  double zipf_exponent = 1.0;
  // Page noise around its host's parameters: Δ and ν times e^{σz}, λ's logit
  // plus σz (λ of exactly 0 or 1 kept), z ~ N(0, 1) per page and parameter.
  double noise = 0.3;

  bool enabled() const { return mean_pages_per_host > 0.0; }
};

// InvalidArgument naming the field for a negative or non-finite
// mean_pages_per_host, zipf_exponent or noise.
absl::Status CheckHostStructure(const HostStructure& hosts);

// Gives `instance` host structure: assigns each page a host and replaces its
// (Δ, λ, ν) by its host's, perturbed by the noise; importance μ stays the
// page's own. A host's (Δ_h, λ_h, ν_h) are those of a page of the instance
// drawn uniformly for it, i.e. a draw from the world's distributions (any
// world, semi included). Pure function of (seed, instance number); no-op if
// !hosts.enabled().
void AddHostStructure(const HostStructure& hosts, uint64_t seed, uint64_t instance_number,
                      Instance* instance);

Realization Realize(const WorldConfig& config, const Instance& instance, uint64_t seed,
                    uint64_t instance_number);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_WORLD_H_
