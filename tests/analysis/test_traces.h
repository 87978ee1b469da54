// Test inputs built from text SQL at test time: a scratch directory, trace files made from the
// embedded schema plus INSERTs, nsys-export-shaped files, and an in-process occ-report runner.
#pragma once

#include <string>
#include <vector>

namespace occ {
struct ConfigStats;
}

namespace occ::testing {

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

// tests/analysis/<name> as text.
std::string ReadTestFile(const std::string& name);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes);

// The H100 trace of tests/analysis/h100_trace.sql (without the schema).
std::string H100TraceInserts();

// Creates an occtrace trace at `path`: the real schema (schema/trace_schema.sql) then `inserts`.
void MakeOccTrace(const std::string& path, const std::string& inserts);
// Creates an SQLite database at `path` from arbitrary SQL (nsys exports, broken files).
void MakeDb(const std::string& path, const std::string& sql_text);
// The tables of an Nsight Systems export (schema/nsys_export_schema.sql).
std::string NsysSchemaSql();

// Every field of two read-stage rows equal (GoogleTest expectations), floating-point sums
// exactly: for results that must be the same rows however they were read.
void ExpectSameConfig(const ConfigStats& a, const ConfigStats& b);

struct RunResult {
  int code = -1;
  std::string out;
  std::string err;
};
RunResult RunCli(const std::vector<std::string>& args);

}  // namespace occ::testing
