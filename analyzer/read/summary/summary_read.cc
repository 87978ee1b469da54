// Reading a trace summary back as an input: sniff, parse, check every field, and rows per
// configuration (SummaryInput). Writing one: summary_write.cc.
#include "analyzer/read/summary/trace_summary.h"

#include <google/protobuf/util/json_util.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "sqlite/sqlite_db.h"

namespace occ {
namespace {

// Far above any real summary (a few hundred bytes per configuration); refusing bigger files
// keeps a stray multi-gigabyte .json from being read into memory.
constexpr int64_t kMaxSummaryBytes = int64_t{1} << 30;

DeviceProps GetLimits(const occtrace::DeviceLimits& l) {
  DeviceProps p;
  p.name = l.name();
  p.cc_major = l.cc_major();
  p.cc_minor = l.cc_minor();
  p.num_sms = l.num_sms();
  p.warp_size = l.warp_size();
  p.max_threads_per_block = l.max_threads_per_block();
  p.max_threads_per_sm = l.max_threads_per_sm();
  p.regs_per_block = l.regs_per_block();
  p.regs_per_sm = l.regs_per_sm();
  p.smem_per_block = l.smem_per_block();
  p.smem_per_block_optin = l.smem_per_block_optin();
  p.smem_per_sm = l.smem_per_sm();
  p.reserved_smem_per_block = l.reserved_smem_per_block();
  return p;
}

PmCleanSums ReadPmCleanTotals(const occtrace::PmCleanTotals& totals) {
  PmCleanSums sums;
  sums.samples = totals.samples();
  sums.warps = totals.warps();
  sums.capacity = totals.capacity();
  sums.warps2 = totals.warps2();
  sums.capacity2 = totals.capacity2();
  sums.warps_capacity = totals.warps_capacity();
  return sums;
}

PmSums ReadPmTotals(const occtrace::PmTotals& pm) {
  PmSums s;
  s.clean = pm.clean();
  s.inside = pm.inside();
  s.sequence = pm.sequence();
  s.mixed = pm.mixed();
  s.concurrent = pm.concurrent();
  s.dram_pct_ns = pm.dram_pct_ns();
  s.dram_ns = pm.dram_ns();
  s.dram_samples = pm.dram_samples();
  s.fit = PmFitFromName(pm.fit());
  s.partner = pm.partner();
  s.inflation = pm.inflation();
  const occtrace::PmSolvedTotals& solved = pm.solved();
  s.solved = {solved.samples(), solved.mixed(), solved.warps(), solved.capacity(),
              solved.var_warps(), solved.var_capacity(), solved.cov()};
  s.clean_sums = ReadPmCleanTotals(pm.clean_sums());
  s.inside_sums = ReadPmCleanTotals(pm.inside_sums());
  return s;
}

// A check of one summary field; the first failure is the file's error.
class Checker {
 public:
  void Require(bool ok, const std::string& what) {
    if (!ok && problem_.empty()) problem_ = what;
  }
  void NonNegative(int64_t v, const std::string& field) {
    Require(v >= 0, field + " is negative (" + std::to_string(v) + ")");
  }
  void Finite(double v, const std::string& field) {
    Require(std::isfinite(v), field + " is not a finite number");
  }
  bool failed() const { return !problem_.empty(); }
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

void CheckPmTotals(const occtrace::PmTotals& pm, const std::string& where, Checker* check) {
  const occtrace::PmSolvedTotals& solved = pm.solved();
  for (int64_t n : {pm.clean(), pm.inside(), pm.sequence(), pm.mixed(), pm.concurrent(), pm.dram_samples(), solved.samples(),
                    solved.mixed(), pm.clean_sums().samples(), pm.inside_sums().samples()}) {
    check->NonNegative(n, where + ".pm counts");
  }
  check->Require(pm.inside() + pm.sequence() <= pm.clean(), where + ".pm: inside + sequence above clean");
  check->Require(pm.fit().empty() || PmFitFromName(pm.fit()) != PmFit::kNone, where + ".pm.fit: unknown value");
  check->Finite(pm.inflation(), where + ".pm.inflation");
  check->Finite(solved.cov(), where + ".pm.solved.cov");
  for (double v : {pm.dram_pct_ns(), pm.dram_ns(), solved.warps(), solved.capacity(), solved.var_warps(),
                   solved.var_capacity()}) {
    check->Finite(v, where + ".pm sums");
    check->Require(v >= 0, where + ".pm: a negative sum");
  }
  for (const occtrace::PmCleanTotals* sums : {&pm.clean_sums(), &pm.inside_sums()}) {
    for (double v : {sums->warps(), sums->capacity(), sums->warps2(), sums->capacity2(), sums->warps_capacity()}) {
      check->Finite(v, where + ".pm clean sums");
      check->Require(v >= 0, where + ".pm: a negative sum");
    }
  }
}

void CheckDevice(const occtrace::SummaryDevice& d, const std::string& where, Checker* check) {
  check->Require(d.device_id() >= 0, where + ": device_id is negative");
  check->NonNegative(d.max_blocks_per_sm(), where + ".max_blocks_per_sm");
  if (!d.known()) return;
  check->Require(d.has_limits(), where + ": a known device without limits");
  const occtrace::DeviceLimits& l = d.limits();
  // What the occupancy model divides by or sizes with: the trace reader marks a device without
  // them unknown, so a known device has them all.
  for (auto [value, field] : {std::pair{l.cc_major(), "cc_major"}, {l.num_sms(), "num_sms"},
                              {l.warp_size(), "warp_size"},
                              {l.max_threads_per_block(), "max_threads_per_block"},
                              {l.max_threads_per_sm(), "max_threads_per_sm"},
                              {l.regs_per_block(), "regs_per_block"},
                              {l.regs_per_sm(), "regs_per_sm"}}) {
    check->Require(value > 0, where + ".limits." + field + " must be positive for a known device");
  }
  for (auto [value, field] : {std::pair{l.cc_minor(), "cc_minor"},
                              {l.smem_per_block(), "smem_per_block"},
                              {l.smem_per_block_optin(), "smem_per_block_optin"},
                              {l.smem_per_sm(), "smem_per_sm"},
                              {l.reserved_smem_per_block(), "reserved_smem_per_block"}}) {
    check->NonNegative(value, where + ".limits." + field);
  }
}

void CheckConfig(const occtrace::SummaryConfig& c, const std::string& where, Checker* check) {
  check->Require(!c.name().empty(), where + ": name is empty");
  check->Require(c.grid_size() == 3 && c.block_size() == 3 && c.cluster_size() == 3,
                 where + ": grid, block and cluster need 3 values each");
  // Every configuration of a scan has a launch; timed launches and samples are parts of them.
  check->Require(c.launches() >= 1, where + ": launches must be at least 1");
  check->Require(c.untimed_launches() >= 0 && c.untimed_launches() <= c.launches(),
                 where + ": untimed_launches outside 0..launches");
  check->NonNegative(c.total_ns(), where + ".total_ns");
  check->NonNegative(c.min_ns(), where + ".min_ns");
  check->Require(c.min_ns() <= c.max_ns(), where + ": min_ns above max_ns");
  check->NonNegative(c.achieved_samples(), where + ".achieved_samples");
  check->NonNegative(c.achieved_not_measured(), where + ".achieved_not_measured");
  for (const auto& [reason, count] : c.not_measured_reasons()) {
    check->NonNegative(count, where + ".not_measured_reasons[" + reason + "]");
  }
  check->Finite(c.achieved_sum(), where + ".achieved_sum");
  check->Finite(c.achieved_min(), where + ".achieved_min");
  check->Finite(c.achieved_max(), where + ".achieved_max");
  check->NonNegative(c.estimate_samples(), where + ".estimate_samples");
  check->Finite(c.estimate_variance(), where + ".estimate_variance");
  check->Require(c.estimate_variance() >= 0, where + ": estimate_variance is negative");
  const occtrace::ThroughputTotals& t = c.throughput();
  check->Require(t.sum_size() == kThroughputUnits && t.samples_size() == kThroughputUnits,
                 where + ".throughput: sum and samples need " + std::to_string(kThroughputUnits) +
                     " values each");
  for (int i = 0; i < t.sum_size(); ++i) check->Finite(t.sum(i), where + ".throughput.sum");
  for (int i = 0; i < t.samples_size(); ++i) check->NonNegative(t.samples(i), where + ".throughput.samples");
  check->NonNegative(t.launches(), where + ".throughput.launches");
  CheckPmTotals(c.pm(), where, check);
  const occtrace::OverlapTotals& o = c.overlap();
  for (int64_t n : {o.launches(), o.launch_ns(), o.overlapped_ns(), o.solo_launches(), o.solo_ns()}) {
    check->NonNegative(n, where + ".overlap counts");
  }
  check->Require(o.solo_launches() <= o.launches() && o.solo_ns() <= o.launch_ns() &&
                     o.overlapped_ns() <= o.launch_ns(),
                 where + ".overlap: solo launches or overlapped time above its launches");
}

Status CheckSummary(const occtrace::TraceSummary& s) {
  Checker check;
  check.Require(s.has_input(), "no input section");
  check.Require(s.has_totals(), "no totals section");
  const occtrace::InputFile& in = s.input();
  check.NonNegative(in.launches(), "input.launches");
  for (auto [value, field] : {std::pair{in.rank(), "rank"}, {in.local_rank(), "local_rank"},
                              {in.world_size(), "world_size"},
                              {in.local_world_size(), "local_world_size"}}) {
    check.Require(value >= -1, std::string("input.") + field + " below -1");
  }
  const occtrace::ScanTotals& t = s.totals();
  check.NonNegative(t.launches(), "totals.launches");
  check.NonNegative(t.total_ns(), "totals.total_ns");
  check.NonNegative(t.first_start(), "totals.first_start");
  check.NonNegative(t.last_end(), "totals.last_end");
  check.NonNegative(t.busy_ns(), "totals.busy_ns");
  for (int i = 0; i < s.devices_size() && !check.failed(); ++i) {
    CheckDevice(s.devices(i), "devices[" + std::to_string(i) + "]", &check);
  }
  for (int i = 0; i < s.configs_size() && !check.failed(); ++i) {
    CheckConfig(s.configs(i), "configs[" + std::to_string(i) + "]", &check);
  }
  if (check.failed()) return BadInput(check.problem());
  return OkStatus();
}

ConfigStats GetConfig(const occtrace::SummaryConfig& c, int file_index) {
  ConfigStats s;
  s.file_index = file_index;
  s.device_id = c.device_id();
  s.context_id = c.context_id();
  s.name = c.name();
  s.short_name = c.short_name();
  s.mangled_name = c.mangled_name();
  for (int i = 0; i < 3; ++i) {
    s.grid[i] = c.grid(i);
    s.block[i] = c.block(i);
    s.cluster[i] = c.cluster(i);
  }
  s.registers_per_thread = c.registers_per_thread();
  s.registers_known = c.registers_known();
  s.static_smem = c.static_smem();
  s.dynamic_smem = c.dynamic_smem();
  s.local_mem_per_thread = c.local_mem_per_thread();
  s.smem_executed = c.smem_executed();
  s.smem_limit_config = c.smem_limit_config();
  s.carveout_pct = c.carveout_pct();
  s.cache_config = c.cache_config();
  s.graph_id = c.graph_id();
  s.barrier_count = c.barrier_count();
  s.func_max_threads = c.func_max_threads();
  s.triton_num_warps = c.triton_num_warps();
  s.triton_num_stages = c.triton_num_stages();
  s.source_file = c.source_file();
  s.source_line = c.source_line();
  s.source_nodes = c.source_nodes();
  s.original_aten = c.original_aten();
  s.launches = c.launches();
  s.untimed_launches = c.untimed_launches();
  s.total_ns = c.total_ns();
  s.min_ns = c.min_ns();
  s.max_ns = c.max_ns();
  s.achieved_samples = c.achieved_samples();
  s.achieved_sum = c.achieved_sum();
  s.achieved_min = c.achieved_min();
  s.achieved_max = c.achieved_max();
  s.achieved_not_measured = c.achieved_not_measured();
  for (const auto& [reason, count] : c.not_measured_reasons()) s.not_measured_reasons[reason] = count;
  for (int i = 0; i < kThroughputUnits; ++i) {
    s.throughput.sum[i] = c.throughput().sum(i);
    s.throughput.samples[i] = c.throughput().samples(i);
  }
  s.throughput.launches = c.throughput().launches();
  s.time_estimated = c.time_estimated();
  s.estimate_samples = c.estimate_samples();
  s.estimate_variance = c.estimate_variance();
  s.pm = ReadPmTotals(c.pm());
  s.loader = c.loader();
  s.module_library = c.module_library();
  s.first_start_ns = std::max<int64_t>(0, c.first_start_ns());
  s.last_end_ns = std::max<int64_t>(0, c.last_end_ns());
  s.tail_launches = c.has_tail_launches() ? std::max<int64_t>(0, c.tail_launches()) : -1;
  const occtrace::OverlapTotals& o = c.overlap();
  s.overlap.launches = o.launches();
  s.overlap.launch_ns = o.launch_ns();
  s.overlap.overlapped_ns = o.overlapped_ns();
  s.overlap.solo_launches = o.solo_launches();
  s.overlap.solo_ns = o.solo_ns();
  for (int64_t stream : o.streams()) s.overlap.AddStream(stream);
  s.overlap.more_streams = o.more_streams();
  return s;
}

class SummaryInput : public AnalysisInput {
 public:
  SummaryInput(const std::string& path, occtrace::TraceSummary summary, int file_index)
      : summary_(std::move(summary)), file_index_(file_index) {
    info_ = summary_.input();
    info_.set_path(path);
    for (const auto& d : summary_.devices()) {
      TraceDevice device;
      device.file_index = file_index;
      device.device_id = d.device_id();
      device.known = d.known();
      device.unknown_reason = d.unknown_reason();
      device.props = GetLimits(d.limits());
      device.max_blocks_per_sm = d.max_blocks_per_sm();
      device.source = d.source();
      device.defaulted_fields.assign(d.defaulted_fields().begin(), d.defaulted_fields().end());
      devices_.push_back(std::move(device));
    }
  }

  const occtrace::InputFile& info() const override { return info_; }
  const std::vector<TraceDevice>& devices() const override { return devices_; }

  // The scan's warnings were recorded when the trace was summarized: nothing to add here.
  StatusOr<TraceScan> Scan(const std::string& kernel_regex, int /*jobs*/) override {
    std::optional<sql::NameFilter> filter;
    if (!kernel_regex.empty()) {
      OCC_ASSIGN_OR_RETURN(sql::NameFilter compiled, sql::NameFilter::Compile(kernel_regex));
      filter = std::move(compiled);
    }
    TraceScan scan;
    scan.launches = summary_.totals().launches();
    scan.total_ns = summary_.totals().total_ns();
    scan.first_start = summary_.totals().first_start();
    scan.last_end = summary_.totals().last_end();
    scan.busy_ns = summary_.totals().busy_ns() > 0 ? summary_.totals().busy_ns() : -1;
    scan.configs.reserve(static_cast<size_t>(summary_.configs_size()));
    for (const auto& c : summary_.configs()) {
      ConfigStats stats = GetConfig(c, file_index_);
      if (filter) {
        stats.matched = filter->Matches(c.has_kernel_filter_text() ? c.kernel_filter_text() : c.name());
      }
      scan.configs.push_back(std::move(stats));
    }
    return scan;
  }

 private:
  occtrace::TraceSummary summary_;
  int file_index_ = 0;
  occtrace::InputFile info_;
  std::vector<TraceDevice> devices_;
};

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// Other JSON (torch.profiler traces) starts with '{' too: a summary names its format first.
StatusOr<bool> SniffSummary(InputProbe& probe) {
  if (probe.NameEndsWith(kSummaryExtension)) return true;
  return probe.FirstNonSpace() == '{' &&
         probe.head().find(std::string("\"") + kSummaryFormatMarker + "\"") != std::string::npos;
}

StatusOr<std::unique_ptr<AnalysisInput>> OpenSummary(InputProbe& probe, int file_index) {
  const std::string& path = probe.path();
  if (probe.size() > kMaxSummaryBytes) {
    return BadInput(path + ": " + std::to_string(probe.size()) +
                    " bytes, far larger than any trace summary");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(path + ": cannot open for reading: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return BadInput(path + ": read failed");
  OCC_ASSIGN_OR_RETURN(occtrace::TraceSummary summary, ParseSummary(path, text.str()));
  return std::unique_ptr<AnalysisInput>(new SummaryInput(path, std::move(summary), file_index));
}

}  // namespace

const InputFormat& TraceSummaryFormat() {
  static const InputFormat format{"summary", "a trace summary", {kSummaryExtension}, SniffSummary,
                                  OpenSummary};
  return format;
}

StatusOr<occtrace::TraceSummary> ParseSummary(const std::string& path, const std::string& json) {
  occtrace::TraceSummary summary;
  google::protobuf::util::JsonParseOptions strict;
  auto parsed = google::protobuf::util::JsonStringToMessage(json, &summary, strict);
  // A field this build does not know is the mark of a newer summary format: look at the marker
  // and version first, so such a file is refused for what it is.
  occtrace::TraceSummary lenient_read;
  google::protobuf::util::JsonParseOptions lenient;
  lenient.ignore_unknown_fields = true;
  const occtrace::TraceSummary* header = &summary;
  if (!parsed.ok()) {
    if (!google::protobuf::util::JsonStringToMessage(json, &lenient_read, lenient).ok()) {
      return BadInput(path + ": not a trace summary (unreadable JSON: " +
                      OneLine(std::string(parsed.message())) + ")");
    }
    header = &lenient_read;
  }
  if (header->format() != kSummaryFormatMarker) {
    return BadInput(path + ": not a trace summary (no \"format\": \"" + kSummaryFormatMarker +
                    "\" marker)");
  }
  if (header->version() > kSummaryVersion) {
    return BadInput(path + ": summary version " + std::to_string(header->version()) +
                    " is newer than this occ-report reads (" + std::to_string(kSummaryVersion) +
                    "); use a newer occ-report");
  }
  if (header->version() < 1) {
    return BadInput(path + ": summary without a valid version (" +
                    std::to_string(header->version()) + ")");
  }
  // Version 1 kept PM samples as clean-sample sums only, which give no error: its PM fields are
  // unknown now, and such a summary must be written again from its trace.
  if (header->version() < kSummaryVersion && !parsed.ok()) {
    return BadInput(path + ": summary version " + std::to_string(header->version()) +
                    " predates PM figures from every sample (" + OneLine(std::string(parsed.message())) +
                    "): run occ-report summarize on the trace again");
  }
  if (!parsed.ok()) {
    return BadInput(path + ": damaged trace summary: " + OneLine(std::string(parsed.message())));
  }
  Status valid = CheckSummary(summary);
  if (!valid.ok()) return BadInput(path + ": damaged trace summary: " + OneLine(valid.message()));
  return summary;
}

}  // namespace occ
