// One model of the run, many views: the figures every view of a report shares — the summary's
// recoverable time and the actions of "What to change" — computed once over every judged
// configuration that --kernel matched, before --top, --min-time-pct or --sort choose what is
// shown and in which order. The printers and the view options only select and order them.
//
// Recoverable time adds up the same way everywhere:
//  - one action per function (function_key.h): a function with a measured-faster configuration
//    (measured_evidence.h) gets the best measured configuration, and its gain is the sum of the
//    measured gains of all its slower configurations; otherwise the occupancy model's suggestion
//    for its configuration with the most to gain, with the sum of its configurations' upper
//    bounds;
//  - every action has a gain, measured or the model's bound: a suggestion with none (a measured
//    occupancy gap, a block size for SM balance) stays in its kernel's section, so "What to
//    change" never lists what "Recoverable" does not count;
//  - each configuration's counted_gain_ns is its part of its function's action;
//  - the summary's recoverable time is the sum of the actions, measured and model apart.
// Actions below 1 % of GPU time each are minor (shown in the details) unless no other is left.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/report.pb.h"

namespace occ {

// An action share below this % of GPU time moves to the report's minor actions.
constexpr double kMinorActionPct = 1.0;

struct RunActions {
  std::vector<occtrace::Action> actions;        // best first: measured gains, then the model's
  std::vector<occtrace::Action> minor_actions;  // below kMinorActionPct, when `actions` has others
  // Parallel to actions / minor_actions: the index in `judged` of the configuration each
  // action names (for its rank in a view).
  std::vector<size_t> action_group;
  std::vector<size_t> minor_action_group;
};

// Sets every judged group's counted_gain_ns/kind and returns the actions.
RunActions BuildRunActions(std::vector<occtrace::KernelGroup>* judged, int64_t run_total_ns);

// The summary's recoverable figures from the actions (both lists).
void SetRecoverable(const RunActions& actions, occtrace::Summary* summary);

}  // namespace occ
