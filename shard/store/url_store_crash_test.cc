// A writer process acknowledges each batch once UrlStore::Write returns, as
// the shard server will; it is killed with SIGKILL mid-stream. After reopening
// the store every acknowledged batch must be there, and every batch (the one
// in flight too) must be there whole or not at all.
//
// Its own binary: the writer is a fork of the test process, and forking is
// only safe before this process has started any RocksDB threads.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cluster/url_id.h"
#include "gtest/gtest.h"
#include "shard/store/records.pb.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {
namespace {

constexpr int kUrlsPerBatch = 8;
// Acknowledged batches to wait for before the kill.
constexpr uint32_t kAcksBeforeKill = 400;

std::string BatchUrl(uint32_t batch, int i) {
  return absl::StrCat("https://h", batch % 13, ".example/b", batch, "/", i);
}

std::string BatchHost(uint32_t batch) { return absl::StrCat("host", batch, ".example"); }

// Each batch touches all three kinds of mutation and two column families:
// new records, a patch of an earlier batch's record, and a host.
[[noreturn]] void RunWriter(const std::string& dir, int ack_fd) {
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir);
  if (!store.ok()) _exit(2);
  UrlStore::Batch batch = (*store)->NewBatch();
  for (uint32_t b = 0;; ++b) {
    for (int i = 0; i < kUrlsPerBatch; ++i) {
      UrlRecord record;
      record.set_url(BatchUrl(b, i));
      record.set_politeness_host(absl::StrCat("h", b % 13, ".example"));
      record.set_importance(b);
      batch.PutUrl(record);
    }
    if (b > 0) {
      UrlRecord patch;
      patch.set_signals_since_crawl(b);
      batch.PatchUrl(cluster::UrlIdOf(BatchUrl(b - 1, 0)), patch);
    }
    HostRecord host;
    host.set_host(BatchHost(b));
    host.set_min_delay(b);
    batch.PutHost(host);
    if (!(*store)->Write(&batch).ok()) _exit(3);
    if (write(ack_fd, &b, sizeof(b)) != sizeof(b)) _exit(4);
  }
}

bool ReadAck(int fd, uint32_t* ack) {
  char* out = reinterpret_cast<char*>(ack);
  size_t got = 0;
  while (got < sizeof(*ack)) {
    const ssize_t n = read(fd, out + got, sizeof(*ack) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// How much of batch `b` the store holds, out of kUrlsPerBatch + 2 parts
// (the patch of batch b is checked through the record of batch b - 1, which
// the caller knows is there).
int PartsPresent(const UrlStore& store, uint32_t b) {
  int parts = 0;
  for (int i = 0; i < kUrlsPerBatch; ++i) {
    absl::StatusOr<UrlRecord> record = store.GetUrl(cluster::UrlIdOf(BatchUrl(b, i)));
    if (record.ok()) {
      EXPECT_EQ(record->importance(), b);
      ++parts;
    } else {
      EXPECT_EQ(record.status().code(), absl::StatusCode::kNotFound) << record.status();
    }
  }
  if (store.GetHost(BatchHost(b)).ok()) ++parts;
  if (b == 0) {
    ++parts;  // no patch in the first batch
  } else {
    absl::StatusOr<UrlRecord> earlier = store.GetUrl(cluster::UrlIdOf(BatchUrl(b - 1, 0)));
    if (earlier.ok() && earlier->signals_since_crawl() >= b) ++parts;
  }
  return parts;
}

TEST(UrlStoreCrashTest, AcknowledgedBatchesSurviveSigkill) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "crash_store");
  std::filesystem::remove_all(dir);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    RunWriter(dir, fds[1]);
  }
  close(fds[1]);

  std::vector<uint32_t> acked;
  uint32_t ack;
  while (acked.size() < kAcksBeforeKill && ReadAck(fds[0], &ack)) {
    acked.push_back(ack);
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  // Acknowledgements the writer sent before it died count too.
  while (ReadAck(fds[0], &ack)) acked.push_back(ack);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the writer ended on its own, status " << status;
  ASSERT_GE(acked.size(), kAcksBeforeKill);
  RecordProperty("acknowledged_batches", static_cast<int>(acked.size()));
  for (size_t i = 0; i < acked.size(); ++i) ASSERT_EQ(acked[i], i);

  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  const uint32_t last_acked = acked.back();
  for (uint32_t b = 0; b <= last_acked; ++b) {
    ASSERT_EQ(PartsPresent(**store, b), kUrlsPerBatch + 2)
        << "acknowledged batch " << b << " is incomplete";
  }
  // The batches after the last acknowledgement (at most the one in flight,
  // and one whose acknowledgement the kill prevented) are whole or absent.
  uint32_t present_after = 0;
  for (uint32_t b = last_acked + 1; b <= last_acked + 3; ++b) {
    const int parts = PartsPresent(**store, b);
    EXPECT_TRUE(parts == 0 || parts == kUrlsPerBatch + 2)
        << "batch " << b << " is torn: " << parts << " parts";
    if (parts > 0) ++present_after;
  }
  EXPECT_LE(present_after, 1u);
  RecordProperty("unacknowledged_batches_present", static_cast<int>(present_after));

  absl::StatusOr<ScanStats> stats = (*store)->ScanUrls([](cluster::UrlId, const UrlRecord&) {});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed, 0);
  EXPECT_EQ(stats->records, static_cast<int64_t>(last_acked + 1 + present_after) * kUrlsPerBatch);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
