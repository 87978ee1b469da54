// libFuzzer target: the input bytes are a torch.profiler trace (.json). Garbage, truncated and
// hostile JSON (deep nesting, huge numbers, wrong types, NaN) must give a Status, never a crash,
// leak, hang or UB; what is read must then survive the analysis and the timeline export.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/analyze/analysis.h"
#include "analyzer/cli/timeline_export.h"

namespace {

std::string Scratch(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/occ_fuzz_torch_" + std::to_string(getpid()) + suffix;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = Scratch(".json");
  static const std::string out = Scratch(".timeline.json");
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  occ::ReportOptions options;
  options.inputs = {path};
  options.top = 0;
  auto report = occ::BuildReport(options);
  if (report.ok()) {
    auto exported = occ::ExportTimeline({path}, out, "", /*force=*/true);
    (void)exported;
    std::remove(out.c_str());
  }
  std::remove(path.c_str());
  return 0;
}
