#include "sim/report.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recrawl {
namespace sim {
namespace {

// Single quotes end a gnuplot string; titles are ours, but policy names come
// from the command line.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

MeanSe Summarize(const std::vector<double>& samples) {
  MeanSe out;
  double sum = 0.0;
  for (double x : samples) {
    if (!std::isfinite(x)) continue;
    sum += x;
    ++out.n;
  }
  if (out.n == 0) return out;
  out.mean = sum / out.n;
  if (out.n == 1) return out;
  double sq = 0.0;  // two passes: no cancellation when the spread is tiny
  for (double x : samples) {
    if (std::isfinite(x)) sq += (x - out.mean) * (x - out.mean);
  }
  out.stderr_ = std::sqrt(sq / (out.n - 1) / out.n);
  return out;
}

std::string FormatMeanSe(const MeanSe& x) {
  if (x.n == 0) return "n/a";
  return absl::StrFormat("%.4f ± %.4f", x.mean, x.stderr_);
}

void PrintMarkdownTable(const Table& table, std::ostream& out) {
  out << "| " << absl::StrJoin(table.header, " | ") << " |\n|";
  for (size_t i = 0; i < table.header.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : table.rows) out << "| " << absl::StrJoin(row, " | ") << " |\n";
}

absl::Status WriteCsvTable(const Table& table, const std::string& path) {
  std::ofstream f(path);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("--csv: cannot write ", path));
  f << absl::StrJoin(table.header, ",") << "\n";
  for (const auto& row : table.rows) f << absl::StrJoin(row, ",") << "\n";
  f.close();
  return f ? absl::OkStatus() : absl::InternalError(absl::StrCat("--csv: error writing ", path));
}

absl::Status DrawPlot(const Plot& plot, const std::string& path) {
  const std::string data = path + ".dat", script_path = path + ".gp";
  {
    std::ofstream f(data);
    if (!f) return absl::InvalidArgumentError(absl::StrCat("--plot: cannot write ", data));
    for (const PlotLine& line : plot.lines) {
      f << "# " << line.title << "\n";
      for (size_t k = 0; k < line.x.size(); ++k) {
        const double err = line.err.empty() ? 0.0 : line.err[k];
        if (!std::isfinite(line.x[k]) || !std::isfinite(line.y[k])) continue;
        f << absl::StrFormat("%.10g %.10g %.10g\n", line.x[k], line.y[k], err);
      }
      f << "\n\n";  // gnuplot: a new data block (index)
    }
  }
  std::string script = absl::StrCat(
      "set terminal pngcairo size 900,600 noenhanced\nset output ", Quote(path), "\n", "set title ",
      Quote(plot.title), "\nset xlabel ", Quote(plot.xlabel), "\nset ylabel ", Quote(plot.ylabel),
      "\n", plot.log_x ? "set logscale x\n" : "", "set key outside right\nset grid\nplot ");
  for (size_t k = 0; k < plot.lines.size(); ++k) {
    const PlotLine& line = plot.lines[k];
    absl::StrAppend(&script, k ? ", " : "", Quote(data), " index ", k,
                    line.err.empty() ? " using 1:2 with lines" : " using 1:2:3 with yerrorlines",
                    " title ", Quote(line.title));
  }
  script += "\n";
  {
    std::ofstream f(script_path);
    if (!f) return absl::InvalidArgumentError(absl::StrCat("--plot: cannot write ", script_path));
    f << script;
  }
  // gnuplot's messages (warnings such as a one-point x range) are kept off
  // stdout; on failure the first one goes into the error.
  const std::string command = absl::StrCat("gnuplot ", Quote(script_path), " 2>&1");
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return absl::UnavailableError("--plot: cannot run gnuplot");
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) output += buf;
  const int rc = pclose(p);
  std::remove(data.c_str());
  std::remove(script_path.c_str());
  if (rc != 0) {
    std::string first(
        absl::StripAsciiWhitespace(std::vector<std::string>(absl::StrSplit(output, '\n')).front()));
    return absl::UnavailableError(absl::StrCat("--plot: gnuplot failed (is gnuplot-nox installed?)",
                                               first.empty() ? "" : ": ", first));
  }
  return absl::OkStatus();
}

std::string RunFooter(int reps, uint64_t seed, int threads, double seconds) {
  return absl::StrFormat("%d repetitions, seed %d, %d threads, %.1f s", reps, seed, threads,
                         seconds);
}

absl::Status EmitReport(const Report& report, const std::string& csv_path,
                        const std::string& plot_path, std::ostream& out) {
  out << "## " << report.title << "\n\n";
  PrintMarkdownTable(report.table, out);
  if (!report.footer.empty()) out << "\n" << report.footer << "\n";
  if (!csv_path.empty()) {
    if (absl::Status s = WriteCsvTable(report.csv, csv_path); !s.ok()) return s;
  }
  if (!plot_path.empty()) {
    if (absl::Status s = DrawPlot(report.plot, plot_path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace sim
}  // namespace recrawl
