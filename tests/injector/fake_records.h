// Builders for real CUPTI 13.0 activity records, laid out in a buffer exactly as CUPTI
// delivers them (records back to back, 8-byte aligned), as libkineto's tests do.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "injector/writer/activity_records.h"
#include "sqlite/sqlite_db.h"

namespace occ::inj::testing {

inline ActivityKernel MakeKernel(const char* mangled_name, uint32_t correlation_id, uint64_t start,
                                 uint64_t end) {
  ActivityKernel k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = mangled_name;
  k.correlationId = correlation_id;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.gridX = 132; k.gridY = 1; k.gridZ = 1;
  k.blockX = 256; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 0;
  k.sharedMemoryExecuted = 102400;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  k.cacheConfig.config.requested = 1;
  k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  k.clusterX = 1; k.clusterY = 1; k.clusterZ = 1;
  return k;
}

inline ActivityDevice MakeH100Device(uint32_t id) {
  // Values of an H100 80GB HBM3 as CUPTI reports them.
  ActivityDevice d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = id;
  d.name = "NVIDIA H100 80GB HBM3";
  d.numMultiprocessors = 132;
  d.numThreadsPerWarp = 32;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxBlocksPerMultiprocessor = 32;
  d.maxRegistersPerMultiprocessor = 65536;
  d.maxRegistersPerBlock = 65536;
  d.maxSharedMemoryPerMultiprocessor = 233472;
  d.maxSharedMemoryPerBlock = 49152;
  d.maxThreadsPerBlock = 1024;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.coreClockRate = 1980000;  // kHz
  d.globalMemorySize = 85520809984ull;
  d.globalMemoryBandwidth = 3352320000ull;  // KB/s
  d.l2CacheSize = 52428800;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i + 1);
  d.isMigEnabled = 0;
  d.gpuInstanceId = 0xFFFFFFFFu;  // as CUPTI reports them without MIG (H100, driver 580)
  d.computeInstanceId = 0xFFFFFFFFu;
  return d;
}

// An 8-byte aligned buffer of records, owned (free()) unless handed over with release().
class FakeActivityBuffer {
 public:
  explicit FakeActivityBuffer(size_t capacity = 1 << 20)
      : data_(static_cast<uint8_t*>(std::aligned_alloc(8, capacity))), capacity_(capacity) {}
  FakeActivityBuffer(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity), owned_(false) {}
  ~FakeActivityBuffer() {
    if (owned_) std::free(data_);
  }
  FakeActivityBuffer(const FakeActivityBuffer&) = delete;
  FakeActivityBuffer& operator=(const FakeActivityBuffer&) = delete;

  template <typename Record>
  bool Add(const Record& record) {
    static_assert(sizeof(Record) % 8 == 0);
    if (size_ + sizeof(Record) > capacity_) return false;
    std::memcpy(data_ + size_, &record, sizeof(Record));
    size_ += sizeof(Record);
    return true;
  }
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool owned_ = true;
};

// Reads a trace with a separate connection, as occ-report would.
class TraceReader {
 public:
  explicit TraceReader(const std::string& path) : db_(sql::Db::OpenReadOnly(path)) {}

  // First column of the first row as text ("<null>" / "<no row>" / "<error: ...>").
  std::string Text(const std::string& sql) const {
    if (!db_.ok()) return "<error: " + db_.status().message() + ">";
    StatusOr<sql::Stmt> stmt = db_->Prepare(sql);
    if (!stmt.ok()) return "<error: " + stmt.status().message() + ">";
    StatusOr<bool> row = stmt->Step();
    if (!row.ok()) return "<error: " + row.status().message() + ">";
    if (!*row) return "<no row>";
    return stmt->IsNull(0) ? "<null>" : stmt->Text(0);
  }
  int64_t Int(const std::string& sql) const { return std::strtoll(Text(sql).c_str(), nullptr, 10); }
  std::string Meta(const std::string& name) const {
    return Text("SELECT value FROM OCC_META WHERE name='" + name + "'");
  }

 private:
  StatusOr<sql::Db> db_;
};

inline std::string TempPath(const std::string& stem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/occtrace-test-" + stem + "-" +
                     std::to_string(::getpid()) + ".db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  return path;
}

}  // namespace occ::inj::testing
