#include "services/signal_acks.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace services {
namespace {

using ::testing::ElementsAre;

SignalBatchAck Sequence(uint64_t sequence) {
  SignalBatchAck ack;
  ack.set_sequence(sequence);
  return ack;
}

TEST(OrderedSignalAcksTest, AcksGoOutInBatchOrderOnceEveryPartAnswered) {
  std::vector<SignalBatchAck> written;
  OrderedSignalAcks acks([&](const SignalBatchAck& ack) {
    written.push_back(ack);
    return true;
  });
  auto first = acks.Add(Sequence(1), 2);
  auto second = acks.Add(Sequence(2), 1);
  SignalBatchAck part;
  part.set_counted(3);
  part.mutable_result()->set_applied(3);
  acks.PartDone(second, 1, {0, 1, 2}, grpc::Status::OK, part);
  EXPECT_TRUE(written.empty());  // batch 1 is still out
  part.set_counted(1);
  part.mutable_result()->set_applied(1);
  part.add_unknown_indexes(0);
  acks.PartDone(first, 0, {4}, grpc::Status::OK, part);
  EXPECT_TRUE(written.empty());
  acks.PartDone(first, 1, {0, 2, 3}, grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone"),
                SignalBatchAck());
  acks.AwaitDrained();
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0].sequence(), 1u);
  EXPECT_EQ(written[0].counted(), 1u);
  EXPECT_THAT(written[0].unknown_indexes(), ElementsAre(4u));
  ASSERT_EQ(written[0].result().rejected_size(), 3);
  EXPECT_EQ(written[0].result().rejected(0).index(), 0u);
  EXPECT_EQ(written[0].result().rejected(2).index(), 3u);
  EXPECT_EQ(written[0].result().rejected(0).code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(written[0].result().rejected(0).message(), "shard 1: gone");
  EXPECT_EQ(written[1].sequence(), 2u);
  EXPECT_EQ(written[1].counted(), 3u);
}

TEST(OrderedSignalAcksTest, ABatchWithNoPartsIsAckedInTurn) {
  std::vector<uint64_t> written;
  OrderedSignalAcks acks([&](const SignalBatchAck& ack) {
    written.push_back(ack.sequence());
    return true;
  });
  auto first = acks.Add(Sequence(1), 1);
  acks.Add(Sequence(2), 0);
  EXPECT_TRUE(written.empty());
  acks.PartDone(first, 0, {0}, grpc::Status::OK, SignalBatchAck());
  EXPECT_THAT(written, ElementsAre(1u, 2u));
}

TEST(OrderedSignalAcksTest, ABrokenStreamIsNotWrittenAgain) {
  int writes = 0;
  OrderedSignalAcks acks([&](const SignalBatchAck&) {
    ++writes;
    return false;
  });
  acks.Add(Sequence(1), 0);
  acks.Add(Sequence(2), 0);
  acks.AwaitDrained();
  EXPECT_EQ(writes, 1);
}

}  // namespace
}  // namespace services
}  // namespace recrawl
