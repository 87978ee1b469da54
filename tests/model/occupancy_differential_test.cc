// Differential test: occ::ComputeOccupancyUnchecked (table-driven port) against NVIDIA's own
// cuda_occupancy.h on random launches over every compute capability of the architecture table.
// The header is the oracle; it is included here only. OCC_DIFF_CONFIGS sets the number of
// launches (default 1,000,000); the seed is fixed so every run compares the same launches.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/occupancy.h"

#ifdef OCC_HAVE_CUDA_OCCUPANCY_H
#include <cuda_occupancy.h>
#endif

namespace occ {
namespace {

#ifndef OCC_HAVE_CUDA_OCCUPANCY_H

TEST(OccupancyDifferential, AgainstCudaOccupancyHeader) {
  GTEST_SKIP() << "cuda_occupancy.h not found (set OCC_CUDA_OCCUPANCY_INCLUDE_DIR to the CUDA "
                  "toolkit's include directory to run the differential test)";
}

#else

int64_t ConfigCount() {
  const char* env = std::getenv("OCC_DIFF_CONFIGS");
  if (env == nullptr || *env == '\0') return 1000000;
  return std::max<int64_t>(1, std::atoll(env));
}

cudaOccDeviceProp ToHeader(const DeviceProps& d) {
  cudaOccDeviceProp p;
  p.computeMajor = d.cc_major;
  p.computeMinor = d.cc_minor;
  p.maxThreadsPerBlock = d.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
  p.regsPerBlock = d.regs_per_block;
  p.regsPerMultiprocessor = d.regs_per_sm;
  p.warpSize = d.warp_size;
  p.sharedMemPerBlock = static_cast<size_t>(d.smem_per_block);
  p.sharedMemPerMultiprocessor = static_cast<size_t>(d.smem_per_sm);
  p.numSms = d.num_sms;
  p.sharedMemPerBlockOptin = static_cast<size_t>(d.smem_per_block_optin);
  p.reservedSharedMemPerBlock = static_cast<size_t>(d.reserved_smem_per_block);
  return p;
}

cudaOccFuncAttributes ToHeaderAttributes(const LaunchParams& l) {
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = l.func_max_threads_per_block;
  a.numRegs = l.regs_per_thread;
  a.sharedSizeBytes = static_cast<size_t>(l.static_smem);
  a.partitionedGCConfig = static_cast<cudaOccPartitionedGCConfig>(l.gc);
  a.shmemLimitConfig = static_cast<cudaOccFuncShmemConfig>(l.shmem_limit_config);
  a.maxDynamicSharedSizeBytes = static_cast<size_t>(l.max_dynamic_smem);
  a.numBlockBarriers = l.num_block_barriers;
  a.virtualResourceCount = l.virtual_resource_count;
  return a;
}

cudaOccDeviceState ToHeaderState(const LaunchParams& l) {
  cudaOccDeviceState s;
  s.cacheConfig = static_cast<cudaOccCacheConfig>(l.cache_config);
  s.carveoutConfig = l.carveout_pct;
  return s;
}

// Random launches that cover every branch of the header: block sizes off the warp multiple and
// above the device limit, registers 0..256, static/dynamic smem up to and past the limits,
// opt-in with consistent and inconsistent maxima, carveouts -1/0..100 (and out of range),
// cache configs, 0..16 barriers, GC modes, virtual resources, and devices with 32 K registers
// per block or a carveout the header cannot round (its error path).
class LaunchGenerator {
 public:
  explicit LaunchGenerator(uint64_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }

  DeviceProps Device(const ArchConstants& a) {
    DeviceProps d = DevicePropsForCc(a.cc_major, a.cc_minor, Uniform(1, 200)).value();
    if (Chance(5)) d.regs_per_block = 32768;
    if (Chance(2)) d.smem_per_sm += 1024;  // above the largest carveout: the header errors
    if (Chance(2)) d.max_threads_per_block = 512;
    return d;
  }

  LaunchParams Launch(const DeviceProps& d) {
    LaunchParams l;
    const int r = Uniform(0, 99);
    if (r < 50) {
      l.block_threads = 32 * Uniform(1, 32);
    } else if (r < 92) {
      l.block_threads = Uniform(1, 1024);
    } else {
      l.block_threads = Uniform(1, 1200);
    }
    // Mostly what compilers emit; the tail up to 255 (and the header's 256) for the limits.
    const int reg_class = Uniform(0, 99);
    l.regs_per_thread = reg_class < 60   ? Uniform(0, 64)
                        : reg_class < 85 ? Uniform(65, 128)
                        : reg_class < 98 ? Uniform(129, 255)
                                         : 256;
    l.static_smem = Chance(40) ? 0 : (Chance(70) ? Uniform(0, 16 * 1024) : Uniform(0, 48 * 1024));
    const int optin_max = std::max(d.smem_per_block_optin, d.smem_per_block);
    if (Chance(30)) {
      l.dynamic_smem = 0;
    } else if (Chance(60)) {
      l.dynamic_smem = Uniform(0, 32 * 1024);
    } else {
      l.dynamic_smem = Uniform(0, optin_max + 4096);
    }
    if (Chance(50)) {
      l.shmem_limit_config = ShmemLimitConfig::kOptIn;
      l.max_dynamic_smem = Chance(70) ? std::max(0, optin_max - l.static_smem)
                                      : Uniform(0, optin_max);
    } else {
      l.max_dynamic_smem = Chance(50) ? 0 : Uniform(0, optin_max);
    }
    l.carveout_pct = Chance(40) ? -1 : (Chance(1) ? Uniform(-3, 103) : Uniform(0, 100));
    l.cache_config = static_cast<CacheConfig>(Uniform(0, 3));
    l.num_block_barriers = Uniform(0, 16);
    l.gc = static_cast<PartitionedGlobalCaching>(Uniform(0, 2));
    l.virtual_resource_count = Chance(80) ? 0 : Uniform(1, 130);
    l.func_max_threads_per_block = Chance(70) ? INT_MAX : 32 * Uniform(1, 32) - Uniform(0, 31);
    return l;
  }

 private:
  std::mt19937_64 rng_;
};

struct Tally {
  int64_t compared = 0;
  int64_t header_errors = 0;
  int64_t mismatches = 0;
};

// How often each branch was taken, so the figures show the launches were not all trivial.
struct Coverage {
  int64_t cannot_run = 0, barriers_bind = 0, gc_on = 0, virtual_binds = 0, ties = 0;
  int64_t smem_limits = 0, regs_limit = 0;
};

TEST(OccupancyDifferential, AgainstCudaOccupancyHeader) {
  const int64_t total = ConfigCount();
  const auto& table = AllArchConstants();
  LaunchGenerator gen(20261121);
  std::map<std::pair<int, int>, Tally> per_cc;
  int64_t mismatches = 0;
  int reported = 0;
  Coverage cov;
  for (int64_t i = 0; i < total; ++i) {
    const ArchConstants& a = table[static_cast<size_t>(i) % table.size()];
    const DeviceProps d = gen.Device(a);
    const LaunchParams l = gen.Launch(d);
    const cudaOccDeviceProp prop = ToHeader(d);
    const cudaOccFuncAttributes attr = ToHeaderAttributes(l);
    const cudaOccDeviceState state = ToHeaderState(l);
    cudaOccResult want{};
    const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(
        &want, &prop, &attr, &state, l.block_threads, static_cast<size_t>(l.dynamic_smem));
    const StatusOr<OccupancyResult> got = ComputeOccupancyUnchecked(d, l);

    Tally& t = per_cc[{a.cc_major, a.cc_minor}];
    ++t.compared;
    bool same;
    if (err != CUDA_OCC_SUCCESS) {
      ++t.header_errors;
      same = !got.ok();
    } else {
      const unsigned f = want.limitingFactors;
      cov.cannot_run += want.activeBlocksPerMultiprocessor == 0;
      cov.barriers_bind += want.activeBlocksPerMultiprocessor == want.blockLimitBarriers;
      cov.gc_on += want.partitionedGCConfig != PARTITIONED_GC_OFF;
      cov.virtual_binds += (f & OCC_LIMIT_VIRTUAL_RESOURCES) != 0;
      cov.ties += (f & (f - 1)) != 0;
      cov.smem_limits += (f & OCC_LIMIT_SHARED_MEMORY) != 0;
      cov.regs_limit += (f & OCC_LIMIT_REGISTERS) != 0;
      same = got.ok() && got->active_blocks_per_sm == want.activeBlocksPerMultiprocessor &&
             got->limiting_factors == want.limitingFactors &&
             got->block_limit_registers == want.blockLimitRegs &&
             got->block_limit_shared_mem == want.blockLimitSharedMem &&
             got->block_limit_warps == want.blockLimitWarps &&
             got->block_limit_blocks == want.blockLimitBlocks &&
             got->block_limit_barriers == want.blockLimitBarriers &&
             got->block_limit_virtual == want.blockLimitVirtual &&
             got->allocated_registers_per_block == want.allocatedRegistersPerBlock &&
             static_cast<size_t>(got->allocated_shared_mem_per_block) ==
                 want.allocatedSharedMemPerBlock &&
             got->partitioned_gc_enabled == (want.partitionedGCConfig != PARTITIONED_GC_OFF);
    }
    if (!same) {
      ++t.mismatches;
      ++mismatches;
      if (reported++ < 10) {
        ADD_FAILURE() << "mismatch on sm_" << a.cc_major << a.cc_minor << " block "
                      << l.block_threads << " regs " << l.regs_per_thread << " static "
                      << l.static_smem << " dynamic " << l.dynamic_smem << " optin "
                      << static_cast<int>(l.shmem_limit_config) << " maxdyn " << l.max_dynamic_smem
                      << " carveout " << l.carveout_pct << " cache "
                      << static_cast<int>(l.cache_config) << " barriers " << l.num_block_barriers
                      << " gc " << static_cast<int>(l.gc) << " virtual "
                      << l.virtual_resource_count << ": header err " << err << " blocks "
                      << want.activeBlocksPerMultiprocessor << " factors " << want.limitingFactors
                      << " regs " << want.blockLimitRegs << " smem " << want.blockLimitSharedMem
                      << " warps " << want.blockLimitWarps << " | ours "
                      << (got.ok() ? std::to_string(got->active_blocks_per_sm) + " factors " +
                                         std::to_string(got->limiting_factors) + " regs " +
                                         std::to_string(got->block_limit_registers) + " smem " +
                                         std::to_string(got->block_limit_shared_mem) + " warps " +
                                         std::to_string(got->block_limit_warps)
                                   : got.status().message());
      }
    }
  }
  std::printf("differential: cuda_occupancy.h (CUDA_OCC %d.%d) vs occ::ComputeOccupancyUnchecked, "
              "seed 20261121\n", __CUDA_OCC_MAJOR__, __CUDA_OCC_MINOR__);
  std::printf("%-6s %10s %14s %10s\n", "cc", "configs", "header_errors", "mismatches");
  for (const auto& [cc, t] : per_cc) {
    const std::string name = std::to_string(cc.first) + "." + std::to_string(cc.second);
    std::printf("%-6s %10lld %14lld %10lld\n", name.c_str(), static_cast<long long>(t.compared),
                static_cast<long long>(t.header_errors), static_cast<long long>(t.mismatches));
  }
  std::printf("total  %10lld %14s %10lld\n", static_cast<long long>(total), "",
              static_cast<long long>(mismatches));
  std::printf("coverage: cannot run %lld, barriers bind %lld, partitioned GC on %lld, virtual "
              "limits %lld, several limiter bits %lld, smem bit %lld, registers bit %lld\n",
              static_cast<long long>(cov.cannot_run), static_cast<long long>(cov.barriers_bind),
              static_cast<long long>(cov.gc_on), static_cast<long long>(cov.virtual_binds),
              static_cast<long long>(cov.ties), static_cast<long long>(cov.smem_limits),
              static_cast<long long>(cov.regs_limit));
  EXPECT_EQ(mismatches, 0);
}

// The block-size search (cudaOccMaxPotentialOccupancyBlockSize and its VariableSMem form) and
// cudaOccAvailableDynamicSMemPerBlock on a subset: each runs the model up to 32 times.
TEST(OccupancyDifferential, BlockSizeSearchAndAvailableDynamicSmem) {
  const int64_t total = std::max<int64_t>(1, ConfigCount() / 50);
  const auto& table = AllArchConstants();
  LaunchGenerator gen(777);
  int64_t search_mismatches = 0, variable_mismatches = 0, dyn_mismatches = 0, dyn_compared = 0;
  for (int64_t i = 0; i < total; ++i) {
    const ArchConstants& a = table[static_cast<size_t>(i) % table.size()];
    const DeviceProps d = gen.Device(a);
    const LaunchParams l = gen.Launch(d);
    const cudaOccDeviceProp prop = ToHeader(d);
    const cudaOccFuncAttributes attr = ToHeaderAttributes(l);
    const cudaOccDeviceState state = ToHeaderState(l);

    int want_grid = 0, want_block = 0;
    cudaOccError err = cudaOccMaxPotentialOccupancyBlockSize(
        &want_grid, &want_block, &prop, &attr, &state, static_cast<size_t>(l.dynamic_smem));
    StatusOr<BlockSizeSearch> got = MaxPotentialBlockSize(d, l);
    bool same = (err != CUDA_OCC_SUCCESS) ? !got.ok()
                                          : got.ok() && got->block_size == want_block &&
                                                got->min_grid_size == want_grid;
    if (!same && search_mismatches++ < 5) {
      ADD_FAILURE() << "block-size search mismatch on sm_" << a.cc_major << a.cc_minor
                    << ": header " << want_block << "/" << want_grid << " ours "
                    << (got.ok() ? std::to_string(got->block_size) : got.status().message());
    }

    // Dynamic smem proportional to the block size (a common pattern: one element per thread).
    const int bytes_per_thread = gen.Uniform(0, 64);
    auto per_block = [bytes_per_thread](int b) { return b * bytes_per_thread; };
    err = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(
        &want_grid, &want_block, &prop, &attr, &state,
        [&](int b) { return static_cast<size_t>(per_block(b)); });
    got = MaxPotentialBlockSize(d, l, per_block);
    same = (err != CUDA_OCC_SUCCESS) ? !got.ok()
                                     : got.ok() && got->block_size == want_block &&
                                           got->min_grid_size == want_grid;
    if (!same && variable_mismatches++ < 5) {
      ADD_FAILURE() << "VariableSMem search mismatch on sm_" << a.cc_major << a.cc_minor;
    }

    const int num_blocks = gen.Uniform(0, 8);
    size_t want_dyn = 0;
    err = cudaOccAvailableDynamicSMemPerBlock(&want_dyn, &prop, &attr, &state, num_blocks,
                                              l.block_threads);
    StatusOr<int> got_dyn = AvailableDynamicSmemPerBlock(d, l, num_blocks);
    ++dyn_compared;
    same = (err != CUDA_OCC_SUCCESS) ? !got_dyn.ok()
                                     : got_dyn.ok() && static_cast<size_t>(*got_dyn) == want_dyn;
    if (!same && dyn_mismatches++ < 5) {
      ADD_FAILURE() << "AvailableDynamicSMemPerBlock mismatch on sm_" << a.cc_major << a.cc_minor
                    << " blocks " << num_blocks << ": header err " << err << " " << want_dyn
                    << " ours " << (got_dyn.ok() ? std::to_string(*got_dyn) : got_dyn.status().message());
    }
  }
  std::printf("block-size search: %lld configs (fixed and per-thread dynamic smem), mismatches %lld "
              "+ %lld; AvailableDynamicSMemPerBlock: %lld configs, mismatches %lld\n",
              static_cast<long long>(total), static_cast<long long>(search_mismatches),
              static_cast<long long>(variable_mismatches), static_cast<long long>(dyn_compared),
              static_cast<long long>(dyn_mismatches));
  EXPECT_EQ(search_mismatches + variable_mismatches + dyn_mismatches, 0);
}

#endif  // OCC_HAVE_CUDA_OCCUPANCY_H

}  // namespace
}  // namespace occ
