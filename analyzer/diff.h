// `occ-report --diff BASE`: per-kernel before/after rows (occupancy, GPU time, launches).
#pragma once

#include <vector>

#include "schema/report.pb.h"

namespace occ {

// One row per kernel name present in either list (judged and unjudged groups alike). A kernel's
// occupancy is the GPU-time-weighted theoretical occupancy of its judged groups; its
// configuration is that of its largest group by GPU time. Rows sorted by |GPU time delta|.
std::vector<occtrace::DiffRow> DiffKernels(const std::vector<occtrace::KernelGroup>& before,
                                           const std::vector<occtrace::KernelGroup>& after);

}  // namespace occ
