#include "sim/report.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "gtest/gtest.h"
#include "sim/parallel.h"

namespace recrawl {
namespace sim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(SummarizeTest, MeanAndStandardErrorOfTheFiniteSamples) {
  const MeanSe a = Summarize({1.0, 2.0, 3.0, 6.0});
  EXPECT_EQ(a.n, 4);
  EXPECT_DOUBLE_EQ(a.mean, 3.0);
  // Sample variance (4 + 1 + 0 + 9)/3, over n = 4.
  EXPECT_DOUBLE_EQ(a.stderr_, std::sqrt(14.0 / 3.0 / 4.0));
  const MeanSe b = Summarize({kNaN, 2.0, kNaN, 4.0});
  EXPECT_EQ(b.n, 2);
  EXPECT_DOUBLE_EQ(b.mean, 3.0);
  EXPECT_DOUBLE_EQ(b.stderr_, 1.0);
  const MeanSe one = Summarize({0.5});
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.stderr_, 0.0);
  const MeanSe none = Summarize({kNaN});
  EXPECT_EQ(none.n, 0);
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_EQ(FormatMeanSe(none), "n/a");
  EXPECT_EQ(FormatMeanSe(a), "3.0000 ± 1.0801");
}

TEST(SummarizeTest, NoCancellationForATinySpread) {
  const MeanSe a = Summarize({1e8 + 1, 1e8 + 2, 1e8 + 3});
  EXPECT_DOUBLE_EQ(a.stderr_, std::sqrt(1.0 / 3.0));
}

TEST(MarkdownTest, HeaderSeparatorAndRows) {
  std::ostringstream out;
  PrintMarkdownTable({{"m", "GREEDY"}, {{"100", "0.5"}, {"200", "0.4"}}}, out);
  EXPECT_EQ(out.str(), "| m | GREEDY |\n|---|---|\n| 100 | 0.5 |\n| 200 | 0.4 |\n");
}

TEST(CsvTest, ErrorsNameTheFlag) {
  absl::Status s = WriteCsvTable({{"a"}, {}}, "/nonexistent-dir/x.csv");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().substr(0, 6), "--csv:");
}

TEST(ForEachTaskTest, RunsEveryTaskOnceWhateverTheThreads) {
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> runs(100);
    ASSERT_TRUE(ForEachTask(runs.size(), threads, [&](size_t t) {
                  ++runs[t];
                  return absl::OkStatus();
                }).ok());
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  }
}

TEST(ForEachTaskTest, StopsAtTheFirstError) {
  std::atomic<int> started{0};
  absl::Status s = ForEachTask(1000, 1, [&](size_t t) {
    ++started;
    return t == 3 ? absl::InvalidArgumentError("task 3") : absl::OkStatus();
  });
  EXPECT_EQ(s.message(), "task 3");
  EXPECT_EQ(started.load(), 4);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
