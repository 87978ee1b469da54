// A synthetic occtrace trace in the real schema (schema/trace_schema.sql) for scale benchmarks
// and fuzz seeds: `configs` launch configurations of a mix of kernels on `devices` H100s,
// `launches` launch rows in time order with configurations interleaved, and achieved samples
// for the first three launches of every configuration.
#pragma once

#include <cstdint>
#include <string>

#include "status.h"

namespace occ::bench {

struct TraceGenOptions {
  int64_t launches = 10'000'000;
  int configs = 5'000;
  int devices = 2;
  int achieved_samples_per_config = 3;
  uint64_t seed = 42;
};

Status GenerateTrace(const std::string& path, const TraceGenOptions& options);

}  // namespace occ::bench
