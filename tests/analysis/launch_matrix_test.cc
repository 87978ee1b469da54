// Theoretical occupancy of every configuration of the H100 launch matrix (examples/
// launch_matrix_h100.sql, recorded by libocctrace.so) against the CUDA runtime's own
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, which the program recorded beside each launch on
// the same GPU (examples/launch_matrix_h100.expected.json) -- an independent source. Checked
// twice: on the occtrace trace as recorded, and on the same launches exported the way Nsight
// Systems writes them (no NULLs: 0 where a value is missing, so no carveout request reads as a
// 0 % request), which must not change a single figure.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyzer/analyze/analysis.h"
#include "test_traces.h"

namespace occ {
namespace {

const std::string kExamples = std::string(OCC_ANALYSIS_TEST_DIR) + "/../../examples/";

// Key "<kernel>/<threads per block>/<dynamic smem>" -> blocks per SM, from the runtime.
std::map<std::string, int> RuntimeBlocksPerSm() {
  google::protobuf::Struct expected;
  const auto status = google::protobuf::util::JsonStringToMessage(
      testing::ReadFile(kExamples + "launch_matrix_h100.expected.json"), &expected);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::map<std::string, int> blocks;
  for (const auto& launch : expected.fields().at("launches").list_value().values()) {
    const auto& f = launch.struct_value().fields();
    int threads = 1;
    for (const auto& d : f.at("block").list_value().values()) threads *= static_cast<int>(d.number_value());
    const std::string key = f.at("key").string_value() + "/" + std::to_string(threads) + "/" +
                            std::to_string(static_cast<int>(f.at("dynamicSmem").number_value()));
    blocks[key] = static_cast<int>(f.at("blocksPerSm").number_value());
  }
  return blocks;
}

// The launch matrix's kernels are occgpu::<key>(...); the driver-API ones are extern "C".
std::string KeyOf(const occtrace::KernelGroup& g) {
  const int threads = g.block_x() * g.block_y() * g.block_z();
  return g.short_name() + "/" + std::to_string(threads) + "/" + std::to_string(g.dynamic_shared_mem());
}

void ExpectRuntimeBlocks(const std::string& path, const std::map<std::string, int>& runtime) {
  ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = BuildReport(options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  int compared = 0;
  for (const auto& g : report->groups()) {
    auto it = runtime.find(KeyOf(g));
    if (it == runtime.end()) continue;
    ++compared;
    EXPECT_EQ(g.occupancy().active_blocks_per_sm(), it->second)
        << path << ": " << KeyOf(g) << ", executed carveout " << g.shared_mem_executed();
  }
  EXPECT_GE(compared, 19) << path << ": configurations matched to the runtime's list";
}

TEST(LaunchMatrix, TheoreticalBlocksPerSmEqualTheCudaRuntimesInTraceAndNsysExport) {
  testing::ScratchDir dir;
  const std::map<std::string, int> runtime = RuntimeBlocksPerSm();
  ASSERT_GE(runtime.size(), 19u);

  const std::string trace = dir.Path("launch_matrix.db");
  testing::MakeDb(trace, testing::ReadFile(kExamples + "launch_matrix_h100.sql"));
  ExpectRuntimeBlocks(trace, runtime);

  const std::string exported = dir.Path("launch_matrix_nsys.sqlite");
  testing::MakeDb(exported, testing::NsysSchemaSql() + "ATTACH '" + trace + R"sql(' AS occ;
INSERT INTO StringIds SELECT id, value FROM occ.StringIds;
INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock,
  maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp,
  maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock)
  SELECT id, name, smCount, computeMajor, computeMinor, maxShmemPerBlock, maxShmemPerBlockOptin,
    maxShmemPerSm, maxRegistersPerSm, maxRegistersPerBlock, threadsPerWarp, maxWarpsPerSm,
    maxBlocksPerSm, maxThreadsPerBlock FROM occ.TARGET_INFO_GPU;
INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors)
  SELECT gpuId, cudaId, pid, uuid, numMultiprocessors FROM occ.TARGET_INFO_CUDA_DEVICE;
-- The exporter's defaults for what CUPTI left unset: 0, never NULL.
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, "end", deviceId, contextId, streamId, correlationId,
  globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread,
  gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
  localMemoryPerThread, localMemoryTotal, sharedMemoryExecuted, graphNodeId,
  sharedMemoryLimitConfig, graphId, clusterX, clusterY, clusterZ, sharedMemoryRequestedPercentage)
  SELECT start, "end", deviceId, contextId, streamId, correlationId, coalesce(globalPid, 0),
    demangledName, shortName, mangledName, coalesce(launchType, 0), coalesce(cacheConfig, 0),
    registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory,
    dynamicSharedMemory, localMemoryPerThread, coalesce(localMemoryTotal, 0),
    coalesce(sharedMemoryExecuted, 0), coalesce(graphNodeId, 0), coalesce(sharedMemoryLimitConfig, 0),
    coalesce(graphId, 0), coalesce(clusterX, 0), coalesce(clusterY, 0), coalesce(clusterZ, 0),
    coalesce(sharedMemoryRequestedPercentage, 0)
  FROM occ.CUPTI_ACTIVITY_KIND_KERNEL;
DETACH occ;
)sql");
  ExpectRuntimeBlocks(exported, runtime);
}

}  // namespace
}  // namespace occ
