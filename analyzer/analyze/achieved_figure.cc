#include "analyzer/analyze/achieved_figure.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "analyzer/model/message_text.h"
#include "analyzer/read/pm_attribution.h"

namespace occ {
namespace {

int32_t Count(int64_t n) { return static_cast<int32_t>(std::clamp<int64_t>(n, 0, INT32_MAX)); }

// What the solve gives (PmAchieved.status, report.proto): "measured", or why its figure is not
// shown.
std::string PmStatus(const PmSums& pm) {
  switch (pm.fit) {
    case PmFit::kSolved:
      // Above the warp slots (0.5 % slack for the counters' rounding, as for a sample): the
      // samples do not hold together, whatever the error says.
      if (pm.solved.Pct() > 100.5) return "implausible";
      if (pm.solved.Shown()) return "measured";
      return pm.inflation >= kPmNotSeparableInflation ? "not_separable" : "too_uncertain";
    case PmFit::kNotSeparable:
      return "not_separable";
    case PmFit::kNoCounts:
      return "implausible";
    case PmFit::kNotSolved:
      return "not_solved";
    case PmFit::kUnknownDevice:
      return "unknown_device";
    case PmFit::kConcurrent:
      return "concurrent";
    case PmFit::kNoSamples:
    case PmFit::kNone:
      break;
  }
  return "no_samples";
}

void FillPm(const PmSums& pm, occtrace::PmAchieved* out) {
  out->set_clean_samples(Count(pm.clean));
  out->set_inside_samples(Count(pm.inside));
  out->set_sequence_samples(Count(pm.sequence));
  out->set_mixed_samples(Count(pm.mixed));
  out->set_concurrent_samples(Count(pm.concurrent));
  out->set_max_standard_error(kMaxPmStandardErrorPoints);
  // The clean-only and inside-only figures, each shown by its own error, for comparison.
  out->set_clean_pct(pm.clean_sums.ShownPct());
  out->set_inside_pct(pm.inside_sums.ShownPct());
  out->set_dram_pct(pm.DramPct());
  const bool solved = pm.fit == PmFit::kSolved;
  out->set_solved_pct(solved ? pm.solved.Pct() : -1.0);
  const std::string solve_status = PmStatus(pm);
  // Where the solve gives no figure but the samples the unit had alone do (their own error small
  // enough), those are its figure: they need no model of how counters add. The solve fails where
  // its shared samples do not fit one set of rates (a kernel whose rate differs with what runs
  // beside it), and such a kernel's samples alone can still agree: on the H200 traces of
  // 2026-11-29 the figures so gained were within 3 points of ncu on 10 of the 11 that ncu also
  // measured (docs/accuracy.md).
  if (solve_status != "measured" && out->clean_pct() >= 0) {
    out->set_status("measured");
    out->set_solve_status(solve_status);
    out->set_achieved_pct(out->clean_pct());
    out->set_standard_error(pm.clean_sums.StandardErrorPoints());
    out->set_samples(Count(pm.clean));
    out->set_from_mixed(false);
    return;
  }
  out->set_status(solve_status);
  out->set_achieved_pct(solve_status == "measured" ? pm.solved.Pct() : -1.0);
  const double error = pm.solved.StandardErrorPoints();
  out->set_standard_error(solved && std::isfinite(error) ? error : -1.0);
  out->set_samples(Count(pm.solved.samples));
  out->set_from_mixed(pm.solved.mixed > 0);
  if (solve_status == "not_separable") out->set_not_separable_from(pm.partner);
}

// Why a kernel that ran has no PM sample: sampling was not on then, or its samples were among
// those the run lost or rejected (the file's counts; per kernel they cannot be told apart).
std::string NoSampleReason(const occtrace::InputFile& file) {
  std::string out = "no PM sample while it ran (sampling was stopped or paused then";
  std::string losses;
  auto add = [&losses](int64_t n, const std::string& one, const std::string& many) {
    if (n > 0) losses += (losses.empty() ? "" : ", ") + std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (file.pm_samples_lost_busy() >= 0) {
    add(file.pm_samples_lost_busy(), "busy sample lost", "busy samples lost");
  } else {
    add(file.pm_samples_lost(), "sample lost", "samples lost");
  }
  add(file.pm_overflows(), "buffer overflow", "buffer overflows");
  add(file.pm_samples_undecoded(), "sample never decoded", "samples never decoded");
  const std::string too_long = " rejected as longer than " + std::to_string(kMaxPmSampleIntervals) + " intervals";
  add(std::max<int64_t>(0, file.pm_samples_rejected_long()) + file.pm_long_samples(), "sample" + too_long,
      "samples" + too_long);
  if (!losses.empty()) out += ", or its samples were among this run's " + losses;
  return out + ")";
}

std::string PmReason(const occtrace::PmAchieved& pm, const occtrace::InputFile* file) {
  const std::string& status = pm.status();
  const std::string samples = std::to_string(pm.samples());
  if (status == "too_uncertain") {
    const std::string error = "±" + Fixed(pm.standard_error(), 1) + " points";
    if (pm.standard_error() <= pm.max_standard_error()) {
      return "PM samples: only " + samples + ", too few to trust an error of " + error;
    }
    return "PM samples: an error of " + error + " over " + samples + " samples (" + std::to_string(pm.mixed_samples()) +
           " shared with other kernels), more than the ±" + Fixed(pm.max_standard_error(), 1) + " a figure may have";
  }
  if (status == "not_separable") {
    return "PM samples: in its " + std::to_string(pm.clean_samples() + pm.mixed_samples()) + " samples (" +
           std::to_string(pm.clean_samples()) + " alone) it ran beside the same kernels in the same way each time" +
           (pm.not_separable_from().empty() ? std::string() : " (mostly " + pm.not_separable_from() + ")") +
           ": the samples cannot tell it apart from them";
  }
  if (status == "implausible") {
    return "PM samples: the solve " +
           (pm.solved_pct() > 100 ? "put it at " + Fixed(pm.solved_pct(), 1) + "%, above the warp slots,"
                                  : std::string("left it no warps or cycles of its own")) +
           " over " + std::to_string(pm.clean_samples() + pm.mixed_samples()) + " samples (" +
           std::to_string(pm.mixed_samples()) + " shared with other kernels): they do not add up (another process, or "
           "kernels sharing SMs)";
  }
  if (status == "concurrent") {
    return "PM samples: in each of its " + std::to_string(pm.concurrent_samples()) +
           " samples other kernels ran at the same time (concurrent streams), and device-wide counters cannot be "
           "split between kernels that share the GPU at once; Nsight Compute measures it alone";
  }
  if (status == "unknown_device") return "PM samples: its GPU's max warps per SM is unknown";
  if (status == "not_solved") return "PM samples: the least-squares solve did not settle";
  return file != nullptr ? NoSampleReason(*file) : "no PM sample while it ran";
}

// The file a group's reason speaks for: the first of its files that sampled with PM, else its
// first.
const occtrace::InputFile* ReasonFile(const Group& g, const std::vector<occtrace::InputFile>& files) {
  const occtrace::InputFile* first = nullptr;
  for (const int i : g.files) {
    if (i < 0 || static_cast<size_t>(i) >= files.size()) continue;
    const occtrace::InputFile& file = files[static_cast<size_t>(i)];
    if (file.achieved_mode() == "pm") return &file;
    if (first == nullptr) first = &file;
  }
  return first;
}

// Why a group has no figure: PM's reason when PM samples touched it, else what its trace says
// of achieved occupancy; replay's reasons for the launches it did not measure after either.
std::string NoFigureReason(const Group& g, const std::vector<occtrace::InputFile>& files, const occtrace::Achieved& a) {
  const occtrace::InputFile* file = ReasonFile(g, files);
  const std::string mode = file == nullptr ? "" : file->achieved_mode();
  std::string reason;
  if (a.has_pm()) {
    reason = PmReason(a.pm(), file);
  } else if (mode == "pm") {
    reason = !file->pm_status().empty() && file->pm_status() != "on" ? "PM sampling off (" + file->pm_status() + ")"
                                                                      : NoSampleReason(*file);
  } else if (mode == "sample" || mode == "all") {
    // Replay's own reasons for its launches, or why none was chosen.
    reason = "replay measured none of its launches" + (a.not_measured_reason().empty()
                                                           ? std::string(" (sampling budget, signature cap or the run's end)")
                                                           : ": " + a.not_measured_reason());
  } else if (mode == "off") {
    reason = "traced with achieved occupancy off (OCCTRACE_ACHIEVED=off)";
  } else if (file != nullptr && !file->achieved_status().empty()) {
    reason = file->achieved_status();  // the reader's word for why (e.g. torch.profiler's)
  } else {
    reason = "the trace has no achieved-occupancy measurements" +
             (file == nullptr || file->format().empty() ? std::string() : " (" + file->format() + ")");
  }
  if (file != nullptr && (mode == "sample" || mode == "all" || mode == "off") && !file->achieved_status().empty() &&
      file->achieved_status() != "ok") {
    reason += " (" + file->achieved_status() + ")";
  }
  if (mode != "sample" && mode != "all" && !a.not_measured_reason().empty()) reason += "; replay: " + a.not_measured_reason();
  return reason;
}

}  // namespace

void FillAchieved(const Group& g, const std::vector<occtrace::InputFile>& files, occtrace::Achieved* a) {
  const ConfigStats& c = g.stats;
  a->set_samples(Count(c.achieved_samples));
  a->set_not_measured(Count(c.achieved_not_measured));
  std::string reasons;
  for (const auto& [reason, n] : c.not_measured_reasons) {
    reasons += (reasons.empty() ? "" : ", ") + reason + " (" + std::to_string(n) + ")";
  }
  a->set_not_measured_reason(reasons);
  if (!c.pm.empty()) FillPm(c.pm, a->mutable_pm());
  if (c.achieved_samples > 0) {
    a->set_source("replay");
    a->set_mean_pct(c.achieved_sum / static_cast<double>(c.achieved_samples));
    a->set_min_pct(c.achieved_min);
    a->set_max_pct(c.achieved_max);
  } else if (a->has_pm() && a->pm().achieved_pct() >= 0) {
    a->set_source("pm");
    a->set_samples(a->pm().samples());
    a->set_mean_pct(a->pm().achieved_pct());
    a->set_min_pct(a->pm().achieved_pct());
    a->set_max_pct(a->pm().achieved_pct());
  } else {
    a->set_not_measured_reason(NoFigureReason(g, files, *a));
  }
}

}  // namespace occ
