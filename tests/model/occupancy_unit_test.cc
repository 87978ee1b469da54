// Values pinned by independent sources: Nsight Compute output and runtime measurements quoted in
// occupancy-model.md (§2.4, §3, §5.2, §5.3). None of the expected values comes from our own output.
#include <gtest/gtest.h>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/limiter_words.h"
#include "analyzer/model/occupancy.h"
#include "analyzer/model/waves.h"

namespace occ {
namespace {

DeviceProps Gpu(const char* name) {
  auto d = LookupGpu(name);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.value();
}

LaunchParams Launch(int block, int regs) {
  LaunchParams l;
  l.block_threads = block;
  l.regs_per_thread = regs;
  return l;
}

OccupancyResult Occ(const DeviceProps& d, const LaunchParams& l) {
  auto r = ComputeOccupancy(d, l);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.value();
}

// ncu, RTX 4090: 256 threads, 16 registers, 1 KB driver smem, config 16 KiB -> Block Limit
// Registers 16, Shared Mem 16, Warps 6, SM 24, theoretical 100 %, waves 65535 / (128 x 6) = 85.33.
TEST(OccupancyNcu, Rtx4090Block256Regs16Config16K) {
  const DeviceProps d = Gpu("RTX 4090");
  LaunchParams l = Launch(256, 16);
  l.executed_smem_config = 16 * 1024;
  const OccupancyResult r = Occ(d, l);
  EXPECT_EQ(r.block_limit_registers, 16);
  EXPECT_EQ(r.ncu_block_limit_shared_mem, 16);
  EXPECT_EQ(r.block_limit_warps, 6);
  EXPECT_EQ(r.block_limit_blocks, 24);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 100.0);
  EXPECT_EQ(r.allocated_shared_mem_per_block, 1024);  // "Driver Shared Memory Per Block 1.02 KB"
  const Waves w = ComputeWaves(65535, r.active_blocks_per_sm, d.num_sms);
  EXPECT_NEAR(w.waves_per_sm, 85.33, 0.005);
}

// The executed carveout, when known, is the SM's shared memory for the launch, whatever was
// requested (Nsight Compute: 100 % for this launch recorded with a 0 % request and 32 KiB
// executed). By hand: warps 2048/128 = 16 blocks; smem 32768/1024 = 32; -> 100 %. Without the
// executed size, the 0 % request alone gives the smallest carveout: 8 KiB / 1 KiB = 8 blocks, 50 %.
TEST(OccupancyNcu, H100ExecutedCarveoutOverridesTheRequest) {
  const DeviceProps d = Gpu("H100");
  LaunchParams l = Launch(128, 16);
  l.carveout_pct = 0;
  EXPECT_DOUBLE_EQ(Occ(d, l).theoretical_occupancy_pct, 50.0);
  l.executed_smem_config = 32 * 1024;
  const OccupancyResult r = Occ(d, l);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 100.0);
  EXPECT_EQ(r.block_limit_shared_mem, 32);
  EXPECT_EQ(r.block_limit_shared_mem, r.ncu_block_limit_shared_mem);
}

// ncu, H100: 256 threads, 67 registers -> Block Limit Registers 3, 37.5 %, "6.00 theoretical
// warps per scheduler" (24 warps / 4 schedulers).
TEST(OccupancyNcu, H100Block256Regs67) {
  const OccupancyResult r = Occ(Gpu("H100"), Launch(256, 67));
  EXPECT_EQ(r.block_limit_registers, 3);
  EXPECT_EQ(r.active_blocks_per_sm, 3);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 37.5);
  EXPECT_EQ(r.active_warps_per_sm / 4, 6);
  EXPECT_EQ(r.limiting_factors, kLimitRegisters);
}

// ncu, H100: 96 threads, 36 registers -> Registers 16, Warps 21, 75 %.
TEST(OccupancyNcu, H100Block96Regs36) {
  const OccupancyResult r = Occ(Gpu("H100"), Launch(96, 36));
  EXPECT_EQ(r.block_limit_registers, 16);
  EXPECT_EQ(r.block_limit_warps, 21);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 75.0);
}

// ncu, sm_120: static 2 KiB, config 64 KiB -> Block Limit Shared Mem 21, Barriers 24.
TEST(OccupancyNcu, Sm120Static2KConfig64K) {
  LaunchParams l = Launch(128, 32);
  l.static_smem = 2048;
  l.executed_smem_config = 64 * 1024;
  const OccupancyResult r = Occ(Gpu("sm_120"), l);
  EXPECT_EQ(r.ncu_block_limit_shared_mem, 21);
  EXPECT_EQ(r.ncu_block_limit_barriers, 24);
}

// ncu, Jetson Thor (sm_110): 1-thread blocks -> Registers 128, Warps 48, SM 24, 50 %.
TEST(OccupancyNcu, ThorOneThreadBlocks) {
  const OccupancyResult r = Occ(Gpu("Thor"), Launch(1, 16));
  EXPECT_EQ(r.block_limit_registers, 128);
  EXPECT_EQ(r.block_limit_warps, 48);
  EXPECT_EQ(r.block_limit_blocks, 24);
  EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 50.0);
}

// ncu, H100 (measured, §5.3): B=256, no user smem, 0/1/2/4/8/16 barriers -> Block Limit Barriers
// 32/32/32/16/8/4; executed configs 32/32/32/16/8/8 KiB -> Block Limit Shared Mem 32/32/32/16/8/8;
// the 16-barrier kernel -> 50 %.
TEST(OccupancyNcu, H100BarriersAndExecutedCarveout) {
  const DeviceProps d = Gpu("H100");
  const int barriers[] = {0, 1, 2, 4, 8, 16};
  const int ncu_barriers[] = {32, 32, 32, 16, 8, 4};
  const int config_kib[] = {32, 32, 32, 16, 8, 8};
  for (int i = 0; i < 6; ++i) {
    LaunchParams l = Launch(256, 16);
    l.num_block_barriers = barriers[i];
    l.executed_smem_config = config_kib[i] * 1024;
    const OccupancyResult r = Occ(d, l);
    EXPECT_EQ(r.ncu_block_limit_barriers, ncu_barriers[i]) << barriers[i] << " barriers";
    EXPECT_EQ(r.ncu_block_limit_shared_mem, config_kib[i]) << barriers[i] << " barriers";
    if (barriers[i] == 16) {
      EXPECT_DOUBLE_EQ(r.theoretical_occupancy_pct, 50.0);
    }
  }
}

// ncu vs header, H100 (§5.2): a kernel allocating only the 1 KB reserve in a 32 KiB executed
// carveout shows Shared Mem 32; with the executed carveout unknown, the header divides the
// 228 KiB maximum: 228. Known, the executed carveout is the model's too.
TEST(OccupancyNcu, H100ReserveOnlyKernel) {
  LaunchParams l = Launch(256, 16);
  EXPECT_EQ(Occ(Gpu("H100"), l).block_limit_shared_mem, 228);
  l.executed_smem_config = 32 * 1024;
  const OccupancyResult r = Occ(Gpu("H100"), l);
  EXPECT_EQ(r.ncu_block_limit_shared_mem, 32);
  EXPECT_EQ(r.block_limit_shared_mem, 32);
}

// ncu (§5.2): on H100 a kernel compiled to 10 registers shows "Registers Per Thread 16".
TEST(OccupancyNcu, AllocatedRegistersPerThread) {
  EXPECT_EQ(Occ(Gpu("H100"), Launch(256, 10)).allocated_registers_per_thread, 16);
}

// Runtime, H100 (§2.4): a 16-barrier kernel at B=256 returns 4 blocks with WARPS|BARRIERS
// although warps allow 8; an 8-barrier kernel at B=64 returns WARPS|BLOCKS|BARRIERS.
TEST(OccupancyRuntime, H100BarrierFactorBits) {
  const DeviceProps d = Gpu("H100");
  LaunchParams l = Launch(256, 16);
  l.num_block_barriers = 16;
  OccupancyResult r = Occ(d, l);
  EXPECT_EQ(r.active_blocks_per_sm, 4);
  EXPECT_EQ(r.block_limit_warps, 8);
  EXPECT_EQ(r.limiting_factors, kLimitWarps | kLimitBarriers);
  l = Launch(64, 16);
  l.num_block_barriers = 8;
  r = Occ(d, l);
  EXPECT_EQ(r.limiting_factors, kLimitWarps | kLimitBlocks | kLimitBarriers);
  EXPECT_EQ(r.active_blocks_per_sm, 8);
}

// Runtime, H100 (§3): cudaFuncGetAttributes maxThreadsPerBlock from registers.
TEST(OccupancyRuntime, H100FunctionMaxThreadsFromRegisters) {
  const DeviceProps d = Gpu("H100");
  const std::pair<int, int> measured[] = {{65, 896}, {96, 640}, {100, 512}, {168, 384}, {250, 256}};
  for (const auto& [regs, threads] : measured) {
    auto got = FunctionMaxThreadsPerBlock(d, regs);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, threads) << regs << " registers";
    // The same bound from the model: one more warp group does not fit.
    EXPECT_GT(Occ(d, Launch(threads, regs)).active_blocks_per_sm, 0);
    if (threads + 128 <= 1024) {
      EXPECT_EQ(Occ(d, Launch(threads + 128, regs)).block_limit_registers, 0) << regs;
    }
  }
  EXPECT_EQ(FunctionMaxThreadsPerBlock(d, 32).value(), 1024);
}

// Runtime, H100 (§2.5): cudaOccAvailableDynamicSMemPerBlock returns 116,736 B each for 2 blocks
// (it ignores the 1 KB reserve), and feeding that back gives 1 block.
TEST(OccupancyRuntime, H100AvailableDynamicSmemIgnoresReserve) {
  const DeviceProps d = Gpu("H100");
  LaunchParams l = Launch(256, 32);
  l.shmem_limit_config = ShmemLimitConfig::kOptIn;
  l.max_dynamic_smem = d.smem_per_block_optin;
  auto avail = AvailableDynamicSmemPerBlock(d, l, 2);
  ASSERT_TRUE(avail.ok()) << avail.status().message();
  EXPECT_EQ(*avail, 116736);
  l.dynamic_smem = *avail;
  EXPECT_EQ(Occ(d, l).active_blocks_per_sm, 1);
}

TEST(OccupancyValidation, RejectsBadLaunchesNamingValueAndLimit) {
  const DeviceProps d = Gpu("H100");
  struct Case { LaunchParams launch; const char* value; const char* limit; };
  LaunchParams big_smem = Launch(256, 32);
  big_smem.shmem_limit_config = ShmemLimitConfig::kOptIn;
  big_smem.dynamic_smem = 300000;
  big_smem.max_dynamic_smem = 300000;
  LaunchParams no_optin = Launch(256, 32);
  no_optin.dynamic_smem = 60000;
  LaunchParams barriers = Launch(256, 32);
  barriers.num_block_barriers = 17;
  LaunchParams carveout = Launch(256, 32);
  carveout.carveout_pct = 120;
  const Case cases[] = {
      {Launch(0, 32), "0", "1024"},          {Launch(1025, 32), "1025", "1024"},
      {Launch(256, 256), "256", "255"},      {Launch(256, -1), "-1", "255"},
      {big_smem, "300000", "232448"},        {no_optin, "60000", "49152"},
      {barriers, "17", "16"},                {carveout, "120", "100"},
  };
  for (const Case& c : cases) {
    auto r = ComputeOccupancy(d, c.launch);
    ASSERT_FALSE(r.ok()) << c.value;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.value), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.limit), std::string::npos) << r.status().message();
  }
}

// A launch that is valid but cannot be resident is OK with 0 blocks (255 regs x 1024 threads).
TEST(OccupancyValidation, ValidButNotResident) {
  const OccupancyResult r = Occ(Gpu("H100"), Launch(1024, 255));
  EXPECT_EQ(r.active_blocks_per_sm, 0);
  EXPECT_EQ(r.block_limit_registers, 0);
  EXPECT_NE(LimiterSentence(Gpu("H100"), Launch(1024, 255), r).find("cannot run"), std::string::npos);
}

TEST(OccupancyNames, LimitingFactorNamesInOrder) {
  EXPECT_EQ(LimitingFactorNames(kLimitBarriers | kLimitWarps | kLimitSharedMemory),
            (std::vector<std::string>{"warps", "shared_memory", "barriers"}));
  EXPECT_TRUE(LimitingFactorNames(0).empty());
}

}  // namespace
}  // namespace occ
