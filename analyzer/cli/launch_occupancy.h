// The report's verdict on each launch's configuration, for the views that list launches one by
// one (`occ-report launches`): the files are scanned, grouped (grouping.h, the range profiler's
// replayed launches folded into their siblings' group) and judged (judge.h) exactly as the
// report does it, so a launch shows the theoretical occupancy the report shows for its
// configuration. A replayed launch's own record reports a carveout that is not the program's
// (grouping.h says why): judged on its own it read 25 % beside a measured 48 % on the H100
// ResNet-50 trace, where the report says 75 %.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyze/grouping.h"
#include "analyzer/model/occupancy.h"
#include "schema/report.pb.h"
#include "base/status.h"
#include "analyzer/read/analysis_input.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class LaunchOccupancy {
 public:
  // Scans every reader (all kernels, as the report does: --kernel never changes a figure) and
  // judges every group. `what_if` (--gpu): judged on that GPU instead of the traced one.
  static StatusOr<LaunchOccupancy> Build(const std::vector<TraceInput*>& readers,
                                         std::optional<DeviceProps> what_if = std::nullopt);

  // The report's group for a configuration of a file's launch listing (`devices`: that
  // file's), or nullptr when the configuration has no launch the scan counted. The group's
  // `judged` says whether it has an occupancy; `not_judged_reason` why not.
  const occtrace::KernelGroup* Find(const ConfigStats& config,
                                    const std::vector<TraceDevice>& devices) const;

  // The start of reader `i`'s first timed launch (the scan's, 0 when none): where its listing's
  // times count from.
  int64_t first_start(size_t i) const { return first_starts_[i]; }

 private:
  LaunchGroups groups_;
  std::vector<int64_t> first_starts_;
  bool what_if_ = false;
  std::map<std::string, occtrace::KernelGroup> judged_;  // every group of groups_, by its key
};

}  // namespace occ
