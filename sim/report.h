// How experiments report: mean ± standard error over repetitions, a markdown
// table on stdout, a long-form CSV file and a gnuplot PNG. Every experiment
// subcommand of recrawl_sim goes through these, so all tables, CSV files and
// plots share one format.
#ifndef RECRAWL_SIM_REPORT_H_
#define RECRAWL_SIM_REPORT_H_

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recrawl {
namespace sim {

// Mean and standard error of the mean (sample standard deviation / √n) of
// the finite samples; NaN samples mark repetitions without a value and are
// left out. n counts the finite samples; with n = 0 the mean is NaN, with
// n = 1 the standard error is 0.
struct MeanSe {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double stderr_ = 0.0;
  int n = 0;
};
MeanSe Summarize(const std::vector<double>& samples);

// "0.1234 ± 0.0056" (4 decimals), or "n/a" without samples.
std::string FormatMeanSe(const MeanSe& x);

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// One line of a plot; `err` empty draws it without error bars.
struct PlotLine {
  std::string title;
  std::vector<double> x, y, err;
};

struct Plot {
  std::string title, xlabel, ylabel;
  bool log_x = false;
  std::vector<PlotLine> lines;
};

// | a | b |, a separator row, then one row per table row.
void PrintMarkdownTable(const Table& table, std::ostream& out);

// Comma-separated header and rows (cells must not contain commas). Errors
// start with "--csv:".
absl::Status WriteCsvTable(const Table& table, const std::string& path);

// Draws `plot` to a PNG at `path` with gnuplot (lines with error bars;
// non-finite points are skipped). Errors start with "--plot:".
absl::Status DrawPlot(const Plot& plot, const std::string& path);

// An experiment's output: a "## title" heading, the markdown table, the
// footer line(s); the long-form CSV and the plot go to files on request.
struct Report {
  std::string title;
  Table table;
  std::string footer;
  Table csv;
  Plot plot;
};

// "N repetitions, seed S, T threads, X.X s".
std::string RunFooter(int reps, uint64_t seed, int threads, double seconds);

// Prints the heading, table and footer to `out`; writes the CSV to
// `csv_path` and the plot to `plot_path` unless they are empty.
absl::Status EmitReport(const Report& report, const std::string& csv_path,
                        const std::string& plot_path, std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_REPORT_H_
