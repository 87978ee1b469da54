// Occupancy curves: the theoretical occupancy of a launch as one input varies (threads per
// block, registers per thread, shared memory per block), the others held as recorded. Takes a
// device and a launch; gives the points that calc prints and the report plots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/occupancy.h"
#include "base/status.h"

namespace occ {

// One point of an occupancy curve: everything but `x` as in the launch.
struct CurvePoint {
  int x = 0;                      // threads per block, registers per thread, or user smem bytes
  int active_blocks_per_sm = 0;
  int active_warps_per_sm = 0;
  double occupancy_pct = 0;
  uint32_t limiting_factors = 0;  // LimitingFactor bits as cuda_occupancy.h sets them
};

struct Curve {
  std::string x_label;            // "threads per block", "registers per thread", ...
  std::vector<CurvePoint> points; // ascending x
  std::string assumptions;        // what was held fixed
};

// Occupancy for every block size that is a multiple of the warp size, up to
// min(device max threads per block, launch.func_max_threads_per_block); registers per thread
// and shared memory per block held as in `launch`.
StatusOr<Curve> BlockSizeCurve(const DeviceProps& device, const LaunchParams& launch);
// Occupancy for registers per thread 8, 16, ..., 248, 255 (ncu's "Impact of Varying Register
// Count Per Thread"); block size and shared memory as in `launch`.
StatusOr<Curve> RegisterCurve(const DeviceProps& device, const LaunchParams& launch);
// Occupancy for user shared memory per block (static + dynamic) from 0 to the per-block limit
// (the opt-in limit when the launch opted in): the first point, each first size with a new block
// count, and the limit itself; block size and registers as in `launch`.
StatusOr<Curve> SharedMemCurve(const DeviceProps& device, const LaunchParams& launch);

}  // namespace occ
