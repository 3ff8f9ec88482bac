// Every third-party library the servers use links from its Debian package
// and works: a fresh machine's `tools/install_deps.sh` gave us all of them.
// (gRPC, protobuf, health and reflection are exercised by
// //proto:proto_test.)
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "rocksdb/db.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace {

TEST(LinkTest, Fmt) { EXPECT_EQ(fmt::format("{}-{:.1f}", 7, 2.25), "7-2.2"); }

TEST(LinkTest, Spdlog) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_pattern("%l %v");
  logger.info("shard {} serving", 3);
  EXPECT_EQ(out.str(), "info shard 3 serving\n");
}

TEST(LinkTest, Prometheus) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter()
                     .Name("recrawl_signals_total")
                     .Help("Signals received")
                     .Register(registry);
  family.Add({{"source", "cdn"}}).Increment(5);
  std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_NE(text.find("recrawl_signals_total{source=\"cdn\"} 5"),
            std::string::npos)
      << text;
}

TEST(LinkTest, RocksDb) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(
      rocksdb::DB::Open(options, std::string(tmp) + "/link_test_db", &raw)
          .ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "k", "v").ok());
  std::string value;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
}

}  // namespace
