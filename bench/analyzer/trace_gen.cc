#include "trace_gen.h"

#include <algorithm>
#include <array>
#include <vector>

#include "synthetic_inputs.h"
#include "kTraceSchemaSql.h"
#include "sqlite/sqlite_db.h"

namespace occ::bench {

Status GenerateTrace(const std::string& path, const TraceGenOptions& o) {
  OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::Create(path, /*replace=*/true));
  // Bulk load: no journal, no fsync; the file is a benchmark input, rebuilt if interrupted.
  OCC_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"));
  OCC_RETURN_IF_ERROR(db.Exec(kTraceSchemaSql));
  OCC_ASSIGN_OR_RETURN(sql::Transaction tx, sql::Transaction::Begin(db));
  OCC_RETURN_IF_ERROR(db.Exec(
      "INSERT INTO OCC_META VALUES ('schema_version', '1'), ('pid', '1'), ('host', 'bench'), "
      "('command_line', 'synthetic'), ('occtrace_version', 'bench'), ('achieved_mode', 'sample');"));
  if (o.rank >= 0) {
    const std::string local_world = std::to_string(std::min(8, std::max(1, o.world_size)));
    OCC_RETURN_IF_ERROR(db.Exec(
        "INSERT INTO OCC_META VALUES ('rank', '" + std::to_string(o.rank) + "'), ('local_rank', '" +
        std::to_string(o.rank % 8) + "'), ('world_size', '" + std::to_string(o.world_size) +
        "'), ('local_world_size', '" + local_world + "'), ('rank_source', 'torchrun');"));
  }
  for (int d = 0; d < o.devices; ++d) {
    std::string id = std::to_string(d);
    OCC_RETURN_IF_ERROR(db.Exec(
        "INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, "
        "maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, "
        "maxRegistersPerBlock, threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock) "
        "VALUES (" + id + ", 'NVIDIA H100 80GB HBM3', 132, 9, 0, 49152, 232448, 233472, 65536, "
        "65536, 32, 64, 32, 1024);"
        "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (" + id + ", " + id + ", 1, 'GPU-" + id +
        "', 132);"
        "INSERT INTO OCC_DEVICE VALUES (" + id + ", 1024, 2048, 0, NULL, NULL, 13000);"));
  }
  Rng rng{o.seed};
  const int kernels = std::max(1, o.configs / 10);  // ~10 configurations per kernel
  {
    OCC_ASSIGN_OR_RETURN(sql::Stmt s, db.Prepare("INSERT INTO StringIds VALUES (?1, ?2)"));
    for (int k = 0; k < kernels; ++k) {
      static const char* kCollectives[] = {"AllReduce_Sum_f32_RING_LL", "AllGather_RING_LL",
                                           "ReduceScatter_Sum_bf16_RING_LL128"};
      const bool nccl = o.nccl_every > 0 && k % o.nccl_every == 0;
      std::string base = nccl ? "ncclDevKernel_" + std::string(kCollectives[k % 3]) + "_" +
                                    std::to_string(k)
                              : "kernel_" + std::to_string(k);
      const std::array<std::string, 3> names = KernelNameForms(base);
      for (int i = 0; i < 3; ++i) {
        OCC_RETURN_IF_ERROR(s.BindInt64(1, k * 3 + i + 1));
        OCC_RETURN_IF_ERROR(s.BindText(2, names[static_cast<size_t>(i)]));
        OCC_RETURN_IF_ERROR(s.Run());
      }
    }
  }
  {
    OCC_ASSIGN_OR_RETURN(
        sql::Stmt s,
        db.Prepare("INSERT INTO OCC_KERNEL_CONFIG VALUES (?1, ?2, 1, NULL, ?3, ?4, ?5, 0, 0, ?6, "
                   "?7, 1, 1, ?8, 1, 1, 0, ?9, 0, 0, ?10, ?11, NULL, 0, 0, 1, 1, 1, 0, 0, 0, 0)"));
    for (int c = 0; c < o.configs; ++c) {
      int k = c % kernels;
      int block = kBlockSizes[rng.Below(std::size(kBlockSizes))];
      int regs = kRegisterCounts[rng.Below(std::size(kRegisterCounts))];
      // Keep registers per block within 64 K so every configuration could launch.
      while (regs > 32 && ((regs + 7) / 8 * 8) * 32 * ((block + 31) / 32) > 65536) regs /= 2;
      int smem = kSharedMemorySizes[rng.Below(std::size(kSharedMemorySizes))];
      int64_t grid = 1 + rng.Below(20000);
      int i = 1;
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, c + 1));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, c % o.devices));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, k * 3 + 1));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, k * 3 + 2));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, k * 3 + 3));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, regs));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, grid));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, block));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, smem));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, smem > 0 ? 132 * 1024 : 32 * 1024));
      OCC_RETURN_IF_ERROR(s.BindInt64(i++, smem > 49152 ? 1 : 0));
      OCC_RETURN_IF_ERROR(s.Run());
    }
  }
  {
    OCC_ASSIGN_OR_RETURN(sql::Stmt launch,
                         db.Prepare("INSERT INTO OCC_LAUNCH VALUES (?1, ?2, ?3, ?4, ?5)"));
    OCC_ASSIGN_OR_RETURN(
        sql::Stmt achieved,
        db.Prepare("INSERT INTO OCC_ACHIEVED(correlationId,contextId,status,achievedOccupancyPct,warpsActivePerCycle,smCyclesActive,gpuTimeNs,policy,sampleIndex) VALUES (?1, 1, 'measured', ?2, ?3, 1000, ?4, "
                   "'sample', ?5)"));
    std::vector<int> samples(static_cast<size_t>(o.configs), 0);
    if (o.launch_seed != 0) rng = Rng{o.launch_seed};
    int64_t t = 1'000'000;
    for (int64_t n = 0; n < o.launches; ++n) {
      // A skewed mix: a few configurations take most launches, as in training loops.
      int64_t r = rng.Below(1000);
      int64_t config = r < 700 ? rng.Below(std::max(1, o.configs / 50)) : rng.Below(o.configs);
      int64_t duration = 2'000 + rng.Below(200'000);
      int64_t corr = n + 1;
      OCC_RETURN_IF_ERROR(launch.BindInt64(1, t));
      OCC_RETURN_IF_ERROR(launch.BindInt64(2, duration));
      OCC_RETURN_IF_ERROR(launch.BindInt64(3, config + 1));
      OCC_RETURN_IF_ERROR(launch.BindInt64(4, 7 + (config % 4)));
      OCC_RETURN_IF_ERROR(launch.BindInt64(5, corr));
      OCC_RETURN_IF_ERROR(launch.Run());
      int& taken = samples[static_cast<size_t>(config)];
      if (taken < o.achieved_samples_per_config) {
        OCC_RETURN_IF_ERROR(achieved.BindInt64(1, corr));
        OCC_RETURN_IF_ERROR(achieved.BindDouble(2, 10.0 + static_cast<double>(rng.Below(8000)) / 100.0));
        OCC_RETURN_IF_ERROR(achieved.BindDouble(3, 8.0));
        OCC_RETURN_IF_ERROR(achieved.BindDouble(4, static_cast<double>(duration)));
        OCC_RETURN_IF_ERROR(achieved.BindInt64(5, taken));
        OCC_RETURN_IF_ERROR(achieved.Run());
        ++taken;
      }
      t += duration + rng.Below(5'000);
    }
  }
  return tx.Commit();
}

}  // namespace occ::bench
