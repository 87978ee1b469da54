// `occ-report AFTER --diff BASE`: did the fix work? Totals before → after, every kernel's
// before/after row, and warnings when the two traces may not compare (report.proto's Diff).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
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

// Whether two traces (or sets of traces) ran the same program: the check behind --diff's warnings,
// also used across ranks (cross_rank.h). One side: its files (their recorded commands), a label
// for the sentences ("before", "on rank 0") and the share of its GPU time in kernels, by
// demangled name, that the other side ran too (CommonTimePcts).
struct ProgramSide {
  std::string label;
  const std::vector<occtrace::InputFile>* files = nullptr;
  int64_t total_ns = 0;
  double common_time_pct = 0;
};

// How a failed check is worded: who is compared, why little kernel time in common points to
// different programs, and what follows for the report.
struct ProgramWording {
  std::string subject = "the two traces";
  std::string why_common_kernels = "a fix usually keeps most of the time in the same kernels";
  std::string consequence = "the totals compare different work";
};

enum class ProgramMatch {
  kSame,                     // or nothing tells them apart
  kSameProgramOtherKernels,  // one recorded program, below half of the time in common kernels
  kMaybeOtherProgram,        // no program recorded on a side, below half in common kernels
  kOtherProgram,             // the recorded programs differ
};

struct ProgramCheck {
  ProgramMatch match = ProgramMatch::kSame;
  std::string warning;  // "" for kSame
};

// The program check: recorded programs (ProgramOf, where both sides recorded a command) must
// agree, and each side must spend at least half of its GPU time in kernels both ran.
ProgramCheck CheckSameProgram(const ProgramSide& a, const ProgramSide& b, const ProgramWording& wording = {});

// The share of each side's GPU time (of its total) in kernels, by name, that both sides ran.
std::pair<double, double> CommonTimePcts(const std::map<std::string, int64_t>& ns_by_name_a, int64_t total_a,
                                         const std::map<std::string, int64_t>& ns_by_name_b, int64_t total_b);

// The program a recorded command line runs, for telling two programs apart: the base name of the
// first word ending in ".py" (the script: `python train.py`, `python3 -u train.py` and
// `torchrun --nproc_per_node 2 train.py` all run "train.py"), else the base name of the first
// word ("./bench --layers 24" → "bench"). Arguments are left out on purpose: the fix under test is
// often a flag. "" for an empty command.
std::string ProgramOf(const std::string& command);

}  // namespace occ
