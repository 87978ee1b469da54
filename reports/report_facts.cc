#include "reports/report_facts.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

#include "reports/strings.h"

namespace occ::reports {

const std::string_view kTheoreticalMeaning =
    "Theoretical occupancy is computed by the occupancy model (NVIDIA's cuda_occupancy.h rules) "
    "from each launch's recorded configuration: the most warps per SM the hardware could keep "
    "resident, not a measurement.";
const std::string_view kAchievedMeaning =
    "Achieved occupancy is measured with hardware counters "
    "(sm__warps_active.avg.pct_of_peak_sustained_active, as Nsight Compute): by replay on the "
    "launches the tracer measured (sampled or all, see Input), or from PM samples (device-wide "
    "counters at a fixed interval, over the samples in which only that configuration ran); it is "
    "never estimated.";
const std::string_view kRecoverableMeaning =
    "Recoverable time is an upper bound: the GPU time the occupancy headroom could save if the "
    "kernel's speed scaled with occupancy. Real gains are usually smaller; measure after a change.";

const occtrace::Device* FindDevice(const occtrace::Report& report,
                                   const occtrace::KernelGroup& group) {
  // With --gpu every group is evaluated on the what-if device, which the analyzer appends with
  // file_index -1 and device_id -1.
  if (!report.what_if_gpu().empty()) {
    for (const occtrace::Device& device : report.devices()) {
      if (device.file_index() < 0 && device.device_id() < 0) return &device;
    }
  }
  const occtrace::Device* by_ordinal = nullptr;
  for (const occtrace::Device& device : report.devices()) {
    if (device.device_id() != group.device_id()) continue;
    if (device.file_index() == group.file_index()) return &device;
    if (by_ordinal == nullptr) by_ordinal = &device;
  }
  return group.file_index() < 0 || report.files_size() <= 1 ? by_ordinal : nullptr;
}

std::string DeviceTag(const occtrace::Report& report, const occtrace::Device& device) {
  if (device.device_id() < 0) return "what-if";
  std::string tag = "device " + std::to_string(device.device_id());
  if (report.files_size() > 1) tag += ", file " + std::to_string(device.file_index());
  return tag;
}

std::string TopTitle(const occtrace::Report& report) {
  const int shown = report.groups_size();
  if (report.groups_total() > shown) {
    return "Top " + FormatCount(shown) + " of " + FormatCount(report.groups_total()) +
           " kernel configurations";
  }
  if (shown == 1) return "The kernel configuration";
  return "Top " + FormatCount(shown) + " kernel configurations";
}

std::string ToolName(const occtrace::Report& report) {
  return "occ-report " + (report.tool_version().empty() ? std::string("(unknown version)")
                                                        : report.tool_version());
}

std::string DeviceTitle(const occtrace::Device& device) {
  std::string out = device.name().empty() ? std::string("unknown GPU") : device.name();
  out += " (cc " + std::to_string(device.cc_major()) + "." + std::to_string(device.cc_minor());
  out += ", " + std::to_string(device.num_sms()) + " SMs)";
  return out;
}

std::string DeviceLimits(const occtrace::Device& device) {
  std::string out = std::to_string(device.max_warps_per_sm()) + " warps/SM, " +
                    std::to_string(device.max_blocks_per_sm()) + " blocks/SM, " +
                    FormatCount(device.regs_per_sm()) + " registers/SM, " +
                    FormatBytes(device.smem_per_sm()) + " shared memory/SM";
  if (device.smem_per_block_optin() > 0) {
    out += " (" + FormatBytes(device.smem_per_block_optin()) + " opt-in per block";
    if (device.reserved_smem_per_block() > 0) {
      out += ", " + FormatBytes(device.reserved_smem_per_block()) + " reserved per block";
    }
    out += ")";
  }
  return out;
}

std::string DeviceProvenance(const occtrace::Device& device) {
  if (device.source() != occtrace::SOURCE_ARCH_TABLE && device.defaulted_fields().empty()) {
    return "";
  }
  std::string out = "limits not recorded in the trace were taken from the built-in "
                    "architecture table";
  if (!device.defaulted_fields().empty()) {
    out += ": ";
    for (int i = 0; i < device.defaulted_fields_size(); ++i) {
      if (i > 0) out += ", ";
      out += device.defaulted_fields(i);
    }
  }
  return out;
}

std::string FileFacts(const occtrace::InputFile& file) {
  std::string out = (file.format().empty() ? std::string("trace") : file.format() + " trace");
  if (!file.schema_version().empty()) out += ", schema " + file.schema_version();
  out += ", " + FormatCount(file.launches()) + (file.launches() == 1 ? " launch" : " launches");
  if (file.dropped_records() > 0) {
    out += ", " + FormatCount(file.dropped_records()) + " records dropped by CUPTI";
  }
  if (file.pid() > 0) out += ", pid " + std::to_string(file.pid());
  if (!file.host().empty()) out += (file.pid() > 0 ? " on " : ", host ") + file.host();
  if (const std::string rank = FileRankText(file); !rank.empty()) out += ", " + rank;
  return out;
}

std::string FileVersions(const occtrace::InputFile& file) {
  std::string cuda;
  auto add = [&cuda](const std::string& label, const std::string& version) {
    if (version.empty()) return;
    cuda += (cuda.empty() ? "CUDA " : ", ") + label + " " + version;
  };
  add("driver", file.cuda_driver_version());
  add("runtime", file.cuda_runtime_version());
  add("CUPTI", file.cupti_version());
  if (file.occtrace_version().empty()) return cuda;
  return cuda + (cuda.empty() ? "" : "; ") + "traced by occtrace " + file.occtrace_version();
}

namespace {

// What the tracer did not store (OCC_META; -1: not recorded): "; not stored: 1,234 lost (1,000
// busy), 56 never decoded, 7 too long (a stopped sampler)", or "". Too long: more than 4
// intervals (analyzer/read/pm_attribution.h, kMaxPmSampleIntervals).
std::string PmLossText(const occtrace::InputFile& file) {
  std::string out;
  auto add = [&out](const std::string& text) { out += (out.empty() ? "" : ", ") + text; };
  if (file.pm_samples_lost() > 0) {
    add(FormatCount(file.pm_samples_lost()) + " lost" +
        (file.pm_samples_lost_busy() >= 0 ? " (" + FormatCount(file.pm_samples_lost_busy()) + " busy)" : ""));
  }
  if (file.pm_samples_undecoded() > 0) add(FormatCount(file.pm_samples_undecoded()) + " never decoded");
  if (file.pm_samples_rejected_long() > 0) {
    add(FormatCount(file.pm_samples_rejected_long()) + " too long (a stopped sampler)");
  }
  return out.empty() ? "" : "; not stored: " + out;
}

// "PM sampling every 20.0 µs, on for 9.6 s of 90.8 s: 71 samples (40 clean, 29 mixed, 2 beside no
// traced launch); not stored: ...", or "PM sampling off (why)": so that a user sees when it was
// off and why, and what became of its samples. Each sample is counted once.
std::string PmSamplingText(const occtrace::InputFile& file) {
  const std::string& status = file.pm_status();
  if (!status.empty() && status != "on") return "PM sampling off (" + status + ")";
  std::string out = "PM sampling";
  if (file.pm_interval_ns() > 0) out += " every " + FormatDuration(file.pm_interval_ns());
  // Paused by the CPU bound: the samples cover only part of the run.
  if (file.pm_run_ns() > 0 && file.pm_sampling_ns() < file.pm_run_ns()) {
    out += ", on for " + FormatDuration(file.pm_sampling_ns()) + " of " + FormatDuration(file.pm_run_ns());
  }
  out += ": " + FormatCount(file.pm_samples()) + " samples (" + FormatCount(file.pm_clean_samples()) + " clean, " +
         FormatCount(file.pm_mixed_samples()) + " mixed, ";
  if (file.pm_concurrent_samples() > 0) {
    out += FormatCount(file.pm_concurrent_samples()) + " with kernels running at once (not used), ";
  }
  out += FormatCount(file.pm_unattributed_samples()) + " beside no traced launch";
  if (file.pm_long_samples() > 0) {
    out += ", " + FormatCount(file.pm_long_samples()) + " too long, not used";
  }
  out += ")" + PmLossText(file);
  if (file.pm_overflows() > 0) {
    out += ", " + FormatCount(file.pm_overflows()) +
           (file.pm_overflows() == 1 ? " buffer overflow" : " buffer overflows") + " (samples lost)";
  }
  if (file.pm_decode_errors() > 0) out += ", " + FormatCount(file.pm_decode_errors()) + " decode errors";
  return out;
}

}  // namespace

std::string AchievedModeText(const occtrace::InputFile& file) {
  std::string out;
  const std::string& mode = file.achieved_mode();
  if (mode == "sample") {
    out = "measured with hardware counters on sampled launches";
  } else if (mode == "all") {
    out = "measured with hardware counters on every launch";
  } else if (mode == "pm") {
    const std::string& status = file.pm_status();
    // PM sampling off (no permission, unsupported, an error): nothing was measured, and why is
    // the one thing to say. Its achieved_status repeats pm_status.
    if (!status.empty() && status != "on") return "not measured: PM sampling off (" + status + ")";
    out = "measured by PM sampling (device-wide hardware counters at a fixed interval)";
  } else if (mode == "off") {
    out = "not measured (tracing ran with achieved occupancy off)";
  } else {
    out = "not measured";
  }
  if (!file.achieved_status().empty() && mode != "pm") out += " (" + file.achieved_status() + ")";
  if (!file.pm_status().empty() || file.pm_samples() > 0) out += "; " + PmSamplingText(file);
  return out;
}

std::string LimiterLabel(std::string_view limiter) {
  if (limiter == "registers") return "registers";
  if (limiter == "shared_memory") return "shared memory";
  if (limiter == "warps") return "warps per block";
  if (limiter == "blocks") return "blocks per SM";
  if (limiter == "barriers") return "barriers";
  if (limiter == "virtual") return "virtual resources";
  if (limiter == "none") return "none (full occupancy)";
  if (limiter == "cannot_run") return "cannot run";
  if (limiter == "unjudged") return "not judged";
  if (limiter.empty()) return "unknown";
  return std::string(limiter);
}

std::string BlockLimitText(int32_t limit) {
  return limit == INT32_MAX ? std::string("no limit") : std::to_string(limit);
}

std::string SharedMemLimitText(const occtrace::Occupancy& occupancy) {
  const int32_t ncu = occupancy.ncu_block_limit_shared_mem();
  const int32_t model = occupancy.block_limit_shared_mem();
  if (ncu <= 0 || ncu == model) return BlockLimitText(model);
  return BlockLimitText(ncu) + " (executed carveout; " + BlockLimitText(model) +
         " at the largest carveout)";
}

std::string BarrierLimitText(const occtrace::Occupancy& occupancy) {
  if (occupancy.ncu_block_limit_barriers() > 0) {
    return BlockLimitText(occupancy.ncu_block_limit_barriers());
  }
  return BlockLimitText(occupancy.block_limit_barriers());
}

std::string LimiterShortLabel(std::string_view limiter) {
  if (limiter == "shared_memory") return "shared mem";
  if (limiter == "warps") return "warps";
  if (limiter == "blocks") return "blocks/SM";
  if (limiter == "virtual") return "virtual";
  if (limiter == "none") return "none";
  return LimiterLabel(limiter);
}

std::string DimsText(int32_t x, int32_t y, int32_t z) {
  std::string out = std::to_string(x);
  if (y != 1 || z != 1) out += "×" + std::to_string(y);
  if (z != 1) out += "×" + std::to_string(z);
  return out;
}

int64_t BlockThreads(const occtrace::KernelGroup& group) {
  return int64_t{group.block_x()} * group.block_y() * group.block_z();
}

int64_t GridBlocks(const occtrace::KernelGroup& group) {
  return int64_t{group.grid_x()} * group.grid_y() * group.grid_z();
}

std::string SharedMemText(const occtrace::KernelGroup& group) {
  return FormatBytes(group.static_shared_mem()) + " static + " +
         FormatBytes(group.dynamic_shared_mem()) + " dynamic";
}

std::string RegistersText(const occtrace::KernelGroup& group) {
  std::string out = std::to_string(group.registers_per_thread());
  const int32_t allocated = group.occupancy().allocated_registers_per_thread();
  if (allocated > 0 && allocated != group.registers_per_thread()) {
    out += " (" + std::to_string(allocated) + " allocated)";
  }
  return out;
}

std::string LaunchText(const occtrace::KernelGroup& g) {
  std::string out = "grid " + DimsText(g.grid_x(), g.grid_y(), g.grid_z()) + " × block " +
                    DimsText(g.block_x(), g.block_y(), g.block_z()) + " (" +
                    FormatCount(BlockThreads(g)) + (BlockThreads(g) == 1 ? " thread), " : " threads), ") +
                    std::to_string(g.registers_per_thread()) + " registers/thread";
  if (g.occupancy().allocated_registers_per_thread() > g.registers_per_thread()) {
    out += " (" + std::to_string(g.occupancy().allocated_registers_per_thread()) + " allocated)";
  }
  out += ", " + SharedMemText(g) + " shared memory";
  if (g.local_mem_per_thread() > 0) {
    out += ", " + FormatBytes(g.local_mem_per_thread()) + " local memory/thread (spills or stack)";
  }
  if (int64_t{g.cluster_x()} * g.cluster_y() * g.cluster_z() > 1) {
    out += ", cluster " + DimsText(g.cluster_x(), g.cluster_y(), g.cluster_z());
  }
  return out;
}

std::string TimeText(const occtrace::KernelGroup& g, std::string_view share_of) {
  if (g.time_estimated()) {
    // Light trace: an estimate, with its sample and interval (report-guide.md, "Light traces").
    const std::string interval =
        g.time_ci95_ns() < 0 ? std::string(" (one timed launch: no interval)")
        : g.total_ns() > 0   ? " ± " + FormatPct(100.0 * static_cast<double>(g.time_ci95_ns()) / static_cast<double>(g.total_ns()))
                             : std::string();
    if (g.timed_launches() == 0) {
      return "GPU time unknown: none of its " + FormatCount(g.launches()) +
             (g.launches() == 1 ? " launch" : " launches") + " ran in a timing window (light trace)";
    }
    return "≈" + FormatDuration(g.total_ns()) + interval + " (estimated from " + FormatCount(g.timed_launches()) +
           " timed) in " + FormatCount(g.launches()) + (g.launches() == 1 ? " launch (" : " launches (") +
           FormatPct(g.time_pct()) + " " + std::string(share_of) + "); mean " + FormatDuration(static_cast<int64_t>(g.mean_ns())) +
           ", min " + FormatDuration(g.min_ns()) + ", max " + FormatDuration(g.max_ns()) + " of the timed ones";
  }
  return FormatDuration(g.total_ns()) + " in " + FormatCount(g.launches()) +
         (g.launches() == 1 ? " launch (" : " launches (") + FormatPct(g.time_pct()) +
         " " + std::string(share_of) + "); mean " + FormatDuration(static_cast<int64_t>(g.mean_ns())) + ", min " +
         FormatDuration(g.min_ns()) + ", max " + FormatDuration(g.max_ns());
}

std::string LimiterLine(const occtrace::KernelGroup& group) {
  const occtrace::Occupancy& occ = group.occupancy();
  std::string out = "Theoretical occupancy " + FormatPct(occ.theoretical_occupancy_pct()) + " (" +
                    std::to_string(occ.active_warps_per_sm()) + " of " +
                    std::to_string(occ.max_warps_per_sm()) + " warps per SM)";
  const std::string& sentence = occ.limiter_sentence();
  if (sentence.empty()) return out + ".";
  if (sentence.rfind("limited by", 0) == 0) return out + " is " + sentence + ".";
  if (sentence.rfind("cannot run", 0) == 0) {
    std::string reason = sentence.substr(10);
    while (!reason.empty() && (reason.front() == ':' || reason.front() == ' ')) reason.erase(0, 1);
    return "Cannot run: " + reason + ".";
  }
  return out + ": " + sentence + ".";
}

bool NotesCoverRecoverable(const occtrace::Report& report) {
  for (const std::string& note : report.notes()) {
    if (note.find("upper bound") != std::string::npos) return true;
  }
  return false;
}

bool HasAchieved(const occtrace::KernelGroup& group) {
  return group.has_achieved() && group.achieved().samples() > 0;
}

bool AnyAchieved(const occtrace::Report& report) {
  // The run's figure, not the shown groups': --top never changes whether it was measured.
  return report.summary().achieved_groups() > 0;
}

namespace {

// " ± 0.3": a PM figure's standard error, in points.
std::string PmErrorText(const occtrace::PmAchieved& pm) {
  return pm.standard_error() >= 0 ? " ± " + FormatFixed(pm.standard_error(), 1) : "";
}

// "50 clean samples" or "80 samples, 30 shared with other kernels": what a PM figure rests on,
// and what was left out of it: samples with other kernels running at once, and the shared ones
// where the solve over them gave no figure.
std::string PmSamplesText(const occtrace::PmAchieved& pm) {
  std::string out = pm.from_mixed() ? FormatCount(pm.samples()) + " samples, " + FormatCount(pm.mixed_samples()) +
                                          " shared with other kernels (least squares)"
                                    : FormatCount(pm.samples()) + " clean samples";
  const std::string& solve = pm.solve_status();
  if (!solve.empty() && pm.mixed_samples() > 0) {
    out += "; its " + FormatCount(pm.mixed_samples()) + " shared with other kernels left out: " +
           (solve == "too_uncertain" && pm.solved_pct() >= 0
                ? "with them the solve read " + FormatPct(pm.solved_pct()) + ", its error too large"
            : solve == "not_separable" ? "they cannot tell it from the kernels beside it"
                                       : "they do not add up");
  }
  if (pm.concurrent_samples() > 0) {
    out += "; " + FormatCount(pm.concurrent_samples()) + " with other kernels running at once not used";
  }
  return out;
}

// PM's figure where replay gives the group's: "PM samples: 49.5% ± 0.3 over 50 clean samples",
// or "PM samples: no figure" and why.
std::string PmBesideText(const occtrace::PmAchieved& pm) {
  if (pm.achieved_pct() < 0) {
    const std::string& status = pm.status();
    return "PM samples: no figure (" +
           std::string(status == "too_uncertain"   ? "error too large"
                       : status == "not_separable" ? "not separable from the kernels beside it"
                       : status == "implausible"   ? "the samples do not add up"
                       : status == "no_samples"    ? "no sample while it ran"
                       : status == "concurrent"    ? "other kernels always ran at the same time"
                                                   : status) +
           ")";
  }
  return "PM samples: " + FormatPct(pm.achieved_pct()) + PmErrorText(pm) + " over " + PmSamplesText(pm);
}

}  // namespace

const std::string_view kPmTableLegend =
    "p = from PM samples (device-wide counters) in which only this kernel ran, m = from PM samples "
    "including ones shared with other kernels (least squares), else replay on measured launches; "
    "n/e = PM error too large for a figure, n/s = PM samples cannot separate it from kernels beside it, "
    "n/c = other kernels always ran at the same time.";
const std::string_view kPmWideTableLegend =
    "A figure marked PM comes from PM samples (device-wide counters), with its standard error and "
    "sample count; \"mixed\" counts the samples it shared with other kernels, whose counts the "
    "least-squares solve split between them; unmarked figures come from replay on the measured launches.";

const std::string& AchievedSource(const occtrace::KernelGroup& group) {
  static const std::string kNone;
  return HasAchieved(group) ? group.achieved().source() : kNone;
}

bool PmNoFigure(const occtrace::KernelGroup& group) {
  return !HasAchieved(group) && group.achieved().has_pm();
}

bool AnyPm(const occtrace::Report& report) {
  for (const occtrace::KernelGroup& group : report.groups()) {
    if (group.achieved().has_pm()) return true;
  }
  return false;
}

std::string AchievedNarrowCell(const occtrace::KernelGroup& group) {
  if (PmNoFigure(group)) {
    const std::string& status = group.achieved().pm().status();
    return status == "too_uncertain" ? "n/e" : status == "not_separable" ? "n/s" : status == "concurrent" ? "n/c" : "–";
  }
  if (!HasAchieved(group)) return "–";
  const double pct = group.achieved().mean_pct();
  if (AchievedSource(group) != "pm") return FormatFixed(pct, 1);
  return (pct >= 99.95 ? FormatFixed(pct, 0) : FormatFixed(pct, 1)) + (group.achieved().pm().from_mixed() ? "m" : "p");
}

std::string AchievedWideCell(const occtrace::KernelGroup& group) {
  const occtrace::PmAchieved& pm = group.achieved().pm();
  if (PmNoFigure(group)) {
    if (pm.status() == "too_uncertain") {
      return pm.standard_error() > pm.max_standard_error()
                 ? "error too large (PM," + PmErrorText(pm) + " over " + FormatCount(pm.samples()) + " samples)"
                 : "too few samples (PM, " + FormatCount(pm.samples()) + ")";
    }
    if (pm.status() == "not_separable") return "not separable (PM)";
    if (pm.status() == "implausible") return "samples do not add up (PM)";
    if (pm.status() == "no_samples") return "no PM sample";
    if (pm.status() == "concurrent") return "always beside other kernels at once (PM)";
    return "–";
  }
  if (!HasAchieved(group)) return "–";
  const std::string value = FormatFixed(group.achieved().mean_pct(), 1);
  if (AchievedSource(group) != "pm") return value;
  return value + " " + PmFigureNote(group);
}

std::string PmFigureNote(const occtrace::KernelGroup& group) {
  const occtrace::PmAchieved& pm = group.achieved().pm();
  std::string out = (pm.standard_error() >= 0 ? "± " + FormatFixed(pm.standard_error(), 1) + " " : "") + "(PM, " +
                    FormatCount(pm.samples()) + " samples";
  if (pm.from_mixed()) out += ", " + FormatCount(pm.mixed_samples()) + " mixed";
  return out + ")";
}

std::string AchievedText(const occtrace::KernelGroup& group) {
  const occtrace::Achieved& a = group.achieved();
  if (!HasAchieved(group)) {
    // The judge always says why (achieved_figure.h); a report made before it did may not.
    return a.not_measured_reason().empty() ? "not measured" : "not measured: " + a.not_measured_reason();
  }
  if (a.source() == "pm") {
    const occtrace::PmAchieved& pm = a.pm();
    std::string out = FormatPct(a.mean_pct()) + PmErrorText(pm) + " (PM samples: " + PmSamplesText(pm);
    if (pm.from_mixed() && pm.clean_pct() >= 0) {
      out += "; " + FormatPct(pm.clean_pct()) + " over its " + FormatCount(pm.clean_samples()) + " clean ones alone";
    }
    if (pm.inside_pct() >= 0 && pm.inside_samples() < pm.samples()) {
      out += "; " + FormatPct(pm.inside_pct()) + " over the " + FormatCount(pm.inside_samples()) +
             " inside one launch";
    }
    if (a.not_measured() > 0) out += "; replay: " + FormatCount(a.not_measured()) + " launches not measured";
    return out + ")";
  }
  std::string out = FormatPct(a.mean_pct()) + " (replay: ";
  if (a.samples() == 1) {
    out += "1 launch";
  } else {
    out += "mean of " + FormatCount(a.samples()) + " launches, min " + FormatPct(a.min_pct()) +
           ", max " + FormatPct(a.max_pct());
  }
  if (a.not_measured() > 0) out += "; " + FormatCount(a.not_measured()) + " not measured";
  if (a.has_pm()) out += "; " + PmBesideText(a.pm());
  return out + ")";
}

std::string MeasuredWorkText(const occtrace::KernelGroup& group) {
  return "the same " + FormatCount(group.measured_work_threads()) + " threads per launch";
}

int FastestMeasuredPoint(const occtrace::KernelGroup& group) {
  int fastest = -1;
  for (int i = 0; i < group.measured_points_size(); ++i) {
    if (fastest < 0 || group.measured_points(i).mean_ns() < group.measured_points(fastest).mean_ns()) {
      fastest = i;
    }
  }
  return fastest;
}

// 256 for a 1-D block, (32, 8) or (8, 8, 4) otherwise: as the advice writes it.
std::string BlockShapeText(const occtrace::MeasuredPoint& point) {
  if (point.block_x() <= 0) return std::to_string(point.block_size());  // no shape recorded
  if (point.block_y() <= 1 && point.block_z() <= 1) return std::to_string(point.block_x());
  std::string text = "(" + std::to_string(point.block_x()) + ", " + std::to_string(point.block_y());
  if (point.block_z() > 1) text += ", " + std::to_string(point.block_z());
  return text + ")";
}

MeasuredPointCells MeasuredCells(const occtrace::MeasuredPoint& point) {
  return {"block " + BlockShapeText(point),
          // "alone": the mean of the launches no other kernel overlapped (the others did).
          FormatDuration(static_cast<int64_t>(point.mean_ns() + 0.5)) + (point.solo() ? " alone" : ""),
          FormatPct(point.theoretical_pct()),
          point.achieved_pct() >= 0 ? FormatPct(point.achieved_pct()) : "–"};
}

std::string GapText(const occtrace::KernelGroup& group) {
  if (!group.achieved().measured_on_gpu().empty()) {
    return "measured on " + group.achieved().measured_on_gpu() +
           " (the traced GPU), not on the what-if GPU: not compared with its theoretical occupancy";
  }
  const double gap = group.achieved().gap_points();
  if (gap >= 0.05) return FormatFixed(gap, 1) + " points below theoretical";
  if (gap <= -0.05) {
    // Counters average over active cycles and the model ignores some hardware details; a
    // measurement above the model is worth a look, not an error.
    return FormatFixed(-gap, 1) + " points above theoretical (check the recorded configuration)";
  }
  return "equal to theoretical";
}

std::string TracedGpuForAchieved(const occtrace::Report& report) {
  if (report.what_if_gpu().empty()) return "";
  std::vector<std::string> names;
  for (const occtrace::Device& d : report.devices()) {
    if (d.device_id() >= 0 && std::find(names.begin(), names.end(), d.name()) == names.end()) {
      names.push_back(d.name());
    }
  }
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : " and ") + n;
  return text.empty() ? "the traced GPU" : text;
}

std::string ThroughputText(const occtrace::KernelGroup& group) {
  if (!group.achieved().has_throughput()) return "";
  const occtrace::Throughput& t = group.achieved().throughput();
  std::string units;
  const std::pair<const char*, double> values[] = {{"DRAM", t.dram_pct()},
                                                   {"L2", t.l2_pct()},
                                                   {"L1", t.l1_pct()},
                                                   {"issue slots", t.issue_slots_pct()},
                                                   {"tensor pipe", t.tensor_pipe_pct()}};
  for (const auto& [name, pct] : values) {
    if (pct < 0) continue;
    units += (units.empty() ? "" : ", ") + std::string(name) + " " + FormatPct(pct);
  }
  if (t.source() == "pm") {
    return units + " of peak (PM samples: time-weighted over " + FormatCount(t.samples()) +
           " clean samples): " + t.summary();
  }
  return units + " of peak (" + (t.samples() == 1 ? "1 measured launch" : "mean of " + FormatCount(t.samples()) +
                                 " measured launches") + "): " + t.summary();
}

std::string WavesText(const occtrace::KernelGroup& group) {
  std::string out = FormatFixed(group.waves_per_sm(), 2);
  if (group.full_waves() == 0 && group.tail_blocks() > 0) {
    return out + " (less than one full wave: some SMs stay idle or under-filled)";
  }
  if (group.tail_blocks() > 0) {
    out += " (" + FormatCount(group.full_waves()) +
           (group.full_waves() == 1 ? " full wave" : " full waves") + " + a partial wave of " +
           FormatCount(group.tail_blocks()) + (group.tail_blocks() == 1 ? " block" : " blocks");
    if (group.tail_pct() > 0) {
      out += "; the tail can be up to " + FormatPct(group.tail_pct(), 0) + " of the runtime";
    }
    out += ")";
  }
  return out;
}

std::string SuggestionLine(const occtrace::Suggestion& suggestion) {
  // The advice writes its predictions into the sentence ("→ 4 blocks/SM, theoretical occupancy
  // 37.5% → 50%"); the structured fields feed the CSV columns and the charts.
  std::string out = suggestion.text();
  if (!out.empty() && out.back() != '.') out += '.';
  return out;
}

std::string RecoverableText(int64_t ns) {
  if (ns <= 0) return "none (no occupancy headroom)";
  return "up to " + FormatDuration(ns) + " (upper bound)";
}

std::string TuningOverheadText(const occtrace::Summary& s) {
  if (s.tuning_overhead_ns() <= 0) return "";
  std::string by;
  for (const std::string& t : s.tuning_overhead_by()) by += (by.empty() ? "" : ", ") + t;
  const double pct = s.total_gpu_ns() > 0 ? 100.0 * static_cast<double>(s.tuning_overhead_ns()) /
                                                static_cast<double>(s.total_gpu_ns())
                                          : 0;
  return "tuning overhead: " + FormatDuration(s.tuning_overhead_ns()) + " (" + FormatPct(pct) + " of GPU time), by " +
         by + "; not in the ranking or the actions";
}

std::string SummaryRecoverableText(const occtrace::Summary& s) {
  const int64_t measured = s.recoverable_measured_ns(), model = s.recoverable_model_ns();
  if (measured <= 0 && model <= 0) {
    return "none (no configuration measured faster, no occupancy headroom in kernels you control)";
  }
  std::string out;
  if (measured > 0) out = FormatDuration(measured) + " measured";
  if (model > 0) {
    out += (out.empty() ? "up to " : " + up to ") + FormatDuration(model) +
           " by the occupancy model (an upper bound)";
  }
  return out + "; the sum of the actions in \"What to change\"";
}

std::string GroupRecoverableText(const occtrace::KernelGroup& g) {
  if (g.counted_gain_kind() == "measured" && g.counted_gain_ns() > 0) {
    return FormatDuration(g.counted_gain_ns()) +
           " measured (at the speed of this function's fastest configuration on the same work)";
  }
  if (g.counted_gain_kind() == "upper bound" && g.counted_gain_ns() > 0) return RecoverableText(g.counted_gain_ns());
  if (g.recoverable_ns_upper_bound() > 0) {
    return "none counted (the model's up to " + FormatDuration(g.recoverable_ns_upper_bound()) +
           " is not added: this function's action is its measured configuration)";
  }
  return "none (no occupancy headroom)";
}

std::string GroupRecoverableCell(const occtrace::KernelGroup& g) {
  if (g.counted_gain_ns() <= 0) return "–";
  return g.counted_gain_kind() == "measured" ? FormatDuration(g.counted_gain_ns()) + " measured"
                                             : "up to " + FormatDuration(g.counted_gain_ns());
}

std::string ActionRef(const occtrace::Action& action) {
  return action.group_rank() > 0 ? "#" + std::to_string(action.group_rank()) + " " : "";
}

std::string MinorActionsTitle(const occtrace::Report& report) {
  int64_t ns = 0;
  for (const occtrace::Action& a : report.minor_actions()) ns += a.gain_ns();
  const int n = report.minor_actions_size();
  return "Smaller changes (below 1% of GPU time each): " + std::to_string(n) +
         (n == 1 ? " change" : " changes") + ", " + FormatDuration(ns) + " in all";
}

double ListedUnjudgedTimePct(const occtrace::Report& report) {
  if (report.summary().total_gpu_ns() <= 0) return 0;
  int64_t ns = 0;
  for (const occtrace::KernelGroup& group : report.unjudged()) ns += group.total_ns();
  return 100.0 * static_cast<double>(ns) / static_cast<double>(report.summary().total_gpu_ns());
}

double UnjudgedTimePct(const occtrace::Report& report) {
  if (report.summary().total_gpu_ns() <= 0) return 0;
  // The run's, whatever --kernel shows.
  const int64_t ns = report.summary().unjudged_gpu_ns();
  return 100.0 * static_cast<double>(ns) / static_cast<double>(report.summary().total_gpu_ns());
}

std::string NoSuggestionsReason(const occtrace::KernelGroup& group) {
  // A library's kernel (vendor, framework, header library) has no launch advice by rule, not
  // for want of one: its own issue line says what its owner controls.
  if (group.judged() && !group.tunable()) return "its owner picks its launch configuration (see Issues)";
  if (group.judged() && group.occupancy().active_blocks_per_sm() > 0 && group.waves_per_sm() > 0 &&
      group.waves_per_sm() <= 1.0) {
    const int64_t blocks = int64_t{std::max(1, group.grid_x())} * std::max(1, group.grid_y()) * std::max(1, group.grid_z());
    return "the whole grid (" + FormatCount(blocks) + (blocks == 1 ? " block" : " blocks") + ") is resident at once (" +
           FormatFixed(group.waves_per_sm(), 2) + " waves), so occupancy cannot limit it";
  }
  return "no change of block size, registers or shared memory raises the theoretical occupancy";
}

std::vector<BlockSizeMark> BlockSizeMarks(const occtrace::KernelGroup& group) {
  std::vector<BlockSizeMark> marks;
  bool measured = false;
  for (const occtrace::Suggestion& s : group.suggestions()) {
    if (s.block_size() <= 0) continue;
    // A 2-D or 3-D block by its shape: (16, 16) and (32, 8) are both 256 threads.
    const std::string threads =
        (s.block_y() > 1 || s.block_z() > 1
             ? "block " + DimsText(s.block_x(), s.block_y(), s.block_z()) + " (" + std::to_string(s.block_size()) + " threads)"
             : std::to_string(s.block_size()) + " threads") +
        ", ";
    if (s.kind() == "measured_config") {
      measured = true;
      marks.push_back({s.block_size(), s.predicted_occupancy_pct(), true,
                       "suggested: " + threads + "measured fastest, " + FormatPct(s.predicted_occupancy_pct()) +
                           " theoretical"});
    } else if (s.kind() == "block_size") {
      marks.push_back({s.block_size(), s.predicted_occupancy_pct(), !measured,
                       (measured ? "model: " : "suggested: ") + threads + FormatPct(s.predicted_occupancy_pct()) +
                           " predicted" + (measured ? ", not measured" : "")});
    }
  }
  return marks;
}

bool DiffHasBefore(const occtrace::DiffRow& row) { return row.status() != "new"; }
bool DiffHasAfter(const occtrace::DiffRow& row) { return row.status() != "gone"; }

std::string DiffTimeChange(const occtrace::DiffRow& row) {
  if (!DiffHasBefore(row) || !DiffHasAfter(row) || row.total_ns_before() <= 0) return "";
  const double change = 100.0 * static_cast<double>(row.total_ns_after() - row.total_ns_before()) /
                        static_cast<double>(row.total_ns_before());
  return (change > 0 ? "+" : "") + FormatPct(change);
}

std::string SignedDuration(int64_t delta_ns) {
  if (delta_ns == 0) return "±0";
  return (delta_ns > 0 ? "+" : "-") + FormatDuration(delta_ns > 0 ? delta_ns : -delta_ns);
}

std::string DiffTotalText(const occtrace::Diff& diff) {
  const int64_t delta = diff.total_ns_after() - diff.total_ns_before();
  std::string out = FormatDuration(diff.total_ns_before()) + " → " + FormatDuration(diff.total_ns_after());
  if (delta == 0) return out + ": unchanged";
  out += ": " + FormatDuration(delta > 0 ? delta : -delta) + (delta < 0 ? " less" : " more") + " GPU time";
  if (diff.total_ns_before() > 0) {
    const double pct = 100.0 * static_cast<double>(delta) / static_cast<double>(diff.total_ns_before());
    out += " (" + std::string(pct > 0 ? "+" : "") + FormatPct(pct) + ")";
  }
  return out;
}

std::string DiffChangedText(const occtrace::Diff& diff) {
  const int n = diff.changed_kernels();
  return FormatCount(n) + (n == 1 ? " kernel" : " kernels") +
         " (configuration or occupancy changed, new or gone): " + SignedDuration(diff.changed_delta_ns());
}

std::string DiffSameText(const occtrace::Diff& diff) {
  const int n = diff.same_kernels();
  return FormatCount(n) + (n == 1 ? " kernel" : " kernels") + " in the same configuration: " +
         SignedDuration(diff.same_delta_ns()) + " (run-to-run variation, or other work)";
}

std::string DiffConfigChange(const occtrace::DiffRow& row) {
  if (!DiffHasBefore(row) || !DiffHasAfter(row) || row.config_before() == row.config_after()) return "";
  return "was " + SanitizeForDisplay(row.config_before()) + "; now " + SanitizeForDisplay(row.config_after());
}

std::vector<Metric> OccupancyMetrics(const occtrace::KernelGroup& g) {
  const occtrace::Occupancy& occ = g.occupancy();
  std::vector<Metric> rows;
  rows.push_back({"Theoretical Occupancy", FormatFixed(occ.theoretical_occupancy_pct(), 2) + " %"});
  rows.push_back({"Theoretical Active Warps per SM",
                  std::to_string(occ.active_warps_per_sm()) + " of " +
                      std::to_string(occ.max_warps_per_sm())});
  if (HasAchieved(g)) {
    const occtrace::Achieved& a = g.achieved();
    const bool pm = a.source() == "pm";
    std::string how = pm ? " (PM samples)" : " (replay)";
    // --gpu: measured on the traced GPU; its warps per SM are not the what-if GPU's.
    const bool elsewhere = !a.measured_on_gpu().empty();
    if (elsewhere) how += " on " + a.measured_on_gpu();
    rows.push_back({"Achieved Occupancy" + how, FormatFixed(a.mean_pct(), 2) + " %"});
    if (occ.max_warps_per_sm() > 0 && !elsewhere) {
      rows.push_back({"Achieved Active Warps Per SM" + how,
                      FormatFixed(a.mean_pct() * occ.max_warps_per_sm() / 100.0, 2)});
    }
    if (pm) {
      rows.push_back({"PM Samples", PmSamplesText(a.pm())});
      rows.push_back({"PM Standard Error", FormatFixed(a.pm().standard_error(), 2) + " points"});
    } else {
      std::string samples = FormatCount(a.samples());
      if (a.samples() > 1) {
        samples += " (min " + FormatFixed(a.min_pct(), 2) + " %, max " + FormatFixed(a.max_pct(), 2) + " %)";
      }
      rows.push_back({"Measured Launches", samples});
      if (a.has_pm()) rows.push_back({"Achieved Occupancy (PM samples)", PmBesideText(a.pm())});
    }
  } else {
    rows.push_back({"Achieved Occupancy", AchievedText(g)});
  }
  rows.push_back({"Block Limit Registers", BlockLimitText(occ.block_limit_registers())});
  rows.push_back({"Block Limit Shared Mem", SharedMemLimitText(occ)});
  rows.push_back({"Block Limit Warps", BlockLimitText(occ.block_limit_warps())});
  rows.push_back({"Block Limit SM", BlockLimitText(occ.block_limit_blocks())});
  rows.push_back({"Block Limit Barriers", BarrierLimitText(occ)});
  rows.push_back({"Registers Per Thread", RegistersText(g)});
  rows.push_back({"Shared Memory Per Block (allocated)",
                  FormatBytes(occ.allocated_shared_mem_per_block())});
  if (g.shared_mem_executed() > 0) {
    rows.push_back({"Shared Memory Configuration Size", FormatBytes(g.shared_mem_executed())});
  }
  rows.push_back({"Waves Per SM", FormatFixed(g.waves_per_sm(), 2)});
  return rows;
}

std::string OriginText(const occtrace::KernelGroup& group) {
  if (group.origin().empty()) return "";
  static const std::map<std::string, std::string> kWords = {
      {"cuda_cpp", "CUDA C++ (your code or an extension)"}, {"numba", "Numba (@cuda.jit)"},
      {"cupy", "CuPy"}, {"triton", "Triton"}, {"inductor", "Triton generated by TorchInductor"},
      {"aten", "PyTorch (ATen)"}, {"vendor", "vendor library"}, {"header_library", "header library"},
      {"unknown", "unknown owner (no loading library recorded, and a name occtrace does not recognize)"}};
  auto it = kWords.find(group.origin());
  std::string text = it != kWords.end() ? it->second : group.origin();
  if (!group.owner_library().empty() && group.origin() == "vendor") text = group.owner_library() + " (vendor library)";
  // A header library's kernel: the library's code in the binary that loaded it.
  const bool header_library = group.origin() == "header_library";
  if (header_library) {
    text = group.owner_library() + (group.loader().empty() ? " (header library)" : " (compiled into " + group.loader() + ")");
  }
  if (group.triton_num_warps() > 0) {
    text += " (compiled with num_warps=" + std::to_string(group.triton_num_warps()) +
            (group.triton_num_stages() >= 0 ? ", num_stages=" + std::to_string(group.triton_num_stages()) : "") + ")";
  }
  // The bound advice builds on (register caps are said as a change of it).
  if (group.origin() == "cuda_cpp" && group.launch_bounds_max_threads() > 0) {
    text += " (compiled with __launch_bounds__(" + std::to_string(group.launch_bounds_max_threads()) + "))";
  }
  if (!group.tunable()) text += ": not tunable from your code";
  // What the owner rests on (analyzer/analyze/kernel_origin.h), and what the function is among its name's.
  if (!group.loader().empty() && !header_library) text += "; loaded by " + group.loader();
  if (group.name_variants() > 1) {
    text += "; one of " + std::to_string(group.name_variants()) + " compiled variants of this name";
  }
  if (group.autotuning_trial()) {
    text += "; autotuning trial of " + group.autotuner();
  } else if (!group.autotuner().empty()) {
    text += "; chosen by " + group.autotuner();
  }
  return text;
}

namespace {

// "a, b, c, d, e, f … +3 more": Inductor lists every FX node a fused kernel covers (dozens in a
// backward pass); the first few say which part of the model it is.
std::string ShortList(const std::string& list) {
  constexpr int kShown = 6;
  std::string shown;
  int items = 0;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(", ", at);
    if (comma == std::string::npos) comma = list.size();
    if (items < kShown) shown += (items > 0 ? ", " : "") + list.substr(at, comma - at);
    ++items;
    at = comma + 2;
  }
  if (items > kShown) shown += " … +" + std::to_string(items - kShown) + " more";
  return shown;
}

}  // namespace

std::string SourceText(const occtrace::KernelSource& source) {
  if (!source.source_nodes().empty()) {
    std::string text = "from " + ShortList(source.source_nodes());
    if (!source.original_aten().empty()) text += " (" + ShortList(source.original_aten()) + ")";
    return text;
  }
  if (!source.original_aten().empty()) return "from " + ShortList(source.original_aten());
  if (!source.file().empty()) {
    return "defined at " + source.file() + (source.line() > 0 ? ":" + std::to_string(source.line()) : "");
  }
  return "";
}

std::string ActionGainText(const occtrace::Action& action, std::string_view share_of) {
  if (action.gain_kind() == "not predicted" || action.gain_ns() <= 0) return "not predicted";
  std::string text = FormatDuration(action.gain_ns()) + " (" + FormatPct(action.gain_pct()) + " " +
                     std::string(share_of) + ")";
  return action.gain_kind() == "measured" ? text + ", measured" : "up to " + text + " (upper bound)";
}

bool KernelsRanConcurrently(const occtrace::Summary& s) {
  return s.busy_ns() > 0 && static_cast<double>(s.total_gpu_ns()) >= 1.01 * static_cast<double>(s.busy_ns());
}

std::string ShareOfWords(const occtrace::Report& report) {
  return KernelsRanConcurrently(report.summary()) ? "of summed kernel time" : "of GPU time";
}

std::string BusySpanText(const occtrace::Summary& s) {
  if (!KernelsRanConcurrently(s)) return "";
  return "busy " + FormatDuration(s.busy_ns()) +
         " (the union of kernel intervals: kernels ran concurrently; shares are of summed kernel time)";
}

namespace {

// "streams 14, 15, 16 and more", with `separator` between ids.
std::string StreamsText(const occtrace::LaunchOverlap& o, const std::string& separator) {
  if (o.streams_size() == 0) return "";
  std::string text = o.streams_size() == 1 && !o.more_streams() ? "stream " : "streams ";
  for (int i = 0; i < o.streams_size(); ++i) text += (i > 0 ? separator : "") + std::to_string(o.streams(i));
  return text + (o.more_streams() ? " and more" : "");
}

// Below this share of a configuration's time, its overlap is not worth a line.
constexpr double kOverlapShownPct = 1;

}  // namespace

std::string OverlapText(const occtrace::KernelGroup& g) {
  if (!g.has_overlap() || g.overlap().overlapped_pct() < kOverlapShownPct) return "";
  const occtrace::LaunchOverlap& o = g.overlap();
  const std::string streams = StreamsText(o, ", ");
  // No other stream: launches of its own stream overlapped (programmatic dependent launch).
  std::string text = FormatPct(o.overlapped_pct()) + " of its time overlapped other kernels" +
                     (streams.empty() ? " (of its own stream)" : " (" + streams + ")") + "; " + FormatCount(o.solo_launches()) +
                     " of " + FormatCount(o.launches()) + " launches ran alone";
  if (o.solo_launches() > 0) text += ", mean " + FormatDuration(static_cast<int64_t>(o.solo_mean_ns()));
  return text;
}

std::string OverlapCell(const occtrace::KernelGroup& g) {
  if (!g.has_overlap()) return "unknown";
  const std::string streams = StreamsText(g.overlap(), " ");
  return FormatPct(g.overlap().overlapped_pct()) + (streams.empty() ? "" : " (" + streams + ")");
}

const std::string_view kActionsTitle = "What to change";
const std::string_view kNoActions =
    "nothing to change in your own kernels: none ran measurably faster in another configuration, and "
    "the occupancy model predicts no gain (a suggestion without one stays in its kernel's section; "
    "library and framework kernels are marked \"not tunable from your code\")";

// ---- Several input files ---------------------------------------------------------------------

const std::string_view kCommunicationMeaning =
    "Compute = GPU time outside NCCL kernels, which points at the straggler. NCCL kernels include "
    "the time a rank waits for its peers: the rank whose NCCL kernels take longest is usually the "
    "one waiting for a slower peer, not the slow one.";
const std::string_view kCrossRankKernelsTitle =
    "Top configurations by GPU time, per rank: total time (achieved occupancy, measured)";
const std::string_view kRankOnlyTitle = "Configurations not every rank ran";

bool AnyCommunication(const occtrace::Report& report) {
  for (const occtrace::RankSummary& r : report.cross_rank().ranks()) {
    if (r.communication_gpu_ns() > 0) return true;
  }
  return false;
}

std::string CommunicationCell(const occtrace::Report& report, int64_t ns) {
  return AnyCommunication(report) ? FormatDuration(ns) : "–";
}

bool HasCrossRank(const occtrace::Report& report) {
  return report.has_cross_rank() && report.cross_rank().ranks_size() > 1;
}

std::string RankName(const occtrace::Report& report, int file_index) {
  for (const occtrace::RankSummary& r : report.cross_rank().ranks()) {
    if (r.file_index() == file_index) return r.label();
  }
  return "file " + std::to_string(file_index);
}

namespace {

// Files of the report that recorded a rank, ascending.
std::vector<int32_t> KnownRanks(const occtrace::Report& report) {
  std::vector<int32_t> ranks;
  for (const occtrace::InputFile& f : report.files()) {
    if (f.rank() >= 0 && !f.rank_source().empty()) ranks.push_back(f.rank());
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return FormatCount(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace

std::string CrossRankTitle(const occtrace::Report& report) {
  const occtrace::CrossRank& x = report.cross_rank();
  const int files = x.ranks_size();
  const std::vector<int32_t> ranks = KnownRanks(report);
  if (ranks.empty()) return "Across input files: " + Plural(files, "file", "files");
  std::string title = "Across ranks: " + Plural(files, "file", "files");
  bool contiguous = ranks.size() > 1;
  for (size_t i = 1; i < ranks.size(); ++i) contiguous &= ranks[i] == ranks[i - 1] + 1;
  if (contiguous) {
    title += ", ranks " + std::to_string(ranks.front()) + "–" + std::to_string(ranks.back());
  } else {
    title += ", " + Plural(static_cast<int64_t>(ranks.size()), "with a rank", "with a rank");
  }
  if (x.world_size() > 0) title += " of world size " + std::to_string(x.world_size());
  return title;
}

std::string RankIdentityText(const occtrace::Report& report) {
  const occtrace::CrossRank& x = report.cross_rank();
  if (x.identity() == "occtrace") {
    return "each trace's recorded rank (OCC_META, set from the launcher's variables: " +
           x.rank_sources() + ")";
  }
  if (x.identity() == "file name") {
    return "the rank in each file name (\"rank<N>\"); the traces record none";
  }
  if (x.identity() == "mixed") {
    return "recorded ranks where the trace has one, else the rank in the file name or the "
           "file's position (" + x.rank_sources() + ")";
  }
  return "no file records a rank: files are numbered in command-line order (file 0, file 1, …)";
}

bool HasStraggler(const occtrace::Report& report) {
  const occtrace::CrossRank& x = report.cross_rank();
  return HasCrossRank(report) && x.different_programs().empty() && x.slowest_over_median_pct() >= kStragglerPct;
}

bool SpreadStraggles(const occtrace::Report& report, const occtrace::RankSpread& spread) {
  return report.cross_rank().different_programs().empty() && !spread.communication() && spread.ran_on() >= 2 &&
         spread.slowest_over_median_pct() >= kStragglerPct;
}

std::string StragglerText(const occtrace::Report& report) {
  const occtrace::CrossRank& x = report.cross_rank();
  if (x.ranks_size() < 2) return "";
  if (!x.different_programs().empty()) return "none named: " + x.different_programs();
  const std::string slowest = RankName(report, x.slowest_file_index());
  const std::string median = FormatDuration(static_cast<int64_t>(std::llround(x.median_compute_ns())));
  if (x.slowest_over_median_pct() < kStragglerPct) {
    return "none: every rank's compute time (GPU time outside NCCL kernels) is within " +
           FormatPct(kStragglerPct, 0) + " of the median (" + median + "; slowest " + slowest +
           ", " + FormatPct(x.slowest_over_median_pct()) + " over)";
  }
  std::string out = slowest + ": compute time (GPU time outside NCCL kernels) " +
                    FormatDuration(x.slowest_compute_ns()) + ", " +
                    FormatPct(x.slowest_over_median_pct()) + " over the median rank (" + median + ")";
  if (x.least_communication_file_index() >= 0) {
    if (x.least_communication_file_index() == x.slowest_file_index()) {
      out += "; it also spends the least time in NCCL kernels: the other ranks wait for it";
    } else {
      out += "; the least NCCL time is on " + RankName(report, x.least_communication_file_index());
    }
  }
  const std::string cause = StragglerCauseText(report);
  if (!cause.empty()) out += ". Cause: " + cause;
  return out;
}

std::vector<std::string> DistinctFileNames(const std::vector<std::string>& paths, int width) {
  std::vector<std::string> names = paths;
  if (names.size() < 2 || width < 3) return names;
  // The directory every path shares.
  size_t common = 0;
  while (std::all_of(names.begin(), names.end(), [&](const std::string& n) {
    return common < n.size() && common < names[0].size() && n[common] == names[0][common];
  })) {
    ++common;
  }
  const size_t slash = names[0].rfind('/', common == 0 ? 0 : common - 1);
  if (common > 0 && slash != std::string::npos && slash < common) {
    for (auto& n : names) n = n.substr(slash + 1);
  }
  // The characters every name starts and ends with.
  size_t prefix = 0, suffix = 0;
  const size_t shortest = std::min_element(names.begin(), names.end(), [](const auto& a, const auto& b) {
                            return a.size() < b.size();
                          })->size();
  while (prefix < shortest && std::all_of(names.begin(), names.end(), [&](const std::string& n) {
           return n[prefix] == names[0][prefix];
         })) {
    ++prefix;
  }
  while (suffix < shortest - prefix && std::all_of(names.begin(), names.end(), [&](const std::string& n) {
           return n[n.size() - 1 - suffix] == names[0][names[0].size() - 1 - suffix];
         })) {
    ++suffix;
  }
  const size_t room = static_cast<size_t>(width);
  for (auto& n : names) {
    if (n.size() <= room) continue;
    if (n.size() - prefix <= room - 1) {
      n = "…" + n.substr(n.size() - (room - 1));  // the tail holds every difference
    } else {
      // From the first difference on, as much as fits (the differing part first).
      n = "…" + n.substr(prefix, room - 2) + "…";
    }
  }
  return names;
}

std::string StragglerCauseText(const occtrace::Report& report) {
  const occtrace::CrossRank& x = report.cross_rank();
  const std::string slowest = RankName(report, x.slowest_file_index());
  std::string out;
  for (const occtrace::StragglerCause& c : x.straggler_causes()) {
    const std::string name = ShortenKernelName(c.name(), 60);
    const int64_t median = static_cast<int64_t>(std::llround(c.median_ns()));
    std::string text;
    if (c.ran_on() == 1) {
      text = slowest + " alone runs " + FormatDuration(c.slowest_rank_ns()) + " of " + name;
    } else {
      text = name + " takes " + FormatDuration(c.slowest_rank_ns()) + " on " + slowest + ", " +
             FormatDuration(c.slowest_rank_ns() - median) + " over the median rank's " + FormatDuration(median);
    }
    out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

std::string SpreadOverMedianText(const occtrace::RankSpread& spread) {
  if (spread.ran_on() < 2) return "";
  return "+" + FormatPct(spread.slowest_over_median_pct());
}

std::string SpreadText(const occtrace::Report& report, const occtrace::RankSpread& spread) {
  if (spread.ran_on() == 0) return "no launches";
  if (spread.ran_on() == 1) return "ran on " + RankName(report, spread.slowest_file_index()) + " only";
  const std::string median = FormatDuration(static_cast<int64_t>(std::llround(spread.median_ns())));
  if (spread.slowest_ns() == spread.fastest_ns()) {
    return "the same on every rank that ran it: " + FormatDuration(spread.slowest_ns());
  }
  std::string out = std::string(spread.communication() ? "longest on " : "slowest on ") +
                    RankName(report, spread.slowest_file_index()) + ": " +
                    FormatDuration(spread.slowest_ns()) + ", " +
                    FormatPct(spread.slowest_over_median_pct()) + " over the median (" + median +
                    "); " + (spread.communication() ? "shortest " : "fastest ") +
                    RankName(report, spread.fastest_file_index()) + ", " +
                    FormatDuration(spread.fastest_ns());
  if (spread.communication()) out += " (NCCL: the longest rank is usually waiting for a peer)";
  return out;
}

std::string RankCellText(const occtrace::RankFigures& figures) {
  std::string out = FormatDuration(figures.total_ns());
  if (figures.achieved_samples() > 0 && figures.achieved_pct() >= 0) {
    out += " (" + FormatPct(figures.achieved_pct()) + ")";
  }
  return out;
}

const occtrace::RankFigures* FindRankFigures(const occtrace::RankSpread& spread, int file_index) {
  for (const occtrace::RankFigures& f : spread.per_rank()) {
    if (f.file_index() == file_index) return &f;
  }
  return nullptr;
}

std::vector<int> ShownRankFigures(const occtrace::RankSpread& spread, int max_shown) {
  const int n = spread.per_rank_size();
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  if (n <= max_shown || max_shown < 3) return all;
  std::vector<int> by_time = all;
  std::stable_sort(by_time.begin(), by_time.end(), [&](int a, int b) {
    return spread.per_rank(a).total_ns() > spread.per_rank(b).total_ns();
  });
  std::vector<int> shown(by_time.begin(), by_time.begin() + (max_shown - 2));
  shown.insert(shown.end(), by_time.end() - 2, by_time.end());
  std::sort(shown.begin(), shown.end());
  return shown;
}

std::string RankOnlyText(const occtrace::Report& report, const occtrace::RankOnlyConfig& config) {
  std::string on;
  for (int i = 0; i < config.on_files_size(); ++i) {
    on += (i > 0 ? ", " : "") + RankName(report, config.on_files(i));
  }
  const std::string others = KnownRanks(report).empty() ? "files" : "ranks";
  std::string out = "on " + on + (config.on_files_size() == 1 ? " only" : "") + " (of " +
                    std::to_string(report.cross_rank().ranks_size()) + "): " +
                    FormatDuration(config.total_ns()) + " in " +
                    Plural(config.launches(), "launch", "launches");
  out += config.kernel_on_other_files()
             ? "; the kernel ran on the other " + others + " in other configurations"
             : "; the kernel did not run on the other " + others;
  return out;
}

std::string FileRankText(const occtrace::InputFile& file) {
  if (file.rank() < 0 || file.rank_source().empty()) return "";
  std::string out = "rank " + std::to_string(file.rank());
  if (file.world_size() > 0) out += " of " + std::to_string(file.world_size());
  if (file.local_rank() >= 0) {
    out += ", local rank " + std::to_string(file.local_rank());
    if (file.local_world_size() > 0) out += " of " + std::to_string(file.local_world_size());
  }
  out += file.rank_source() == "file name" ? " (from the file name)" : " (" + file.rank_source() + ")";
  return out;
}

std::string CrossRankKernelTag(int index) { return "K" + std::to_string(index + 1); }

}  // namespace occ::reports
