// Launch-configuration advice on top of the occupancy model: occupancy curves, waves and tail,
// the block size for a fixed amount of work, the register cap and the shared-memory budget that
// reach the next occupancy step, and the limiter sentence. Formulas: docs/occupancy.md
// ("Advice") and occupancy-model.md §10. Every result states what it assumes; no advice ever
// echoes the current configuration (it says "no better option" instead).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "occupancy.h"
#include "status.h"

namespace occtrace {
class Suggestion;
}

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

// Waves of a grid on the GPU (Nsight Compute's Waves Per SM and tail-effect rule).
struct Waves {
  int64_t grid_blocks = 0;
  int64_t blocks_per_wave = 0;    // active blocks per SM x SMs; 0 = the launch cannot run
  double waves_per_sm = 0;        // grid / blocks_per_wave (ncu launch__waves_per_multiprocessor)
  int64_t full_waves = 0;         // F
  int64_t tail_blocks = 0;        // P = grid - F x blocks_per_wave (exact, unlike ncu's rounding)
  double tail_pct = 0;            // up to this share of the runtime is the tail: 100 / (1 + F); 0 if P = 0
  double wave_efficiency = 0;     // waves / ceil(waves): 1 = no partial wave
  bool grid_below_sm_count = false;  // fewer blocks than SMs: some SMs stay idle
};
Waves ComputeWaves(int64_t grid_blocks, int active_blocks_per_sm, int num_sms);
// "3 full waves and a partial wave of 96 blocks: the tail can be up to 25% of the runtime", or
// "" when there is no partial wave after a full one.
std::string TailSentence(const Waves& waves);

// A suggestion, with what it predicts and assumes (mirrors occtrace.Suggestion in report.proto).
struct Suggestion {
  std::string kind;                   // "block_size", "register_cap", "shared_memory", "barriers", "grid_size"
  std::string text;                   // one sentence with the numbers
  double predicted_occupancy_pct = 0;
  int predicted_blocks_per_sm = 0;
  double predicted_waves_per_sm = 0;  // 0 when the grid is unknown
  int block_size = 0;                 // block_size / grid_size suggestions
  int registers_per_thread = 0;       // register_cap suggestions: the cap
  int shared_mem_per_block = 0;       // shared_memory suggestions: user bytes per block (static + dynamic)
  std::string assumptions;
};

// The same suggestion as the occtrace.Suggestion message that reports and calc JSON carry.
void ToProto(const Suggestion& suggestion, occtrace::Suggestion* out);

// --- Block size with the total work fixed (T = grid x block threads) -------------------------
struct BlockSizeCandidate {
  int block_size = 0;
  int64_t grid_blocks = 0;            // ceil(T / block_size)
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
  uint32_t limiting_factors = 0;
  Waves waves;
  double warp_waste_pct = 0;          // idle lanes: 1 - b / (32 x ceil(b / 32)), in %
};
struct BlockSizeAdvice {
  BlockSizeCandidate current;
  std::vector<BlockSizeCandidate> ranked;  // every candidate, best first (current included)
  std::optional<Suggestion> suggestion;    // empty: no better option than the current block
  std::string verdict;                     // the suggestion's text, or "no better option: ..."
  std::string assumptions;
};
// grid_blocks <= 0: the grid is unknown; candidates are ranked by occupancy and warp waste only.
StatusOr<BlockSizeAdvice> AdviseBlockSize(const DeviceProps& device, const LaunchParams& launch,
                                          int64_t grid_blocks);

// --- Register cap (__launch_bounds__(B, N) / __maxnreg__ / -maxrregcount) ---------------------
struct RegisterStep {
  int max_registers_per_thread = 0;   // the largest register count reaching this step
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
};
struct RegisterAdvice {
  int registers_per_thread = 0;
  int allocated_registers_per_thread = 0;
  int active_blocks_per_sm = 0;
  std::vector<RegisterStep> steps;    // each higher block count reachable by capping registers alone
  int headroom_registers = 0;         // registers/thread usable without losing a block (>= current)
  bool spill_warning = false;         // the kernel already uses local memory
  std::optional<Suggestion> suggestion;  // the next step, empty if registers do not limit
  std::string verdict;
};
StatusOr<RegisterAdvice> AdviseRegisterCap(const DeviceProps& device, const LaunchParams& launch,
                                           int local_memory_per_thread);

// --- Shared-memory budget per block ----------------------------------------------------------
struct SharedMemStep {
  int active_blocks_per_sm = 0;
  double occupancy_pct = 0;
  int max_user_smem_per_block = 0;    // static + dynamic bytes (the driver reserve subtracted)
  int carveout_bytes = 0;             // smallest supported carveout holding that many blocks
};
struct SharedMemAdvice {
  int user_smem_per_block = 0;        // static + dynamic
  int allocated_smem_per_block = 0;   // with reserve and granularity
  int active_blocks_per_sm = 0;
  std::vector<SharedMemStep> steps;   // each higher block count reachable by using less smem
  int headroom_bytes = 0;             // user smem per block that can be added without losing a block
  bool carveout_preference_caps = false;  // a requested carveout, not the hardware, limits
  std::optional<Suggestion> suggestion;
  std::string verdict;
};
StatusOr<SharedMemAdvice> AdviseSharedMemory(const DeviceProps& device, const LaunchParams& launch);

// --- Limiters in words ----------------------------------------------------------------------
// The limiters recomputed from the block limits (the minimum, ties included; barriers only when
// they bind), unlike the header's bitfield, which keeps WARPS when barriers lower the result.
uint32_t RealLimiters(const OccupancyResult& result);
// One name for grouping ("registers", "shared_memory", "warps", "blocks", "barriers",
// "virtual", "none" at 100 %, "cannot_run"). Ties prefer what the user can change:
// registers, shared_memory, barriers, warps, blocks.
std::string PrimaryLimiter(const OccupancyResult& result);
// "limited by registers: 44 regs/thread x 256 threads -> 5 blocks/SM (of 32)"; ties joined
// with "and"; "cannot run: ..." when no block fits.
std::string LimiterSentence(const DeviceProps& device, const LaunchParams& launch,
                            const OccupancyResult& result);

// --- Everything at once (calc, report) -------------------------------------------------------
struct AdviceInputs {
  int64_t grid_blocks = 0;            // 0 = unknown
  int local_memory_per_thread = 0;    // > 0: spills or stack; register caps get a warning
  bool barrier_count_known = true;    // false: add the "barrier count unknown" note
};
struct LaunchAdvice {
  OccupancyResult occupancy;
  std::string limiter_sentence;
  std::string primary_limiter;
  std::optional<Waves> waves;          // when the grid is known
  BlockSizeAdvice block_size;
  RegisterAdvice registers;
  SharedMemAdvice shared_memory;
  std::vector<Suggestion> suggestions; // best first; never the current configuration
  std::vector<std::string> notes;      // caveats (tail, small grid, unknown barriers, spills)
};
StatusOr<LaunchAdvice> AdviseLaunch(const DeviceProps& device, const LaunchParams& launch,
                                    const AdviceInputs& inputs);

}  // namespace occ
