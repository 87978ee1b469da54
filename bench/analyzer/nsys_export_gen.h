// A synthetic Nsight Systems SQLite export (schema/nsys_export_schema.sql) for scale benchmarks:
// `launches` CUPTI_ACTIVITY_KIND_KERNEL rows of `configs` launch configurations of a mix of
// kernels on `devices` H100s, in increasing start order with configurations interleaved, every
// column filled as the exporter fills it (0, its default, where a launch has no value; names
// as StringIds ids), plus the TARGET_INFO_GPU / TARGET_INFO_CUDA_DEVICE rows the report needs to
// judge them.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace occ::bench {

struct NsysExportGenOptions {
  int64_t launches = 10'000'000;
  int configs = 5'000;
  int devices = 2;
  uint64_t seed = 42;
};

Status GenerateNsysExport(const std::string& path, const NsysExportGenOptions& options);

}  // namespace occ::bench
