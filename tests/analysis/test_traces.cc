#include "test_traces.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kNsysExportSchemaSql.h"
#include "kTraceSchemaSql.h"
#include "analyzer/cli/occ_report.h"
#include "sqlite/sqlite_db.h"
#include "analyzer/read/trace_rows.h"

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

std::string NsysSchemaSql() { return std::string(kNsysExportSchemaSql); }

RunResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  RunResult r;
  r.code = RunOccReport(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

void ExpectSameConfig(const ConfigStats& a, const ConfigStats& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.file_index, b.file_index);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.context_id, b.context_id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.short_name, b.short_name);
  EXPECT_EQ(a.mangled_name, b.mangled_name);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.grid[i], b.grid[i]);
    EXPECT_EQ(a.block[i], b.block[i]);
    EXPECT_EQ(a.cluster[i], b.cluster[i]);
  }
  EXPECT_EQ(a.registers_per_thread, b.registers_per_thread);
  EXPECT_EQ(a.registers_known, b.registers_known);
  EXPECT_EQ(a.static_smem, b.static_smem);
  EXPECT_EQ(a.dynamic_smem, b.dynamic_smem);
  EXPECT_EQ(a.local_mem_per_thread, b.local_mem_per_thread);
  EXPECT_EQ(a.smem_executed, b.smem_executed);
  EXPECT_EQ(a.smem_limit_config, b.smem_limit_config);
  EXPECT_EQ(a.carveout_pct, b.carveout_pct);
  EXPECT_EQ(a.cache_config, b.cache_config);
  EXPECT_EQ(a.graph_id, b.graph_id);
  EXPECT_EQ(a.barrier_count, b.barrier_count);
  EXPECT_EQ(a.func_max_threads, b.func_max_threads);
  EXPECT_EQ(a.triton_num_warps, b.triton_num_warps);
  EXPECT_EQ(a.triton_num_stages, b.triton_num_stages);
  EXPECT_EQ(a.matched, b.matched);
  EXPECT_EQ(a.launches, b.launches);
  EXPECT_EQ(a.untimed_launches, b.untimed_launches);
  EXPECT_EQ(a.total_ns, b.total_ns);
  EXPECT_EQ(a.min_ns, b.min_ns);
  EXPECT_EQ(a.max_ns, b.max_ns);
  EXPECT_EQ(a.achieved_samples, b.achieved_samples);
  EXPECT_EQ(a.achieved_sum, b.achieved_sum);
  EXPECT_EQ(a.achieved_min, b.achieved_min);
  EXPECT_EQ(a.achieved_max, b.achieved_max);
  EXPECT_EQ(a.achieved_not_measured, b.achieved_not_measured);
  EXPECT_EQ(a.not_measured_reasons, b.not_measured_reasons);
  for (int i = 0; i < kThroughputUnits; ++i) {
    EXPECT_EQ(a.throughput.sum[i], b.throughput.sum[i]);
    EXPECT_EQ(a.throughput.samples[i], b.throughput.samples[i]);
  }
  EXPECT_EQ(a.throughput.launches, b.throughput.launches);
  EXPECT_EQ(a.time_estimated, b.time_estimated);
  EXPECT_EQ(a.estimate_samples, b.estimate_samples);
  EXPECT_EQ(a.estimate_variance, b.estimate_variance);
  EXPECT_EQ(a.overlap.launches, b.overlap.launches);
  EXPECT_EQ(a.overlap.launch_ns, b.overlap.launch_ns);
  EXPECT_EQ(a.overlap.overlapped_ns, b.overlap.overlapped_ns);
  EXPECT_EQ(a.overlap.solo_launches, b.overlap.solo_launches);
  EXPECT_EQ(a.overlap.solo_ns, b.overlap.solo_ns);
  EXPECT_EQ(a.overlap.streams, b.overlap.streams);
  EXPECT_EQ(a.overlap.more_streams, b.overlap.more_streams);
}

}  // namespace occ::testing
