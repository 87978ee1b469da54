// A synthetic occtrace trace in the real schema (schema/trace_schema.sql) for scale benchmarks
// and fuzz seeds: `configs` launch configurations of a mix of kernels on `devices` H100s,
// `launches` launch rows in time order with configurations interleaved, and achieved samples
// for the first three launches of every configuration; optionally a rank's identity and NCCL
// kernels among the others.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace occ::bench {

struct TraceGenOptions {
  int64_t launches = 10'000'000;
  int configs = 5'000;
  int devices = 2;
  int achieved_samples_per_config = 3;
  uint64_t seed = 42;
  // Seeds the launches (order, durations) apart from the configurations; 0 = `seed` for both.
  // The ranks of a data-parallel job run the same configurations with their own timings.
  uint64_t launch_seed = 0;
  // A rank of a distributed job: OCC_META rank rows as the tracer writes them under torchrun
  // (rank, local_rank, world_size, local_world_size, rank_source); < 0 writes none.
  int rank = -1;
  int world_size = 0;
  // Every `nccl_every`-th kernel is an NCCL collective (ncclDevKernel_...); 0 = none.
  int nccl_every = 0;
};

Status GenerateTrace(const std::string& path, const TraceGenOptions& options);

}  // namespace occ::bench
