#include "advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include "arch_table.h"
#include "message_text.h"
#include "schema/report.pb.h"

namespace occ {
namespace {

using i64 = int64_t;

i64 CeilDiv(i64 a, i64 b) { return (a + b - 1) / b; }

StatusOr<OccupancyResult> At(const DeviceProps& d, const LaunchParams& l) {
  return ComputeOccupancyUnchecked(d, l);
}

int BlockSizeLimit(const DeviceProps& d, const LaunchParams& l) {
  return std::min(d.max_threads_per_block, l.func_max_threads_per_block);
}

std::string HeldFixed(const LaunchParams& l) {
  return std::to_string(l.regs_per_thread) + " registers/thread and " +
         FormatBytes(static_cast<i64>(l.static_smem) + l.dynamic_smem) +
         " of shared memory per block unchanged";
}

// A changed launch for what-if advice: the executed carveout belongs to the launch as it ran
// (the driver picks the carveout per launch from its needs and preference), so a different
// configuration is modelled with the carveout the driver would pick, i.e. from the preference.
LaunchParams WhatIf(const LaunchParams& l) {
  LaunchParams t = l;
  t.executed_smem_config = 0;
  return t;
}

// The largest user shared memory (static + dynamic) per block, and the launch that uses `user`
// bytes of it with the launch's static part kept where possible.
LaunchParams WithUserSmem(const DeviceProps& d, const LaunchParams& l, int user) {
  LaunchParams t = WhatIf(l);
  t.static_smem = std::min(l.static_smem, user);
  t.dynamic_smem = user - t.static_smem;
  if (t.shmem_limit_config == ShmemLimitConfig::kOptIn) {
    t.max_dynamic_smem = std::max(t.max_dynamic_smem, std::max(0, d.smem_per_block_optin - t.static_smem));
  }
  return t;
}

int MaxUserSmem(const DeviceProps& d, const LaunchParams& l, const ArchConstants& arch) {
  if (l.shmem_limit_config == ShmemLimitConfig::kOptIn && arch.configurable_carveout) {
    return std::max(d.smem_per_block, d.smem_per_block_optin);
  }
  return d.smem_per_block;
}

}  // namespace

// --- Curves --------------------------------------------------------------------------------

StatusOr<Curve> BlockSizeCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  (void)current;
  Curve c;
  c.x_label = "threads per block";
  c.assumptions = HeldFixed(l);
  const int limit = BlockSizeLimit(d, l);
  LaunchParams t = WhatIf(l);
  for (int b = d.warp_size; b <= limit; b += d.warp_size) {
    t.block_threads = b;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, t));
    c.points.push_back({b, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  if (limit % d.warp_size != 0) {
    t.block_threads = limit;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, t));
    c.points.push_back({limit, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  return c;
}

StatusOr<Curve> RegisterCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(ValidateLaunch(d, l));
  Curve c;
  c.x_label = "registers per thread";
  c.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  FormatBytes(static_cast<i64>(l.static_smem) + l.dynamic_smem) +
                  " of shared memory per block unchanged";
  LaunchParams t = WhatIf(l);
  for (int regs = 8; regs <= 256; regs += 8) {
    t.regs_per_thread = std::min(regs, 255);
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, t));
    c.points.push_back({t.regs_per_thread, r.active_blocks_per_sm, r.active_warps_per_sm,
                        r.theoretical_occupancy_pct, r.limiting_factors});
  }
  return c;
}

StatusOr<Curve> SharedMemCurve(const DeviceProps& d, const LaunchParams& l) {
  OCC_RETURN_IF_ERROR(ValidateLaunch(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  Curve c;
  c.x_label = "shared memory per block (bytes, static + dynamic)";
  c.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  std::to_string(l.regs_per_thread) + " registers/thread unchanged; the " +
                  FormatBytes(d.reserved_smem_per_block) + " driver reserve per block is added";
  const int max_user = MaxUserSmem(d, l, *arch);
  int last_blocks = -1;
  // Allocation happens in granules, so the block count can only change at granule boundaries:
  // sample the largest user size of every granule and keep the points where the count changes.
  for (i64 alloc = arch->smem_alloc_granularity;; alloc += arch->smem_alloc_granularity) {
    const i64 user64 = std::min<i64>(alloc - d.reserved_smem_per_block, max_user);
    if (user64 < 0) continue;
    const int user = static_cast<int>(user64);
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, WithUserSmem(d, l, user)));
    if (r.active_blocks_per_sm != last_blocks || user == max_user) {
      c.points.push_back({user, r.active_blocks_per_sm, r.active_warps_per_sm,
                          r.theoretical_occupancy_pct, r.limiting_factors});
      last_blocks = r.active_blocks_per_sm;
    }
    if (user >= max_user) break;
  }
  return c;
}

// --- Waves -------------------------------------------------------------------------------------

Waves ComputeWaves(int64_t grid_blocks, int active_blocks_per_sm, int num_sms) {
  Waves w;
  w.grid_blocks = grid_blocks;
  w.grid_below_sm_count = grid_blocks > 0 && grid_blocks < num_sms;
  if (grid_blocks <= 0 || active_blocks_per_sm <= 0 || num_sms <= 0) return w;
  w.blocks_per_wave = static_cast<i64>(active_blocks_per_sm) * num_sms;
  w.waves_per_sm = static_cast<double>(grid_blocks) / static_cast<double>(w.blocks_per_wave);
  w.full_waves = grid_blocks / w.blocks_per_wave;
  w.tail_blocks = grid_blocks - w.full_waves * w.blocks_per_wave;
  // ncu's tail-effect share needs at least one full wave; below that there is no tail, only a
  // grid too small to fill the GPU (reported separately).
  w.tail_pct = w.tail_blocks > 0 && w.full_waves >= 1 ? 100.0 / static_cast<double>(1 + w.full_waves)
                                                      : 0.0;
  w.wave_efficiency = w.waves_per_sm / std::ceil(w.waves_per_sm);
  return w;
}

std::string TailSentence(const Waves& w) {
  if (w.blocks_per_wave <= 0 || w.tail_blocks == 0) return "";
  if (w.full_waves == 0) {
    return "the grid of " + std::to_string(w.grid_blocks) + " blocks fills " +
           Pct(100.0 * w.waves_per_sm) + " of one wave of " + std::to_string(w.blocks_per_wave) +
           " blocks";
  }
  return std::to_string(w.full_waves) + " full wave" + (w.full_waves == 1 ? "" : "s") +
         " and a partial wave of " + std::to_string(w.tail_blocks) + " blocks (of " +
         std::to_string(w.blocks_per_wave) + "): the tail can take up to " + Pct(w.tail_pct) +
         " of the runtime";
}

// --- Limiters ------------------------------------------------------------------------------------

uint32_t RealLimiters(const OccupancyResult& r) {
  const std::pair<uint32_t, int> limits[] = {
      {kLimitWarps, r.block_limit_warps},       {kLimitRegisters, r.block_limit_registers},
      {kLimitSharedMemory, r.block_limit_shared_mem}, {kLimitBlocks, r.block_limit_blocks},
      {kLimitBarriers, r.block_limit_barriers}, {kLimitVirtual, r.block_limit_virtual}};
  int lowest = kNoLimit;
  for (const auto& [bit, value] : limits) lowest = std::min(lowest, value);
  uint32_t bits = 0;
  for (const auto& [bit, value] : limits) {
    if (value == lowest) bits |= bit;
  }
  return bits;
}

std::string PrimaryLimiter(const OccupancyResult& r) {
  if (r.active_blocks_per_sm == 0) return "cannot_run";
  if (r.active_warps_per_sm >= r.max_warps_per_sm) return "none";
  const uint32_t bits = RealLimiters(r);
  // Ties: the hardware's fixed caps first. When the blocks-per-SM or warp limit allows no more
  // blocks than registers or shared memory do, freeing those resources gains nothing (e.g. a
  // 1-thread kernel in a 32 KiB executed carveout: 32 blocks by shared memory and by the SM).
  const std::pair<uint32_t, const char*> order[] = {
      {kLimitBlocks, "blocks"},       {kLimitWarps, "warps"},
      {kLimitRegisters, "registers"}, {kLimitSharedMemory, "shared_memory"},
      {kLimitBarriers, "barriers"},   {kLimitVirtual, "virtual"}};
  for (const auto& [bit, name] : order) {
    if ((bits & bit) != 0) return name;
  }
  return "none";
}

namespace {

std::string LimiterDetail(uint32_t bit, const DeviceProps& d, const LaunchParams& l,
                          const OccupancyResult& r, const ArchConstants* arch) {
  const std::string arrow = " → " + BlocksPerSm(r.active_blocks_per_sm);
  switch (bit) {
    case kLimitRegisters:
      return std::to_string(l.regs_per_thread) + " regs/thread" +
             (r.allocated_registers_per_thread != l.regs_per_thread
                  ? " (" + std::to_string(r.allocated_registers_per_thread) + " allocated)"
                  : std::string()) +
             " × " + std::to_string(l.block_threads) + " threads" + arrow;
    case kLimitSharedMemory:
      return FormatBytes(r.allocated_shared_mem_per_block) + " shared memory/block" +
             (d.reserved_smem_per_block > 0
                  ? " (incl. " + FormatBytes(d.reserved_smem_per_block) + " driver reserve)"
                  : std::string()) +
             " in a " + FormatBytes(r.shared_mem_config_bytes) + " carveout" + arrow;
    case kLimitWarps:
      return std::to_string(r.warps_per_block) + " warps/block (" +
             std::to_string(l.block_threads) + " threads) of " +
             std::to_string(r.max_warps_per_sm) + " warps/SM" + arrow;
    case kLimitBlocks:
      return "at most " + std::to_string(r.block_limit_blocks) + " blocks/SM on " +
             CcLabel(d.cc_major, d.cc_minor) + ", × " + std::to_string(r.warps_per_block) +
             " warps/block";
    case kLimitBarriers:
      return std::to_string(l.num_block_barriers) + " named barriers/block from a pool of " +
             std::to_string(arch != nullptr ? r.block_limit_blocks * arch->barriers_per_block_slot
                                            : 0) +
             arrow;
    case kLimitVirtual:
      return std::to_string(l.virtual_resource_count) + " virtual resources/block of " +
             std::to_string(arch != nullptr ? arch->virtual_resources_per_sm : 0) + arrow;
    default: return "";
  }
}

const char* LimiterWords(uint32_t bit) {
  switch (bit) {
    case kLimitRegisters: return "registers";
    case kLimitSharedMemory: return "shared memory";
    case kLimitWarps: return "warps";
    case kLimitBlocks: return "the blocks-per-SM limit";
    case kLimitBarriers: return "named barriers";
    case kLimitVirtual: return "virtual resources";
    default: return "?";
  }
}

// Why a resource admits no block at all.
std::string CannotRunReason(uint32_t bit, const DeviceProps& d, const LaunchParams& l,
                            const OccupancyResult& r) {
  switch (bit) {
    case kLimitRegisters:
      return std::to_string(l.regs_per_thread) + " regs/thread × " +
             std::to_string(l.block_threads) + " threads needs " +
             std::to_string(r.allocated_registers_per_block) + " registers (" +
             std::to_string(r.allocated_registers_per_thread) + " allocated/thread), more than the " +
             std::to_string(d.regs_per_block) + " a block may use";
    case kLimitSharedMemory:
      return FormatBytes(r.allocated_shared_mem_per_block) +
             " of shared memory per block exceeds the per-block limit";
    case kLimitWarps:
      return std::to_string(l.block_threads) + " threads exceed the device's " +
             std::to_string(d.max_threads_per_block) + " threads per block";
    default: return LimiterWords(bit);
  }
}

constexpr uint32_t kOrderedBits[] = {kLimitRegisters, kLimitSharedMemory, kLimitBarriers,
                                     kLimitWarps,     kLimitBlocks,       kLimitVirtual};

}  // namespace

std::string LimiterSentence(const DeviceProps& d, const LaunchParams& l, const OccupancyResult& r) {
  const ArchConstants* arch = nullptr;
  if (auto found = FindArchConstants(d.cc_major, d.cc_minor); found.ok()) arch = *found;
  const uint32_t bits = RealLimiters(r);
  if (r.active_blocks_per_sm == 0) {
    std::string s = "cannot run: ";
    bool first = true;
    for (uint32_t bit : kOrderedBits) {
      if ((bits & bit) == 0) continue;
      s += (first ? "" : "; ") + CannotRunReason(bit, d, l, r);
      first = false;
    }
    return s;
  }
  if (r.active_warps_per_sm >= r.max_warps_per_sm) {
    return "full occupancy: " + BlocksPerSm(r.active_blocks_per_sm) + " × " +
           std::to_string(r.warps_per_block) + " warps = " + std::to_string(r.active_warps_per_sm) +
           " of " + std::to_string(r.max_warps_per_sm) + " warps/SM";
  }
  std::vector<uint32_t> present;
  for (uint32_t bit : kOrderedBits) {
    if ((bits & bit) != 0) present.push_back(bit);
  }
  std::string names, details;
  for (size_t i = 0; i < present.size(); ++i) {
    if (i > 0) names += (i + 1 == present.size()) ? " and " : ", ";
    names += LimiterWords(present[i]);
    if (i > 0) details += "; ";
    details += LimiterDetail(present[i], d, l, r, arch);
  }
  return "limited by " + names + ": " + details + " (of " + std::to_string(r.block_limit_blocks) +
         ")";
}

// --- Block size ------------------------------------------------------------------------------------

namespace {

// How evenly a grid spreads over the SMs: blocks per SM / ceil(blocks per SM). The busiest SM
// runs ceil(grid / SMs) blocks while the average runs grid / SMs, so this is the share of the
// busiest SM's time the average SM is busy (1 = even; 64 blocks on 132 SMs: 0.48).
double SmBalance(i64 grid_blocks, int num_sms) {
  if (grid_blocks <= 0 || num_sms <= 0) return 0;
  const double per_sm = static_cast<double>(grid_blocks) / num_sms;
  return per_sm / std::ceil(per_sm);
}

// Higher is better, compared lexicographically (docs/occupancy.md, "Block size").
struct BlockScore {
  int runnable = 0;
  double balance = 0;        // SmBalance, 1 when >= 0.9 (grid known)
  double occupancy = 0;
  int wave_ok = 0;           // >= 4 waves or wave efficiency >= 0.9; 1 below one wave (grid known)
  double no_waste = 0;       // 100 - warp waste %
  int two_blocks = 0;        // >= 2 resident blocks hide __syncthreads() stalls
  auto Key() const { return std::make_tuple(runnable, balance, occupancy, wave_ok, no_waste, two_blocks); }
};

BlockScore Score(const BlockSizeCandidate& c, int num_sms, bool grid_known) {
  BlockScore s;
  s.runnable = c.active_blocks_per_sm > 0 ? 1 : 0;
  s.occupancy = c.occupancy_pct;
  s.no_waste = std::round((100.0 - c.warp_waste_pct) * 100.0) / 100.0;
  s.two_blocks = c.active_blocks_per_sm >= 2 ? 1 : 0;
  if (grid_known && s.runnable) {
    const double balance = SmBalance(c.grid_blocks, num_sms);
    s.balance = balance >= 0.9 ? 1.0 : std::round(balance * 100.0) / 100.0;
    // Below one wave every block is resident at once: the balance above is what counts.
    s.wave_ok = (c.waves.waves_per_sm < 1.0 || c.waves.waves_per_sm >= 4.0 ||
                 c.waves.wave_efficiency >= 0.9)
                    ? 1
                    : 0;
  }
  return s;
}

BlockSizeCandidate Candidate(const DeviceProps& d, const OccupancyResult& r, int b, i64 total_threads,
                             i64 grid_blocks_if_unknown) {
  BlockSizeCandidate c;
  c.block_size = b;
  c.grid_blocks = total_threads > 0 ? CeilDiv(total_threads, b) : grid_blocks_if_unknown;
  c.active_blocks_per_sm = r.active_blocks_per_sm;
  c.occupancy_pct = r.theoretical_occupancy_pct;
  c.limiting_factors = r.limiting_factors;
  c.waves = ComputeWaves(c.grid_blocks, r.active_blocks_per_sm, d.num_sms);
  const double lanes = static_cast<double>(d.warp_size) * static_cast<double>(CeilDiv(b, d.warp_size));
  c.warp_waste_pct = 100.0 * (1.0 - b / lanes);
  return c;
}

}  // namespace

StatusOr<BlockSizeAdvice> AdviseBlockSize(const DeviceProps& d, const LaunchParams& l,
                                          int64_t grid_blocks) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  const bool grid_known = grid_blocks > 0;
  const i64 total_threads = grid_known ? grid_blocks * l.block_threads : 0;
  BlockSizeAdvice advice;
  advice.assumptions =
      (grid_known ? "same total work: " + std::to_string(total_threads) +
                        " threads (grid × block, one per work item), grid = ceil(work / block); "
                  : std::string("grid unknown: ranked by occupancy and warp use only; ")) +
      HeldFixed(l) + "; the kernel must accept the new block size (indexing, __launch_bounds__)";
  advice.current = Candidate(d, current, l.block_threads, total_threads, 0);
  if (grid_known) advice.current.grid_blocks = grid_blocks;
  advice.current.waves = ComputeWaves(advice.current.grid_blocks, current.active_blocks_per_sm, d.num_sms);

  std::vector<BlockSizeCandidate> all;
  LaunchParams t = WhatIf(l);
  bool current_listed = false;
  for (int b = d.warp_size; b <= BlockSizeLimit(d, l); b += d.warp_size) {
    // A block larger than all the work (e.g. grid 1 x block 1) only adds idle lanes.
    if (grid_known && b > total_threads && b != l.block_threads) continue;
    t.block_threads = b;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, t));
    all.push_back(b == l.block_threads ? advice.current : Candidate(d, r, b, total_threads, 0));
    current_listed = current_listed || b == l.block_threads;
  }
  if (!current_listed) all.push_back(advice.current);

  auto better = [&](const BlockSizeCandidate& x, const BlockSizeCandidate& y) {
    auto kx = Score(x, d.num_sms, grid_known).Key();
    auto ky = Score(y, d.num_sms, grid_known).Key();
    if (kx != ky) return kx > ky;
    // Equal merit: Nsight Compute's "128-256 threads as a start", then the smaller block (more
    // blocks balance better).
    auto off_range = [](int b) { return b < 128 ? 128 - b : (b > 256 ? b - 256 : 0); };
    if (off_range(x.block_size) != off_range(y.block_size)) {
      return off_range(x.block_size) < off_range(y.block_size);
    }
    return x.block_size < y.block_size;
  };
  std::stable_sort(all.begin(), all.end(), better);
  advice.ranked = all;

  const BlockSizeCandidate& best = all.front();
  const auto best_key = Score(best, d.num_sms, grid_known).Key();
  const auto current_key = Score(advice.current, d.num_sms, grid_known).Key();
  if (best.block_size == l.block_threads || !(best_key > current_key)) {
    advice.verdict = "no better option: " + std::to_string(l.block_threads) +
                     " threads per block is already among the best block sizes (" +
                     Pct(current.theoretical_occupancy_pct) + " theoretical occupancy" +
                     (grid_known ? ", " + Fixed(advice.current.waves.waves_per_sm, 2) + " waves"
                                 : std::string()) +
                     ")";
    return advice;
  }
  Suggestion s;
  s.kind = "block_size";
  s.block_size = best.block_size;
  s.predicted_occupancy_pct = best.occupancy_pct;
  s.predicted_blocks_per_sm = best.active_blocks_per_sm;
  s.predicted_waves_per_sm = grid_known ? best.waves.waves_per_sm : 0;
  s.assumptions = advice.assumptions;
  std::string why;
  auto add = [&why](const std::string& part) { why += (why.empty() ? "" : ", ") + part; };
  const BlockScore bs = Score(best, d.num_sms, grid_known);
  const BlockScore cs = Score(advice.current, d.num_sms, grid_known);
  auto busy_sms = [&](const BlockSizeCandidate& c) {
    return c.active_blocks_per_sm > 0 ? std::min<i64>(c.grid_blocks, d.num_sms) : 0;
  };
  if (bs.balance > cs.balance && busy_sms(advice.current) > 0) {
    // Fewer busy SMs can come with a better balance (e.g. 132 -> 124 SMs, each one full); only
    // a rise is worth naming as a gain.
    if (busy_sms(best) > busy_sms(advice.current)) {
      add("busy SMs " + std::to_string(busy_sms(advice.current)) + " → " +
          std::to_string(busy_sms(best)) + " of " + std::to_string(d.num_sms));
    }
    add("SM load balance " + Pct(100.0 * SmBalance(advice.current.grid_blocks, d.num_sms)) + " → " +
        Pct(100.0 * SmBalance(best.grid_blocks, d.num_sms)));
  }
  if (best.occupancy_pct != advice.current.occupancy_pct) {
    add("theoretical occupancy " + Pct(advice.current.occupancy_pct) + " → " + Pct(best.occupancy_pct));
  }
  if (grid_known && advice.current.active_blocks_per_sm > 0 &&
      std::fabs(best.waves.waves_per_sm - advice.current.waves.waves_per_sm) >= 0.005) {
    add("waves " + Fixed(advice.current.waves.waves_per_sm, 2) + " → " + Fixed(best.waves.waves_per_sm, 2));
  }
  if (best.warp_waste_pct < advice.current.warp_waste_pct) {
    add("idle lanes " + Pct(advice.current.warp_waste_pct) + " → " + Pct(best.warp_waste_pct));
  }
  if (bs.two_blocks > cs.two_blocks) add("≥ 2 blocks/SM");
  s.text = "Use " + std::to_string(best.block_size) + " threads per block" +
           (grid_known ? " (grid " + std::to_string(best.grid_blocks) + ")" : std::string()) +
           ": " + why;
  advice.verdict = s.text;
  advice.suggestion = s;
  return advice;
}

// --- Register cap --------------------------------------------------------------------------------

StatusOr<RegisterAdvice> AdviseRegisterCap(const DeviceProps& d, const LaunchParams& l,
                                           int local_memory_per_thread) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  RegisterAdvice a;
  a.registers_per_thread = l.regs_per_thread;
  a.allocated_registers_per_thread = current.allocated_registers_per_thread;
  a.active_blocks_per_sm = current.active_blocks_per_sm;
  a.spill_warning = local_memory_per_thread > 0;
  a.headroom_registers = l.regs_per_thread;

  // Blocks for every register count; occupancy never rises with more registers, so the largest
  // count reaching each block count is the cap to suggest for it.
  std::vector<int> blocks_at(256, 0);
  LaunchParams t = WhatIf(l);
  for (int regs = 0; regs <= 255; ++regs) {
    t.regs_per_thread = regs;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, t));
    blocks_at[static_cast<size_t>(regs)] = r.active_blocks_per_sm;
  }
  for (int regs = 255; regs >= l.regs_per_thread; --regs) {
    if (blocks_at[static_cast<size_t>(regs)] >= current.active_blocks_per_sm) {
      a.headroom_registers = regs;
      break;
    }
  }
  int last = current.active_blocks_per_sm;
  for (int regs = l.regs_per_thread - 1; regs >= 1; --regs) {
    const int blocks = blocks_at[static_cast<size_t>(regs)];
    if (blocks > last) {
      const double pct = 100.0 * blocks * current.warps_per_block / current.max_warps_per_sm;
      a.steps.push_back({regs, blocks, pct});
      last = blocks;
    }
  }
  if (a.steps.empty()) {
    a.verdict = current.active_blocks_per_sm == 0
                    ? "no register cap alone makes this launch fit"
                    : "no better option from registers: they do not limit occupancy (up to " +
                          std::to_string(a.headroom_registers) + " registers/thread keep " +
                          BlocksPerSm(current.active_blocks_per_sm) + ")";
    return a;
  }
  const RegisterStep& next = a.steps.front();
  Suggestion s;
  s.kind = "register_cap";
  s.registers_per_thread = next.max_registers_per_thread;
  s.predicted_blocks_per_sm = next.active_blocks_per_sm;
  s.predicted_occupancy_pct = next.occupancy_pct;
  s.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  FormatBytes(static_cast<i64>(l.static_smem) + l.dynamic_smem) +
                  " of shared memory per block unchanged; the compiler meets the cap without "
                  "spilling (check ptxas -v)";
  s.text = "Cap registers at " + std::to_string(next.max_registers_per_thread) +
           "/thread (now " + std::to_string(l.regs_per_thread) + "): __launch_bounds__(" +
           std::to_string(l.block_threads) + ", " + std::to_string(next.active_blocks_per_sm) +
           ") or -maxrregcount=" + std::to_string(next.max_registers_per_thread) + " → " +
           BlocksPerSm(next.active_blocks_per_sm) + ", theoretical occupancy " +
           Pct(current.theoretical_occupancy_pct) + " → " + Pct(next.occupancy_pct);
  if (a.spill_warning) {
    s.text += "; the kernel already uses " + std::to_string(local_memory_per_thread) +
              " B of local memory per thread (spills or stack), a lower cap may spill more";
  }
  a.verdict = s.text;
  a.suggestion = s;
  return a;
}

// --- Shared memory -------------------------------------------------------------------------------

StatusOr<SharedMemAdvice> AdviseSharedMemory(const DeviceProps& d, const LaunchParams& l) {
  OCC_ASSIGN_OR_RETURN(const OccupancyResult current, ComputeOccupancy(d, l));
  OCC_ASSIGN_OR_RETURN(const ArchConstants* arch, FindArchConstants(d.cc_major, d.cc_minor));
  SharedMemAdvice a;
  a.user_smem_per_block = l.static_smem + l.dynamic_smem;
  a.allocated_smem_per_block = current.allocated_shared_mem_per_block;
  a.active_blocks_per_sm = current.active_blocks_per_sm;
  a.headroom_bytes = 0;

  // Does a carveout preference (rather than the hardware) hold occupancy down?
  if (arch->configurable_carveout &&
      (l.carveout_pct != -1 || l.cache_config != CacheConfig::kPreferNone)) {
    LaunchParams no_pref = WhatIf(l);
    no_pref.carveout_pct = -1;
    no_pref.cache_config = CacheConfig::kPreferNone;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult free, At(d, no_pref));
    a.carveout_preference_caps = free.active_blocks_per_sm > current.active_blocks_per_sm;
  }

  const int max_user = MaxUserSmem(d, l, *arch);
  const i64 gran = arch->smem_alloc_granularity;
  int last = current.active_blocks_per_sm;
  // Scan granule by granule downward from the current size: each higher block count, at the
  // largest user size reaching it (user = allocation - driver reserve).
  const i64 current_alloc = current.allocated_shared_mem_per_block;
  for (i64 alloc = current_alloc - gran; alloc >= 0; alloc -= gran) {
    const i64 user = alloc - d.reserved_smem_per_block;
    if (user < 0) break;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, WithUserSmem(d, l, static_cast<int>(user))));
    if (r.active_blocks_per_sm > last) {
      SharedMemStep step;
      step.active_blocks_per_sm = r.active_blocks_per_sm;
      step.occupancy_pct = r.theoretical_occupancy_pct;
      step.max_user_smem_per_block = static_cast<int>(user);
      step.carveout_bytes = d.smem_per_sm;
      for (int size : arch->carveout_sizes) {
        if (static_cast<i64>(size) >= alloc * r.active_blocks_per_sm) {
          step.carveout_bytes = size;
          break;
        }
      }
      a.steps.push_back(step);
      last = r.active_blocks_per_sm;
    }
  }
  // Headroom: user bytes that can be added keeping the current block count.
  for (i64 alloc = current_alloc + gran; current.active_blocks_per_sm > 0; alloc += gran) {
    const i64 user = alloc - d.reserved_smem_per_block;
    if (user > max_user) break;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult r, At(d, WithUserSmem(d, l, static_cast<int>(user))));
    if (r.active_blocks_per_sm < current.active_blocks_per_sm) break;
    a.headroom_bytes = static_cast<int>(user) - a.user_smem_per_block;
  }

  std::optional<Suggestion> carveout_fix;
  if (a.carveout_preference_caps) {
    Suggestion s;
    s.kind = "shared_memory";
    LaunchParams no_pref = WhatIf(l);
    no_pref.carveout_pct = -1;
    no_pref.cache_config = CacheConfig::kPreferNone;
    OCC_ASSIGN_OR_RETURN(const OccupancyResult free, At(d, no_pref));
    s.predicted_blocks_per_sm = free.active_blocks_per_sm;
    s.predicted_occupancy_pct = free.theoretical_occupancy_pct;
    s.shared_mem_per_block = a.user_smem_per_block;
    s.assumptions = "block size, registers and shared memory per block unchanged";
    s.text = "Raise or drop the shared-memory carveout preference (cudaFuncAttributePreferredSharedMemoryCarveout" +
             std::string(l.carveout_pct >= 0 ? " = " + std::to_string(l.carveout_pct) + "%" : "") +
             " / cache config): it caps the SM at " + FormatBytes(current.shared_mem_config_bytes) +
             " → " + BlocksPerSm(free.active_blocks_per_sm) + ", theoretical occupancy " +
             Pct(current.theoretical_occupancy_pct) + " → " + Pct(free.theoretical_occupancy_pct);
    carveout_fix = s;
  }

  if (a.steps.empty()) {
    if (carveout_fix) {
      a.suggestion = carveout_fix;
      a.verdict = carveout_fix->text;
      return a;
    }
    a.verdict = current.active_blocks_per_sm == 0
                    ? (current.block_limit_shared_mem == 0
                           ? "shared memory per block exceeds what one block may use"
                           : "shared memory does not keep this launch from running")
                    : "no better option from shared memory: it does not limit occupancy (" +
                          FormatBytes(a.headroom_bytes) + " more per block keep " +
                          BlocksPerSm(current.active_blocks_per_sm) + ")";
    return a;
  }
  const SharedMemStep& next = a.steps.front();
  Suggestion s;
  s.kind = "shared_memory";
  s.shared_mem_per_block = next.max_user_smem_per_block;
  s.predicted_blocks_per_sm = next.active_blocks_per_sm;
  s.predicted_occupancy_pct = next.occupancy_pct;
  s.assumptions = std::to_string(l.block_threads) + " threads per block and " +
                  std::to_string(l.regs_per_thread) + " registers/thread unchanged; the " +
                  FormatBytes(d.reserved_smem_per_block) + " driver reserve per block counted";
  s.text = "Use at most " + FormatBytes(next.max_user_smem_per_block) +
           " of shared memory per block (now " + FormatBytes(a.user_smem_per_block) + ") → " +
           BlocksPerSm(next.active_blocks_per_sm) + ", theoretical occupancy " +
           Pct(current.theoretical_occupancy_pct) + " → " + Pct(next.occupancy_pct) +
           (arch->configurable_carveout
                ? " (needs a carveout of at least " + FormatBytes(next.carveout_bytes) + ")"
                : std::string());
  if (carveout_fix && carveout_fix->predicted_occupancy_pct >= s.predicted_occupancy_pct) s = *carveout_fix;
  a.verdict = s.text;
  a.suggestion = s;
  return a;
}

// --- Everything ------------------------------------------------------------------------------------

StatusOr<LaunchAdvice> AdviseLaunch(const DeviceProps& d, const LaunchParams& l,
                                    const AdviceInputs& in) {
  LaunchAdvice out;
  OCC_ASSIGN_OR_RETURN(out.occupancy, ComputeOccupancy(d, l));
  out.limiter_sentence = LimiterSentence(d, l, out.occupancy);
  out.primary_limiter = PrimaryLimiter(out.occupancy);
  if (in.grid_blocks > 0) {
    out.waves = ComputeWaves(in.grid_blocks, out.occupancy.active_blocks_per_sm, d.num_sms);
  }
  OCC_ASSIGN_OR_RETURN(out.block_size, AdviseBlockSize(d, l, in.grid_blocks));
  OCC_ASSIGN_OR_RETURN(out.registers, AdviseRegisterCap(d, l, in.local_memory_per_thread));
  OCC_ASSIGN_OR_RETURN(out.shared_memory, AdviseSharedMemory(d, l));

  if (out.registers.suggestion) out.suggestions.push_back(*out.registers.suggestion);
  if (out.shared_memory.suggestion) out.suggestions.push_back(*out.shared_memory.suggestion);
  if (out.block_size.suggestion) out.suggestions.push_back(*out.block_size.suggestion);
  if ((RealLimiters(out.occupancy) & kLimitBarriers) != 0 && out.occupancy.active_blocks_per_sm > 0) {
    // Named barriers come from a per-SM pool (sm_90+): fewer per block, more resident blocks.
    LaunchParams fewer = WhatIf(l);
    for (int n = l.num_block_barriers - 1; n >= 1; --n) {
      fewer.num_block_barriers = n;
      OCC_ASSIGN_OR_RETURN(const OccupancyResult r, ComputeOccupancyUnchecked(d, fewer));
      if (r.active_blocks_per_sm > out.occupancy.active_blocks_per_sm) {
        Suggestion s;
        s.kind = "barriers";
        s.block_size = l.block_threads;
        s.predicted_blocks_per_sm = r.active_blocks_per_sm;
        s.predicted_occupancy_pct = r.theoretical_occupancy_pct;
        s.assumptions = "block size, registers and shared memory unchanged";
        s.text = "Use at most " + std::to_string(n) + " named barriers per block (now " +
                 std::to_string(l.num_block_barriers) + ", e.g. merge bar.sync IDs) → " +
                 BlocksPerSm(r.active_blocks_per_sm) + ", theoretical occupancy " +
                 Pct(out.occupancy.theoretical_occupancy_pct) + " → " + Pct(r.theoretical_occupancy_pct);
        out.suggestions.push_back(s);
        break;
      }
    }
  }
  if (out.waves && out.waves->grid_below_sm_count) {
    Suggestion s;
    s.kind = "grid_size";
    s.block_size = l.block_threads;
    s.predicted_blocks_per_sm = out.occupancy.active_blocks_per_sm;
    s.predicted_occupancy_pct = out.occupancy.theoretical_occupancy_pct;
    s.assumptions = "the work can be split into more blocks";
    s.text = "Launch at least " + std::to_string(d.num_sms) + " blocks: only " +
             std::to_string(in.grid_blocks) + " blocks for " + std::to_string(d.num_sms) +
             " SMs leaves " + std::to_string(d.num_sms - in.grid_blocks) +
             " SMs idle (split the work further, or use smaller blocks)";
    out.suggestions.push_back(s);
  }
  // Largest predicted gain first; the grid-size advice is about idle SMs, not occupancy, and
  // keeps its place after the occupancy suggestions.
  std::stable_sort(out.suggestions.begin(), out.suggestions.end(),
                   [](const Suggestion& x, const Suggestion& y) {
                     if ((x.kind == "grid_size") != (y.kind == "grid_size")) return y.kind == "grid_size";
                     return x.predicted_occupancy_pct > y.predicted_occupancy_pct;
                   });

  if (out.waves) {
    const std::string tail = TailSentence(*out.waves);
    if (out.waves->full_waves >= 1 && out.waves->tail_pct >= 20.0) out.notes.push_back(tail);
    if (out.waves->grid_below_sm_count) {
      out.notes.push_back("the grid (" + std::to_string(in.grid_blocks) + " blocks) is smaller than the " +
                          std::to_string(d.num_sms) + " SMs");
    }
  }
  if (l.block_threads % d.warp_size != 0) {
    const int warps = out.occupancy.warps_per_block;
    const int idle = warps * d.warp_size - l.block_threads;
    out.notes.push_back("block of " + std::to_string(l.block_threads) + " threads runs as " +
                        std::to_string(warps) + " warps with " + std::to_string(idle) +
                        " idle lanes; use a multiple of " + std::to_string(d.warp_size));
  }
  if (!in.barrier_count_known && d.cc_major >= 9) {
    out.notes.push_back("barrier count unknown (1 assumed): kernels with more named barriers may "
                        "fit fewer blocks on " + CcLabel(d.cc_major, d.cc_minor));
  }
  if (in.local_memory_per_thread > 0) {
    out.notes.push_back(std::to_string(in.local_memory_per_thread) +
                        " B of local memory per thread: register spills or a stack");
  }
  return out;
}

void ToProto(const Suggestion& s, occtrace::Suggestion* out) {
  out->set_kind(s.kind);
  out->set_text(s.text);
  out->set_predicted_occupancy_pct(s.predicted_occupancy_pct);
  out->set_predicted_blocks_per_sm(s.predicted_blocks_per_sm);
  out->set_predicted_waves_per_sm(s.predicted_waves_per_sm);
  out->set_block_size(s.block_size);
  out->set_registers_per_thread(s.registers_per_thread);
  out->set_shared_mem_per_block(s.shared_mem_per_block);
  out->set_assumptions(s.assumptions);
}

}  // namespace occ
