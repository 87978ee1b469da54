// libFuzzer target: the input bytes are an occtrace trace or nsys export file. Whatever they
// hold, the reader and the analysis must return a Status, never crash, leak or hit UB.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "analyzer/analyze/analysis.h"
#include "analyzer/read/registry/input_formats.h"

namespace {

std::string ScratchPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/occ_fuzz_" + std::to_string(getpid()) +
           ".db";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ScratchPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);

  occ::ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = occ::BuildReport(options);
  (void)report;

  auto input = occ::OpenInput(path, 0);
  if (input.ok() && (*input)->AsTrace() != nullptr) {
    std::vector<occ::ConfigStats> configs;
    size_t rows = 0;
    occ::Status status = (*input)->AsTrace()->ForEachLaunch(
        "", 50, &configs, [&](const occ::LaunchRow& row) -> occ::Status {
          if (row.config >= configs.size()) __builtin_trap();  // an index the caller cannot use
          ++rows;
          return occ::OkStatus();
        });
    (void)status;
  }
  std::remove(path.c_str());
  return 0;
}
