// What recrawlctl prints: the cluster stats table, modes by name, a
// progress line for long imports.
#ifndef RECRAWL_CLIENT_CLI_OUTPUT_H_
#define RECRAWL_CLIENT_CLI_OUTPUT_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/coordinator.pb.h"

namespace recrawl {
namespace client {

// "merge", "equal", "adaptive" (and "unspecified").
std::string ModeName(CoordinatorMode mode);
// The inverse, nullopt for any other name.
std::optional<CoordinatorMode> ParseModeName(absl::string_view name);

// Totals and one row per shard, aligned columns.
std::string FormatClusterStats(const ClusterStats& stats);
// "bandwidth 250 /s, mode adaptive, budgets 125 125".
std::string FormatBandwidth(const BandwidthState& state);
// Indented JSON of any message (field names as in the .proto).
std::string ToJson(const google::protobuf::Message& message);

// "[#####.....]  50%  5000/10000": `done` of `total` in `width` cells.
std::string ProgressLine(int64_t done, int64_t total, int width = 30);

// Rewrites one progress line on a terminal (carriage return); silent when
// not enabled (stderr is not a terminal) or for short jobs.
class ProgressBar {
 public:
  ProgressBar(std::ostream* out, int64_t total, bool enabled)
      : out_(out), total_(total), enabled_(enabled) {}
  void Update(int64_t done);
  // Ends the line.
  void Finish();

 private:
  std::ostream* out_;
  int64_t total_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace client
}  // namespace recrawl

#endif  // RECRAWL_CLIENT_CLI_OUTPUT_H_
