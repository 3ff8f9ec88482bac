#include "client/cli_output.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"

namespace recrawl {
namespace client {

std::string ModeName(CoordinatorMode mode) {
  switch (mode) {
    case COORDINATOR_MODE_MERGE:
      return "merge";
    case COORDINATOR_MODE_SPLIT_EQUAL:
      return "equal";
    case COORDINATOR_MODE_SPLIT_ADAPTIVE:
      return "adaptive";
    default:
      return "unspecified";
  }
}

std::optional<CoordinatorMode> ParseModeName(absl::string_view name) {
  if (name == "merge") return COORDINATOR_MODE_MERGE;
  if (name == "equal") return COORDINATOR_MODE_SPLIT_EQUAL;
  if (name == "adaptive") return COORDINATOR_MODE_SPLIT_ADAPTIVE;
  return std::nullopt;
}

std::string FormatBandwidth(const BandwidthState& state) {
  std::vector<std::string> budgets;
  for (double b : state.shard_budgets()) budgets.push_back(absl::StrCat(b));
  std::string line =
      absl::StrCat("bandwidth ", state.bandwidth(), " /s, mode ", ModeName(state.mode()));
  if (!budgets.empty()) {
    absl::StrAppend(&line, ", shard budgets ", absl::StrJoin(budgets, " "));
  }
  return line;
}

std::string FormatClusterStats(const ClusterStats& stats) {
  std::string out = absl::StrFormat(
      "time %.3f  bandwidth %g /s  mode %s  shards %u live of %u\n"
      "slots handed out %u  dropped %u  reports held for dead shards %u\n\n",
      stats.time(), stats.bandwidth(), ModeName(stats.mode()), stats.live_shards(),
      stats.num_shards(), stats.slots_handed_out(), stats.slots_dropped(), stats.pending_reports());
  absl::StrAppend(
      &out, absl::StrFormat("%5s %5s %12s %8s %8s %10s %10s %10s %12s\n", "shard", "live", "urls",
                            "hosts", "leased", "signals/s", "picks/s", "reports/s", "level"));
  ShardStats total;
  double signals = 0, picks = 0, reports = 0;
  for (int i = 0; i < stats.shards_size(); ++i) {
    const ShardStats& s = stats.shards(i);
    const bool live = i < stats.live_size() && stats.live(i);
    absl::StrAppend(
        &out, absl::StrFormat("%5u %5s %12u %8u %8u %10.1f %10.1f %10.1f "
                              "%12.4g\n",
                              i, live ? "yes" : "NO", s.urls(), s.hosts(), s.leases_in_flight(),
                              s.signals_per_second(), s.picks_per_second(), s.reports_per_second(),
                              s.crawl_value_level()));
    total.set_urls(total.urls() + s.urls());
    total.set_hosts(total.hosts() + s.hosts());
    total.set_leases_in_flight(total.leases_in_flight() + s.leases_in_flight());
    signals += s.signals_per_second();
    picks += s.picks_per_second();
    reports += s.reports_per_second();
  }
  absl::StrAppend(
      &out, absl::StrFormat("%5s %5s %12u %8u %8u %10.1f %10.1f %10.1f\n", "all", "", total.urls(),
                            total.hosts(), total.leases_in_flight(), signals, picks, reports));
  return out;
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

std::string ProgressLine(int64_t done, int64_t total, int width) {
  const double fraction = total > 0 ? std::clamp(static_cast<double>(done) / total, 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(fraction * width);
  return absl::StrFormat("[%s%s] %3d%%  %d/%d", std::string(filled, '#'),
                         std::string(width - filled, '.'), static_cast<int>(fraction * 100), done,
                         total);
}

void ProgressBar::Update(int64_t done) {
  if (!enabled_) return;
  *out_ << "\r" << ProgressLine(done, total_) << std::flush;
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (drawn_) *out_ << "\n";
  drawn_ = false;
}

}  // namespace client
}  // namespace recrawl
