// LaunchCallStreams (launch_calls.h): every appended call is drained exactly once, each
// thread's in its order, across chunk boundaries, while producers append, and after they exit;
// the chunk cap drops and counts instead of blocking.
#include "injector/light/launch_calls.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace occ::inj {
namespace {

constexpr uint32_t kPerChunk = LaunchCallStreams::kCallsPerChunk;

// A call tagged with its producer (stream_id) and the producer's sequence number
// (correlation_id).
LaunchCall Tagged(uint32_t producer, uint32_t sequence) {
  LaunchCall call;
  call.stream_id = producer;
  call.correlation_id = sequence;
  call.api_start_ns = (uint64_t{producer} << 32) | sequence;
  return call;
}

// Checks that each producer's calls arrive once each, in order: the next one seen from a
// producer must carry the sequence number after the last one seen.
class SequenceChecker {
 public:
  explicit SequenceChecker(size_t producers) : next_(producers, 0) {}
  void Visit(const LaunchCall& call) {
    ++visited_;
    if (call.stream_id >= next_.size()) {
      ++errors_;
      return;
    }
    uint32_t& expected = next_[call.stream_id];
    if (call.correlation_id != expected ||
        call.api_start_ns != ((uint64_t{call.stream_id} << 32) | call.correlation_id)) {
      ++errors_;
    }
    expected = call.correlation_id + 1;
  }
  uint64_t visited() const { return visited_; }
  uint64_t errors() const { return errors_; }
  uint32_t next(size_t producer) const { return next_[producer]; }

 private:
  std::vector<uint32_t> next_;
  uint64_t visited_ = 0;
  uint64_t errors_ = 0;
};

TEST(LaunchCallStreamsTest, OneThreadDrainsInAppendOrder) {
  LaunchCallStreams streams;
  const uint32_t count = 3 * kPerChunk + 17;  // several chunks and a partial one
  for (uint32_t i = 0; i < count; ++i) ASSERT_TRUE(streams.Append(Tagged(0, i)));
  EXPECT_EQ(streams.threads(), 1u);
  SequenceChecker checker(1);
  EXPECT_EQ(streams.Drain([&](const LaunchCall& call) { checker.Visit(call); }), count);
  EXPECT_EQ(checker.visited(), count);
  EXPECT_EQ(checker.errors(), 0u);
  EXPECT_EQ(checker.next(0), count);
  // Nothing is visited twice; later appends continue where the drain stopped, including a
  // chunk that was left full (its successor not linked yet at the drain).
  EXPECT_EQ(streams.Drain([&](const LaunchCall& call) { checker.Visit(call); }), 0u);
  for (uint32_t i = count; i < 4 * kPerChunk + 5; ++i) ASSERT_TRUE(streams.Append(Tagged(0, i)));
  EXPECT_EQ(streams.Drain([&](const LaunchCall& call) { checker.Visit(call); }), 4 * kPerChunk + 5 - count);
  EXPECT_EQ(checker.next(0), 4 * kPerChunk + 5);
  EXPECT_EQ(checker.errors(), 0u);
  EXPECT_EQ(streams.dropped(), 0u);
}

TEST(LaunchCallStreamsTest, ExactlyFullChunkThenMore) {
  LaunchCallStreams streams;
  SequenceChecker checker(1);
  auto visit = [&](const LaunchCall& call) { checker.Visit(call); };
  for (uint32_t i = 0; i < kPerChunk; ++i) ASSERT_TRUE(streams.Append(Tagged(0, i)));
  EXPECT_EQ(streams.Drain(visit), kPerChunk);
  ASSERT_TRUE(streams.Append(Tagged(0, kPerChunk)));
  EXPECT_EQ(streams.Drain(visit), 1u);
  EXPECT_EQ(checker.next(0), kPerChunk + 1);
  EXPECT_EQ(checker.errors(), 0u);
}

TEST(LaunchCallStreamsTest, ManyThreadsEachCallOnceInThreadOrder) {
  constexpr uint32_t kThreads = 8;
  constexpr uint32_t kCalls = 50'000;  // ~49 chunks per thread
  static_assert(kCalls > 10 * kPerChunk);
  LaunchCallStreams streams;
  std::atomic<uint64_t> refused{0};
  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (uint32_t i = 0; i < kCalls; ++i) {
        if (!streams.Append(Tagged(t, i))) ++refused;
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  ASSERT_EQ(refused.load(), 0u) << "8 x 49 chunks fit under the default cap of 512";
  SequenceChecker checker(kThreads);
  EXPECT_EQ(streams.Drain([&](const LaunchCall& call) { checker.Visit(call); }), kThreads * kCalls);
  EXPECT_EQ(checker.errors(), 0u);
  for (uint32_t t = 0; t < kThreads; ++t) EXPECT_EQ(checker.next(t), kCalls) << "thread " << t;
  EXPECT_EQ(streams.dropped(), 0u);
  EXPECT_EQ(streams.threads(), 0u) << "every producer exited and was drained";
}

TEST(LaunchCallStreamsTest, DrainWhileThreadsAppend) {
  constexpr uint32_t kThreads = 8;
  constexpr uint32_t kCalls = 50'000;
  LaunchCallStreams streams;
  SequenceChecker checker(kThreads);  // drainer thread only
  std::atomic<bool> producing{true};
  std::atomic<uint64_t> drains_with_calls{0};
  std::thread drainer([&] {
    while (producing.load()) {
      if (streams.Drain([&](const LaunchCall& call) { checker.Visit(call); }) > 0) ++drains_with_calls;
    }
    streams.Drain([&](const LaunchCall& call) { checker.Visit(call); });
  });
  std::atomic<uint64_t> appended{0};
  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (uint32_t i = 0; i < kCalls; ++i) {
        // Never refused: 8 x 49 chunks fit under the cap even if the drainer never ran.
        if (streams.Append(Tagged(t, i))) ++appended;
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  producing.store(false);
  drainer.join();
  EXPECT_EQ(appended.load(), uint64_t{kThreads} * kCalls);
  EXPECT_EQ(streams.dropped(), 0u);
  EXPECT_EQ(checker.visited(), appended.load());
  EXPECT_EQ(checker.errors(), 0u);
  for (uint32_t t = 0; t < kThreads; ++t) EXPECT_EQ(checker.next(t), kCalls) << "thread " << t;
  EXPECT_GE(drains_with_calls.load(), 1u);
  EXPECT_EQ(streams.threads(), 0u);
}

TEST(LaunchCallStreamsTest, ExitedThreadIsDrainedThenFreed) {
  // Two chunks at most: the exited thread's chunks must be given back for the next thread.
  LaunchCallStreams streams(2);
  const uint32_t count = 2 * kPerChunk;
  std::thread([&] {
    for (uint32_t i = 0; i < count; ++i) ASSERT_TRUE(streams.Append(Tagged(0, i)));
  }).join();
  EXPECT_EQ(streams.threads(), 1u) << "exited, not drained yet";
  SequenceChecker checker(2);
  auto visit = [&](const LaunchCall& call) { checker.Visit(call); };
  EXPECT_EQ(streams.Drain(visit), count);
  EXPECT_EQ(checker.next(0), count);
  EXPECT_EQ(streams.threads(), 0u);
  std::thread([&] {
    for (uint32_t i = 0; i < count; ++i) ASSERT_TRUE(streams.Append(Tagged(1, i))) << i;
  }).join();
  EXPECT_EQ(streams.Drain(visit), count);
  EXPECT_EQ(checker.next(1), count);
  EXPECT_EQ(checker.errors(), 0u);
  EXPECT_EQ(streams.dropped(), 0u);
  EXPECT_EQ(streams.threads(), 0u);
}

TEST(LaunchCallStreamsTest, ChunkCapDropsAndCountsTheOverflow) {
  LaunchCallStreams streams(2);
  const uint32_t fit = 2 * kPerChunk;
  const uint32_t overflow = 300;
  uint32_t accepted = 0;
  for (uint32_t i = 0; i < fit + overflow; ++i) {
    const bool taken = streams.Append(Tagged(0, i));
    EXPECT_EQ(taken, i < fit) << i;
    if (taken) ++accepted;
  }
  EXPECT_EQ(accepted, fit);
  EXPECT_EQ(streams.dropped(), overflow);
  SequenceChecker checker(1);
  auto visit = [&](const LaunchCall& call) { checker.Visit(call); };
  EXPECT_EQ(streams.Drain(visit), fit);
  EXPECT_EQ(checker.next(0), fit);
  EXPECT_EQ(checker.errors(), 0u);
  // The drain gave back the first chunk: appends are taken again, one chunk's worth.
  for (uint32_t i = fit; i < fit + kPerChunk; ++i) EXPECT_TRUE(streams.Append(Tagged(0, i))) << i;
  EXPECT_FALSE(streams.Append(Tagged(0, fit + kPerChunk)));
  EXPECT_EQ(streams.dropped(), overflow + 1);
  EXPECT_EQ(streams.Drain(visit), kPerChunk);
  EXPECT_EQ(checker.next(0), fit + kPerChunk);
  EXPECT_EQ(checker.errors(), 0u);
}

TEST(LaunchCallStreamsTest, InstancesOnOneThreadDoNotMix) {
  {
    LaunchCallStreams first;
    for (uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(first.Append(Tagged(0, i)));
    SequenceChecker checker(1);
    EXPECT_EQ(first.Drain([&](const LaunchCall& call) { checker.Visit(call); }), 5u);
    EXPECT_EQ(checker.errors(), 0u);
  }
  {
    // Possibly at the first one's address: the thread's handle from it must not be reused.
    LaunchCallStreams second;
    EXPECT_EQ(second.threads(), 0u);
    for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(second.Append(Tagged(0, i)));
    SequenceChecker checker(1);
    EXPECT_EQ(second.Drain([&](const LaunchCall& call) { checker.Visit(call); }), 3u);
    EXPECT_EQ(checker.next(0), 3u);
    EXPECT_EQ(checker.errors(), 0u);
  }
  // Two alive at once, appended to in turn from this thread.
  LaunchCallStreams a;
  LaunchCallStreams b;
  ASSERT_TRUE(a.Append(Tagged(0, 0)));
  ASSERT_TRUE(b.Append(Tagged(1, 0)));
  ASSERT_TRUE(a.Append(Tagged(0, 1)));
  ASSERT_TRUE(b.Append(Tagged(1, 1)));
  ASSERT_TRUE(a.Append(Tagged(0, 2)));
  SequenceChecker checker_a(2), checker_b(2);
  EXPECT_EQ(a.Drain([&](const LaunchCall& call) { checker_a.Visit(call); }), 3u);
  EXPECT_EQ(b.Drain([&](const LaunchCall& call) { checker_b.Visit(call); }), 2u);
  EXPECT_EQ(checker_a.next(0), 3u);
  EXPECT_EQ(checker_a.next(1), 0u) << "none of b's calls in a";
  EXPECT_EQ(checker_b.next(1), 2u);
  EXPECT_EQ(checker_b.next(0), 0u) << "none of a's calls in b";
  EXPECT_EQ(checker_a.errors() + checker_b.errors(), 0u);
}

}  // namespace
}  // namespace occ::inj
