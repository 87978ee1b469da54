#include "test_traces.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kTraceSchemaSql.h"
#include "occ_report.h"
#include "sqlite_db.h"

namespace occ::testing {

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/occ_analysis_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  char* made = mkdtemp(buffer.data());
  if (made == nullptr) ADD_FAILURE() << "mkdtemp failed";
  dir_ = made ? made : "/tmp";
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string ReadTestFile(const std::string& name) {
  return ReadFile(std::string(OCC_ANALYSIS_TEST_DIR) + "/" + name);
}

std::string H100TraceInserts() { return ReadTestFile("h100_trace.sql"); }

void MakeDb(const std::string& path, const std::string& sql_text) {
  auto db = sql::Db::Create(path, /*replace=*/true);
  ASSERT_TRUE(db.ok()) << db.status().message();
  // Test inputs need no durability: skip the fsync per statement.
  Status status = db->Exec("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;\n" + sql_text);
  ASSERT_TRUE(status.ok()) << status.message();
}

void MakeOccTrace(const std::string& path, const std::string& inserts) {
  MakeDb(path, std::string(kTraceSchemaSql) + "\n" + inserts);
}

std::string NsysSchemaSql() {
  return R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER PRIMARY KEY, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER,
  clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT,
  cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER,
  constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER,
  maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,
  threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,
  maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER,
  maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,
  computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER, numaNodeId INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER NOT NULL, cudaId INTEGER NOT NULL,
  pid INTEGER, uuid TEXT, numMultiprocessors INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER,
  qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER,
  clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER,
  maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,
  sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT);
)sql";
}

RunResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  RunResult r;
  r.code = RunOccReport(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace occ::testing
