// Advice: expected values from the formulas of occupancy-model.md §10 and Nsight Compute's rules
// (§5.4), computed by hand in the comments, plus properties every advice must keep.
#include <gtest/gtest.h>

#include <random>

#include "analyzer/model/advice.h"
#include "analyzer/model/arch_table.h"
#include "analyzer/model/limiter_words.h"
#include "analyzer/model/occupancy_curves.h"

namespace occ {
namespace {

DeviceProps H100() { return LookupGpu("H100").value(); }

LaunchParams Launch(int block, int regs) {
  LaunchParams l;
  l.block_threads = block;
  l.regs_per_thread = regs;
  return l;
}

// §10.1: H100, B=256, 67 registers (3 blocks, 37.5 %): <= 64 -> 4 blocks (50 %), <= 40 -> 6
// (75 %), <= 32 -> 8 (100 %).
TEST(RegisterAdvice, H100Block256Regs67Steps) {
  auto a = AdviseRegisterCap(H100(), Launch(256, 67), 0);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto find = [&](int blocks) {
    for (const auto& s : a->steps) {
      if (s.active_blocks_per_sm == blocks) return s;
    }
    return RegisterStep{};
  };
  EXPECT_EQ(find(4).max_registers_per_thread, 64);
  EXPECT_DOUBLE_EQ(find(4).occupancy_pct, 50.0);
  EXPECT_EQ(find(6).max_registers_per_thread, 40);
  EXPECT_DOUBLE_EQ(find(6).occupancy_pct, 75.0);
  EXPECT_EQ(find(8).max_registers_per_thread, 32);
  EXPECT_DOUBLE_EQ(find(8).occupancy_pct, 100.0);
  ASSERT_TRUE(a->suggestion.has_value());
  EXPECT_EQ(a->suggestion->registers_per_thread, 64);
  EXPECT_EQ(a->suggestion->predicted_blocks_per_sm, 4);
  EXPECT_NE(a->suggestion->text.find("__launch_bounds__(256, 4)"), std::string::npos);
  EXPECT_NE(a->suggestion->text.find("-maxrregcount=64"), std::string::npos);
  EXPECT_FALSE(a->spill_warning);
  // Headroom: 67 rounds up to 72 allocated; up to 80 (2560 per warp, 6 warps per pool) keep 3.
  EXPECT_EQ(a->headroom_registers, 80);
}

TEST(RegisterAdvice, SpillWarningWhenLocalMemoryUsed) {
  auto a = AdviseRegisterCap(H100(), Launch(256, 67), 24);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->spill_warning);
  ASSERT_TRUE(a->suggestion.has_value());
  EXPECT_NE(a->suggestion->text.find("local memory"), std::string::npos);
}

TEST(RegisterAdvice, NoSuggestionWhenRegistersDoNotLimit) {
  auto a = AdviseRegisterCap(H100(), Launch(256, 32), 0);  // 8 blocks: warps limit, 100 %
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->suggestion.has_value());
  EXPECT_NE(a->verdict.find("no better option"), std::string::npos);
}

// §10.2: alloc <= floor(228 KiB / N / 128) x 128, user <= alloc - 1024. H100, B=256, 16 regs,
// 40,000 B dynamic: alloc 41,088 -> 5 blocks. N=6: 38,912 - 1,024 = 37,888; N=7: 33,280 - 1,024
// = 32,256; N=8: 29,184 - 1,024 = 28,160 (then warps limit).
TEST(SharedMemAdvice, H100BudgetSteps) {
  LaunchParams l = Launch(256, 16);
  l.dynamic_smem = 40000;
  auto a = AdviseSharedMemory(H100(), l);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->active_blocks_per_sm, 5);
  ASSERT_EQ(a->steps.size(), 3u);
  EXPECT_EQ(a->steps[0].active_blocks_per_sm, 6);
  EXPECT_EQ(a->steps[0].max_user_smem_per_block, 37888);
  EXPECT_EQ(a->steps[1].active_blocks_per_sm, 7);
  EXPECT_EQ(a->steps[1].max_user_smem_per_block, 32256);
  EXPECT_EQ(a->steps[2].active_blocks_per_sm, 8);
  EXPECT_EQ(a->steps[2].max_user_smem_per_block, 28160);
  EXPECT_EQ(a->steps[2].carveout_bytes, 228 * 1024);
  ASSERT_TRUE(a->suggestion.has_value());
  EXPECT_EQ(a->suggestion->shared_mem_per_block, 37888);
}

// A carveout preference below the need caps occupancy (header: capacity rounds up to the next
// supported carveout). H100, 20 % of 228 KiB = 46,694 B -> 64 KiB carveout; 8 KiB dynamic +
// 1 KiB reserve = 9 KiB/block -> 7 blocks instead of 8.
TEST(SharedMemAdvice, CarveoutPreferenceCaps) {
  LaunchParams l = Launch(256, 16);
  l.dynamic_smem = 8 * 1024;
  l.carveout_pct = 20;
  auto a = AdviseSharedMemory(H100(), l);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->active_blocks_per_sm, 7);
  EXPECT_TRUE(a->carveout_preference_caps);
  ASSERT_TRUE(a->suggestion.has_value());
  EXPECT_EQ(a->suggestion->predicted_blocks_per_sm, 8);
}

// ncu's tail example (§5.4): H100, 3225 blocks, wave 1056 (8 x 132): 3 full waves, exact tail
// 3225 - 3168 = 57 blocks (ncu prints 58), up to 100 / (1 + 3) = 25 % of the runtime.
TEST(Waves, NcuTailExample) {
  const Waves w = ComputeWaves(3225, 8, 132);
  EXPECT_EQ(w.blocks_per_wave, 1056);
  EXPECT_EQ(w.full_waves, 3);
  EXPECT_EQ(w.tail_blocks, 57);
  EXPECT_DOUBLE_EQ(w.tail_pct, 25.0);
  EXPECT_NEAR(w.waves_per_sm, 3.054, 0.001);
  EXPECT_NE(TailSentence(w).find("25%"), std::string::npos);
  const Waves exact = ComputeWaves(2112, 8, 132);
  EXPECT_EQ(exact.tail_blocks, 0);
  EXPECT_EQ(TailSentence(exact), "");
  EXPECT_TRUE(ComputeWaves(64, 8, 132).grid_below_sm_count);
  EXPECT_EQ(ComputeWaves(64, 0, 132).blocks_per_wave, 0);
}

// ncu small-grid rule (§5.4): grid 64 < 132 SMs -> smaller blocks so that every SM gets a block.
TEST(BlockSizeAdvice, SmallGridGetsSmallerBlocks) {
  auto a = AdviseBlockSize(H100(), Launch(1024, 32), 64);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a->suggestion.has_value()) << a->verdict;
  EXPECT_LT(a->suggestion->block_size, 1024);
  EXPECT_GE((64 * 1024 + a->suggestion->block_size - 1) / a->suggestion->block_size, 132);
}

// Block not a multiple of 32: 100 threads = 4 warps with 28 idle lanes; a multiple of 32 does
// strictly better on lane use.
TEST(BlockSizeAdvice, NonMultipleOf32) {
  auto a = AdviseBlockSize(H100(), Launch(100, 32), 0);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->current.warp_waste_pct, 21.875, 1e-9);
  ASSERT_TRUE(a->suggestion.has_value());
  EXPECT_EQ(a->suggestion->block_size % 32, 0);
}

TEST(BlockSizeAdvice, NoBetterOptionIsSaid) {
  // 256 threads, 32 regs, grid 2112 = exactly 2 waves of 1056 at 100 %.
  auto a = AdviseBlockSize(H100(), Launch(256, 32), 2112);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->suggestion.has_value());
  EXPECT_EQ(a->verdict.rfind("no better option", 0), 0u) << a->verdict;
}

// Below one wave occupancy cannot matter: 96 threads x 64 registers take 6,144 registers a block,
// 10 blocks/SM (30 warps, 46.875 %); block 64 takes 4,096, 16 blocks/SM (32 warps, 50 %). But
// grid 264 (0.20 of a wave of 10 x 132) or the same work at block 64, grid 396 (0.19 of a wave),
// is resident at once either way, and both spread evenly (2 and 3 blocks per SM): nothing to
// suggest.
TEST(BlockSizeAdvice, NoOccupancyAdviceWhereTheWholeGridIsResident) {
  auto a = AdviseBlockSize(H100(), Launch(96, 64), 264);
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->current.occupancy_pct, 46.875);
  EXPECT_FALSE(a->suggestion.has_value()) << a->verdict;
  // Where SMs sit idle, smaller blocks still help, and occupancy is not named as the reason:
  // 64 blocks of 1024 threads x 40 registers (1 block/SM, 50 %) use 64 of 132 SMs; smaller
  // blocks would also raise theoretical occupancy, which the 0.5 waves make moot.
  auto idle = AdviseBlockSize(H100(), Launch(1024, 40), 64);
  ASSERT_TRUE(idle.ok() && idle->suggestion.has_value());
  EXPECT_NE(idle->suggestion->text.find("busy SMs 64 → "), std::string::npos) << idle->suggestion->text;
  EXPECT_EQ(idle->suggestion->text.find("theoretical occupancy"), std::string::npos) << idle->suggestion->text;
}

// 1024 threads x 40 registers: 40,960 registers a block, 1 block/SM, a wave of 132 blocks. At
// grid 64 every block is resident at once: a 32-register cap (2 blocks/SM) cannot help, and is
// not advised; at grid 1,000 (7.6 waves) it is.
TEST(Advice, NoMoreBlocksPerSmForAGridThatFitsInOneWave) {
  auto kinds = [](const LaunchAdvice& a) {
    std::string k;
    for (const auto& s : a.suggestions) k += s.kind + " ";
    return k;
  };
  AdviceInputs small;
  small.grid_blocks = 64;
  auto a = AdviseLaunch(H100(), Launch(1024, 40), small);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->occupancy.active_blocks_per_sm, 1);
  EXPECT_EQ(kinds(*a).find("register_cap"), std::string::npos) << kinds(*a);
  bool noted = false;
  for (const auto& n : a->notes) noted |= n.find("fits in one wave of 132 blocks") != std::string::npos;
  EXPECT_TRUE(noted);
  AdviceInputs large;
  large.grid_blocks = 1000;
  auto b = AdviseLaunch(H100(), Launch(1024, 40), large);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(kinds(*b).find("register_cap"), std::string::npos) << kinds(*b);
}

TEST(Limiter, SentenceAndRealLimiters) {
  const DeviceProps d = H100();
  const LaunchParams l = Launch(256, 44);
  const OccupancyResult r = ComputeOccupancy(d, l).value();
  const std::string s = LimiterSentence(d, l, r);
  EXPECT_EQ(s.rfind("limited by registers: 44 regs/thread", 0), 0u) << s;
  EXPECT_NE(s.find("256 threads"), std::string::npos) << s;
  EXPECT_NE(s.find("5 blocks/SM"), std::string::npos) << s;
  EXPECT_EQ(PrimaryLimiter(r), "registers");

  // Header bits WARPS|BARRIERS (§2.4), but only barriers bind.
  LaunchParams b = Launch(256, 16);
  b.num_block_barriers = 16;
  const OccupancyResult rb = ComputeOccupancy(d, b).value();
  EXPECT_EQ(RealLimiters(rb), static_cast<uint32_t>(kLimitBarriers));
  EXPECT_EQ(PrimaryLimiter(rb), "barriers");
  EXPECT_NE(LimiterSentence(d, b, rb).find("named barriers"), std::string::npos);

  EXPECT_EQ(PrimaryLimiter(ComputeOccupancy(d, Launch(256, 32)).value()), "none");
}

TEST(Curves, BlockSizeRegisterAndSharedMem) {
  const DeviceProps d = H100();
  LaunchParams l = Launch(256, 44);
  auto c = BlockSizeCurve(d, l);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->points.size(), 32u);
  EXPECT_EQ(c->points.front().x, 32);
  EXPECT_EQ(c->points.back().x, 1024);
  EXPECT_NE(c->assumptions.find("44 registers/thread"), std::string::npos);
  l.func_max_threads_per_block = 200;
  l.block_threads = 192;
  auto capped = BlockSizeCurve(d, l);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->points.back().x, 200);  // the function limit itself, like the header search

  auto regs = RegisterCurve(d, Launch(256, 44));
  ASSERT_TRUE(regs.ok());
  EXPECT_EQ(regs->points.back().x, 255);
  for (size_t i = 1; i < regs->points.size(); ++i) {
    EXPECT_LE(regs->points[i].active_blocks_per_sm, regs->points[i - 1].active_blocks_per_sm);
  }
  auto smem = SharedMemCurve(d, Launch(256, 16));
  ASSERT_TRUE(smem.ok());
  ASSERT_FALSE(smem->points.empty());
  EXPECT_EQ(smem->points.front().active_blocks_per_sm, 8);
  EXPECT_EQ(smem->points.back().x, 49152);  // no opt-in: the default per-block limit
}

// Property: no advice ever echoes the current configuration, and predictions are improvements.
TEST(AdviseLaunch, NeverEchoesCurrentConfiguration) {
  std::mt19937 rng(5);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* gpus[] = {"H100", "A100", "RTX 4090", "T4", "V100", "B200", "RTX 5090", "P100", "sm_52"};
  int suggestions = 0;
  for (int i = 0; i < 300; ++i) {
    const DeviceProps d = LookupGpu(gpus[i % 9]).value();
    LaunchParams l = Launch(uni(1, 32) * 32 - (uni(0, 3) == 0 ? uni(1, 31) : 0), uni(8, 128));
    l.dynamic_smem = uni(0, 3) == 0 ? 0 : uni(0, 40000);
    auto occ = ComputeOccupancy(d, l);
    if (!occ.ok()) continue;
    AdviceInputs in;
    in.grid_blocks = uni(1, 20000);
    auto a = AdviseLaunch(d, l, in);
    ASSERT_TRUE(a.ok()) << a.status().message();
    for (const Suggestion& s : a->suggestions) {
      ++suggestions;
      EXPECT_FALSE(s.text.empty());
      EXPECT_FALSE(s.assumptions.empty()) << s.text;
      if (s.kind == "block_size") {
        EXPECT_NE(s.block_size, l.block_threads) << s.text;
      }
      if (s.kind == "register_cap") {
        EXPECT_LT(s.registers_per_thread, l.regs_per_thread) << s.text;
        EXPECT_GT(s.predicted_blocks_per_sm, occ->active_blocks_per_sm) << s.text;
      }
      if (s.kind == "shared_memory") {
        EXPECT_GT(s.predicted_blocks_per_sm, occ->active_blocks_per_sm) << s.text;
      }
    }
  }
  EXPECT_GT(suggestions, 50);
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// Barrier pool on H100 (header: 2 x 32 = 64): 16 barriers -> 4 blocks; the next step is
// floor(64 / n) = 5 at n = 12.
TEST(AdviseLaunch, FewerNamedBarriers) {
  LaunchParams l = Launch(256, 16);
  l.num_block_barriers = 16;
  auto a = AdviseLaunch(H100(), l, AdviceInputs{});
  ASSERT_TRUE(a.ok());
  bool found = false;
  for (const Suggestion& s : a->suggestions) {
    if (s.kind != "barriers") continue;
    found = true;
    EXPECT_NE(s.text.find("at most 12 named barriers"), std::string::npos) << s.text;
    EXPECT_EQ(s.predicted_blocks_per_sm, 5);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(a->primary_limiter, "barriers");
}

}  // namespace
}  // namespace occ

namespace occ {
namespace {

// 130 blocks of 1024 threads on 132 SMs: one block per busy SM. A block size that needs more than
// 132 blocks for the same work (e.g. 992 threads -> 135 blocks) puts two blocks on some SM and
// doubles its work: not advice.
TEST(BlockSizeAdvice, NearlyFullSubWaveGridStays) {
  auto a = AdviseBlockSize(H100(), Launch(1024, 32), 130);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->suggestion.has_value()) << a->verdict;
}

}  // namespace
}  // namespace occ
