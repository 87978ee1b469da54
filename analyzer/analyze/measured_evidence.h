// Advice from what the trace itself measured, in the words of whoever owns the kernel.
// Takes the judged and advised kernel groups (judge.h, group_advice.h) and gives them:
//  - their origin and owner (kernel_origin.h); library and framework kernels lose every
//    launch-configuration suggestion (nobody running the program can apply one) and say what
//    the user does control instead;
//  - measured-faster configurations: the same function (mangled name, device) launched with
//    another configuration over the same number of threads that ran at least 10 % faster per
//    launch; the suggestion quotes both measurements and its gain is measured, not modelled;
//  - short-lived blocks: achieved occupancy well below theoretical over several waves whose
//    blocks live a few microseconds, which the block scheduler cannot refill fast enough;
//  - a priority that ranks by what the evidence says can be gained (in % of GPU time).
// run_figures.h turns the groups into the report's "What to change" section.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/report.pb.h"

namespace occ {

void ApplyOwnerAndEvidence(std::vector<occtrace::KernelGroup>* groups, int64_t run_total_ns);

}  // namespace occ
