// What a torch.profiler trace cannot tell the model, and Kineto's own occupancy estimate beside
// the model's. Takes the reader's devices, its scan and the Kineto estimates the JSON reader
// kept per configuration; gives warnings on the file (InputFile.warnings), which every report
// format shows with the file.
#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/model/limiter_words.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/torch_profiler/torch_profiler_reader.h"

namespace occ {

void TorchProfilerReader::AddTorchProfilerNotes() {
  AddWarning("torch.profiler trace: no achieved occupancy (Kineto records no hardware counters); "
             "the occupancy shown is the model's theoretical occupancy");
  // occ-report's own export keeps them apart (timeline_export.h).
  if (MetaValue("torch_summed_shared_memory") != "0") {
    AddWarning("torch.profiler trace: Kineto records static and dynamic shared memory as one sum "
               "(\"shared memory\"): the model reads it as dynamic, opted in above 48 KiB per block");
  }
  AddWarning("torch.profiler trace: no executed shared-memory carveout, barrier count, local "
             "memory or cluster shape recorded: the model assumed the carveout the driver picks "
             "for the launch, one barrier, no clusters");
}

namespace {

struct Difference {
  const ConfigStats* config;
  std::string text;
};

}  // namespace

// Kineto's "est. achieved occupancy %" is min(blocks that fit per SM, grid blocks / SMs) x block
// threads / max threads per SM, from cuda_occupancy.h with the default carveout and without the
// opt-in shared-memory limit (libkineto DeviceProperties.cpp, computeOccupancyMetrics), rounded
// to a whole percent. occ-report's figure is the theoretical occupancy: active warps / max warps
// with the launch's own shared-memory limit. They differ when the grid fills less than one wave
// (Kineto's cap), when the block is not whole warps (Kineto counts threads), or when the two
// models fit a different number of blocks.
void TorchProfilerReader::AddScanNotes(const TraceScan& scan) {
  if (kineto_estimates_.empty()) return;
  std::vector<Difference> differences;
  int64_t compared = 0;
  for (const ConfigStats& c : scan.configs) {
    auto it = kineto_estimates_.find(KinetoKey(c.device_id, c.name, c.grid, c.block,
                                               c.registers_per_thread, c.dynamic_smem));
    if (it == kineto_estimates_.end()) continue;
    const KinetoEstimate& kineto = it->second;
    const TraceDevice* device = FindDevice(devices_, c.device_id);
    if (device == nullptr || !device->known) continue;
    auto params = LaunchParamsFor(c, device->props);
    if (!params.ok()) continue;
    auto result = ComputeOccupancy(device->props, *params);
    if (!result.ok() || device->props.num_sms <= 0 || device->props.max_threads_per_sm <= 0) continue;
    ++compared;
    const double ours = result->theoretical_occupancy_pct;
    if (std::fabs(kineto.est_pct - ours) < 1.0) continue;
    // The model's blocks per SM put through Kineto's formula.
    const double grid_per_sm = static_cast<double>(GridBlocks(c)) / device->props.num_sms;
    const double effective = std::min<double>(result->active_blocks_per_sm, grid_per_sm);
    const double kineto_formula =
        100.0 * effective * static_cast<double>(BlockThreads(c)) / device->props.max_threads_per_sm;
    std::string why;
    if (std::fabs(std::round(kineto_formula) - kineto.est_pct) <= 1.0) {
      if (grid_per_sm < result->active_blocks_per_sm) {
        why = "Kineto counts only the blocks the grid supplies (" + std::to_string(GridBlocks(c)) +
              " blocks over " + std::to_string(device->props.num_sms) + " SMs = " +
              Fixed(grid_per_sm, 2) + " per SM, where " +
              std::to_string(result->active_blocks_per_sm) +
              " fit): the grid fills less than one wave";
      } else {
        why = "Kineto counts threads (" + std::to_string(BlockThreads(c)) +
              " per block), occ-report whole warps";
      }
    } else if (kineto.est_pct == 0 && c.static_smem + c.dynamic_smem > 48 * 1024) {
      // cuda_occupancy.h refuses more than the default 48 KiB per block without the opt-in,
      // and Kineto writes 0 when the call fails.
      why = "Kineto's occupancy call passes no shared-memory opt-in, fails for the " +
            std::to_string(c.static_smem + c.dynamic_smem) +
            " B per block above the default 48 KiB, and writes 0";
    } else {
      why = "the models fit different numbers of blocks per SM: Kineto ";
      why += kineto.active_blocks >= 0 ? std::to_string(kineto.active_blocks) : std::string("?");
      if (!kineto.limiting_factors.empty()) why += " (limited by " + kineto.limiting_factors + ")";
      why += ", occ-report " + std::to_string(result->active_blocks_per_sm) + " (" +
             PrimaryLimiter(*result) +
             "); Kineto assumes the default carveout and no opt-in shared memory";
    }
    differences.push_back(
        {&c, "Kineto estimates " + Fixed(kineto.est_pct, 0) + " % for " +
                 AbbrevOneLine(c.name, 60) + " [grid " + std::to_string(GridBlocks(c)) +
                 ", block " + std::to_string(BlockThreads(c)) + "], occ-report's theoretical " +
                 "occupancy is " + Fixed(ours, 1) + " %: " + why});
  }
  if (compared == 0) return;
  if (differences.empty()) {
    AddWarning("torch.profiler trace: Kineto's \"est. achieved occupancy %\" agrees with "
               "occ-report's theoretical occupancy (within 1 %) for all " +
               std::to_string(compared) + " configurations");
    return;
  }
  std::stable_sort(differences.begin(), differences.end(), [](const Difference& a, const Difference& b) {
    return a.config->total_ns > b.config->total_ns;
  });
  AddWarning("torch.profiler trace: Kineto's \"est. achieved occupancy %\" differs from "
             "occ-report's theoretical occupancy for " + std::to_string(differences.size()) +
             " of " + std::to_string(compared) + " configurations; the " +
             std::to_string(std::min<size_t>(differences.size(), 3)) + " with the most GPU time:");
  for (size_t i = 0; i < differences.size() && i < 3; ++i) AddWarning(differences[i].text);
}

}  // namespace occ
