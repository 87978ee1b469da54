// occ_fuzz_seeds DIR: writes the fuzzer's seed corpus — small valid inputs of every kind the
// reader accepts, with 512-byte pages so that mutations hit structure rather than padding.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "kTraceSchemaSql.h"
#include "sqlite/sqlite_db.h"

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Write(const std::string& path, const std::string& sql_text) {
  auto db = occ::sql::Db::Create(path, true);
  if (!db.ok()) return false;
  occ::Status status = db->Exec("PRAGMA page_size = 512;" + sql_text);
  if (!status.ok()) {
    std::fprintf(stderr, "occ_fuzz_seeds: %s\n", status.message().c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: occ_fuzz_seeds DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string h100 = ReadText(std::string(OCC_ANALYSIS_TEST_DIR) + "/h100_trace.sql");
  std::string schema(kTraceSchemaSql);
  bool ok = Write(dir + "/h100_trace.db", schema + h100);
  ok &= Write(dir + "/no_device.db", schema + h100 + "DELETE FROM TARGET_INFO_GPU;");
  ok &= Write(dir + "/absurd.db", schema + h100 +
                                      "UPDATE OCC_KERNEL_CONFIG SET gridX = 0 WHERE id = 1;"
                                      "UPDATE OCC_KERNEL_CONFIG SET registersPerThread = 1000 "
                                      "WHERE id = 2; UPDATE OCC_LAUNCH SET duration = -5 WHERE "
                                      "correlationId = 3;");
  ok &= Write(dir + "/nsys.sqlite",
              "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
              "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
              "CREATE TABLE TARGET_INFO_GPU (id INTEGER PRIMARY KEY, name TEXT, smCount INTEGER,"
              " computeMajor INTEGER, computeMinor INTEGER, maxShmemPerBlockOptin INTEGER,"
              " maxShmemPerSm INTEGER);"
              "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER,"
              " uuid TEXT, numMultiprocessors INTEGER);"
              "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER,"
              " deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,"
              " demangledName INTEGER, shortName INTEGER, registersPerThread INTEGER,"
              " gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
              " blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,"
              " localMemoryPerThread INTEGER, sharedMemoryExecuted INTEGER,"
              " sharedMemoryLimitConfig INTEGER, clusterX INTEGER);"
              "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');"
              "INSERT INTO StringIds VALUES (1, 'k(int)'), (2, 'k');"
              "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0, 232448,"
              " 233472);"
              "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 1, 'g', 132);"
              "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 110, 0, 1, 7, 1, 1, 2, 36,"
              " 1000, 1, 1, 96, 1, 1, 0, 0, 0, 32768, 0, 0), (200, 150, 0, 1, 7, 2, 1, 2, 64,"
              " 4, 1, 1, 1024, 1, 1, 4096, 60000, 16, 132000, 1, 2);");
  return ok ? 0 : 1;
}
