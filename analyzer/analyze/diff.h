// `occ-report AFTER --diff BASE`: did the fix work? Totals before → after, every kernel's
// before/after row, and warnings when the two traces may not compare (report.proto's Diff).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/report.pb.h"

namespace occ {

// One side of the comparison: its files, every group (judged and unjudged, every kernel, before
// --kernel), the GPU models it ran on, and its totals.
struct DiffSide {
  std::vector<occtrace::InputFile> files;
  std::vector<occtrace::KernelGroup> groups;
  std::vector<std::string> gpus;
  int64_t total_ns = 0;
  int64_t launches = 0;
};

// One row per kernel name present on either side. A kernel's occupancy is the GPU-time-weighted
// theoretical occupancy of its judged groups; its configuration is that of its largest group by
// GPU time. Changed, new and gone kernels first, then the same ones, each by |GPU time change|.
std::vector<occtrace::DiffRow> DiffKernels(const std::vector<occtrace::KernelGroup>& before,
                                           const std::vector<occtrace::KernelGroup>& after);

// Every figure of the Diff message but the view: all rows, kernels_matched = kernels_total.
occtrace::Diff BuildDiff(const DiffSide& before, const DiffSide& after);

// The program a recorded command line runs, for telling two programs apart: the base name of the
// first word ending in ".py" (the script: `python train.py`, `python3 -u train.py` and
// `torchrun --nproc_per_node 2 train.py` all run "train.py"), else the base name of the first
// word ("./bench --layers 24" → "bench"). Arguments are left out on purpose: the fix under test is
// often a flag. "" for an empty command.
std::string ProgramOf(const std::string& command);

}  // namespace occ
