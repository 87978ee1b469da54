#include "nsys_export_gen.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "synthetic_inputs.h"
#include "kNsysExportSchemaSql.h"
#include "sqlite/sqlite_db.h"

namespace occ::bench {
namespace {

// What a kernel row repeats for every launch of one configuration.
struct Config {
  int64_t device = 0, demangled = 0, short_name = 0, mangled = 0;
  int64_t grid = 1, block = 128, registers = 32, static_smem = 0, dynamic_smem = 0;
  int64_t smem_executed = 0, smem_limit_config = 0, local_per_thread = 0, graph = 0, stream = 7;
};

// The kernel table's columns in the order of the INSERT below.
constexpr const char* kKernelColumns =
    "start, \"end\", deviceId, contextId, greenContextId, streamId, correlationId, globalPid, "
    "demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, "
    "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
    "localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, "
    "sharedMemoryLimitConfig, qmdBulkReleaseDone, qmdPreexitDone, qmdLastCtaDone, graphId, "
    "clusterX, clusterY, clusterZ, clusterSchedulingPolicy, maxPotentialClusterSize, "
    "maxActiveClusters, sharedMemoryRequestedPercentage";
constexpr int kKernelColumnCount = 39;

}  // namespace

Status GenerateNsysExport(const std::string& path, const NsysExportGenOptions& o) {
  OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::Create(path, /*replace=*/true));
  // Bulk load: no journal, no fsync; the file is a benchmark input, rebuilt if interrupted.
  OCC_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"));
  OCC_RETURN_IF_ERROR(db.Exec(kNsysExportSchemaSql));
  OCC_ASSIGN_OR_RETURN(sql::Transaction tx, sql::Transaction::Begin(db));
  OCC_RETURN_IF_ERROR(db.Exec(
      "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1'), "
      "('EXPORT_PROGRAM_NAME', 'occ_analyzer_bench (synthetic)');"));
  for (int d = 0; d < o.devices; ++d) {
    const std::string id = std::to_string(d);
    OCC_RETURN_IF_ERROR(db.Exec(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, "
        "totalMemory, memoryBandwidth, clockRate, smCount, pwGpuId, uuid, luid, chipName, "
        "cuDevice, revision, nodeMask, constantMemory, maxIPC, maxRegistersPerBlock, "
        "maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, "
        "threadsPerWarp, asyncEngines, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, "
        "maxBlockDimX, maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ, "
        "computeMajor, computeMinor, smMajor, smMinor, numaNodeId) VALUES (0, " + id +
        ", 'NVIDIA H100 80GB HBM3', '0000:" + std::to_string(0x18 + d) + ":00.0', 1, 52428800, "
        "85520809984, 3352320000000, 1980000000, 132, " + id + ", 'GPU-bench-" + id + "', 0, "
        "'GH100', " + id + ", 161, 1, 65536, 4, 65536, 49152, 232448, 233472, 65536, 32, 3, 64, "
        "32, 1024, 1024, 1024, 64, 2147483647, 65535, 65535, 9, 0, 9, 0, 0);"
        "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (" + id + ", " + id + ", 4242, 'GPU-bench-" +
        id + "', 132);"));
  }
  Rng rng{o.seed};
  const int kernels = std::max(1, o.configs / 10);  // ~10 configurations per kernel
  {
    OCC_ASSIGN_OR_RETURN(sql::Stmt s, db.Prepare("INSERT INTO StringIds VALUES (?1, ?2)"));
    for (int k = 0; k < kernels; ++k) {
      const std::string base = "kernel_" + std::to_string(k);
      const std::array<std::string, 3> names = KernelNameForms(base);
      for (int i = 0; i < 3; ++i) {
        OCC_RETURN_IF_ERROR(s.BindInt64(1, k * 3 + i + 1));
        OCC_RETURN_IF_ERROR(s.BindText(2, names[static_cast<size_t>(i)]));
        OCC_RETURN_IF_ERROR(s.Run());
      }
    }
  }
  std::vector<Config> configs(static_cast<size_t>(std::max(1, o.configs)));
  for (size_t c = 0; c < configs.size(); ++c) {
    Config& cfg = configs[c];
    const int64_t k = static_cast<int64_t>(c) % kernels;
    cfg.device = static_cast<int64_t>(c) % o.devices;
    cfg.demangled = k * 3 + 1;
    cfg.short_name = k * 3 + 2;
    cfg.mangled = k * 3 + 3;
    cfg.block = kBlockSizes[rng.Below(std::size(kBlockSizes))];
    cfg.registers = kRegisterCounts[rng.Below(std::size(kRegisterCounts))];
    // Keep registers per block within 64 K so every configuration could launch.
    while (cfg.registers > 32 &&
           ((cfg.registers + 7) / 8 * 8) * 32 * ((cfg.block + 31) / 32) > 65536) {
      cfg.registers /= 2;
    }
    const int smem = kSharedMemorySizes[rng.Below(std::size(kSharedMemorySizes))];
    cfg.grid = 1 + rng.Below(20000);
    cfg.dynamic_smem = smem;
    cfg.static_smem = smem == 0 ? 0 : 256;
    cfg.smem_executed = smem > 0 ? 132 * 1024 : 32 * 1024;
    cfg.smem_limit_config = smem > 49152 ? 1 : 0;
    cfg.local_per_thread = rng.Below(10) == 0 ? 16 : 0;
    cfg.graph = rng.Below(10) == 0 ? 1 + rng.Below(20) : 0;  // a tenth launched from CUDA graphs
    cfg.stream = 7 + static_cast<int64_t>(c) % 4;
  }
  {
    std::string placeholders;
    for (int i = 1; i <= kKernelColumnCount; ++i) {
      placeholders += (i > 1 ? ", ?" : "?") + std::to_string(i);
    }
    OCC_ASSIGN_OR_RETURN(sql::Stmt insert,
                         db.Prepare(std::string("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (") +
                                    kKernelColumns + ") VALUES (" + placeholders + ")"));
    int64_t t = 1'000'000'000;
    const int64_t hot = std::max<int64_t>(1, static_cast<int64_t>(configs.size()) / 50);
    for (int64_t n = 0; n < o.launches; ++n) {
      // A skewed mix: a few configurations take most launches, as in training loops.
      const int64_t pick = rng.Below(1000) < 700 ? rng.Below(hot)
                                                 : rng.Below(static_cast<int64_t>(configs.size()));
      const Config& c = configs[static_cast<size_t>(pick)];
      const int64_t duration = 2'000 + rng.Below(200'000);
      const int64_t threads = c.grid * c.block;
      const std::array<int64_t, kKernelColumnCount> row = {
          t, t + duration, c.device, c.device + 1, /*greenContextId=*/0, c.stream,
          /*correlationId=*/n + 1, /*globalPid=*/4242LL << 24, c.demangled, c.short_name,
          c.mangled, /*launchType=*/0, /*cacheConfig=*/0, c.registers, c.grid, 1, 1, c.block, 1,
          1, c.static_smem, c.dynamic_smem, c.local_per_thread, c.local_per_thread * threads,
          /*gridId=*/n + 1, c.smem_executed, /*graphNodeId=*/c.graph == 0 ? 0 : pick + 1,
          c.smem_limit_config, 0, 0, 0, c.graph, /*clusterX..Z=*/0, 0, 0,
          /*clusterSchedulingPolicy=*/0, /*maxPotentialClusterSize=*/0, /*maxActiveClusters=*/0,
          /*sharedMemoryRequestedPercentage=*/0};
      for (int i = 0; i < kKernelColumnCount; ++i) {
        OCC_RETURN_IF_ERROR(insert.BindInt64(i + 1, row[static_cast<size_t>(i)]));
      }
      OCC_RETURN_IF_ERROR(insert.Run());
      t += duration + rng.Below(5'000);
    }
  }
  return tx.Commit();
}

}  // namespace occ::bench
