// Writing a trace summary (`occ-report summarize`): a scanned trace's rows per configuration
// into the summary message and its JSON. Reading one back: summary_read.cc.
#include "analyzer/read/summary/trace_summary.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace occ {
namespace {

// The text a trace's reader matches --kernel against. nsys exports: the name shown. occtrace
// traces: the demangled name, else the short name, else nothing -- a name that fell back to the
// mangled name or "(unnamed kernel)" is matched as the empty string there
// (occtrace/read_occtrace.cc).
std::string KernelFilterText(const std::string& format, const ConfigStats& c) {
  if (format != "occtrace") return c.name;
  const bool fallback_name = c.short_name.empty() &&
                             (c.name == c.mangled_name || c.name == "(unnamed kernel)");
  return fallback_name ? std::string() : c.name;
}

void PutLimits(const DeviceProps& p, occtrace::DeviceLimits* out) {
  out->set_name(p.name);
  out->set_cc_major(p.cc_major);
  out->set_cc_minor(p.cc_minor);
  out->set_num_sms(p.num_sms);
  out->set_warp_size(p.warp_size);
  out->set_max_threads_per_block(p.max_threads_per_block);
  out->set_max_threads_per_sm(p.max_threads_per_sm);
  out->set_regs_per_block(p.regs_per_block);
  out->set_regs_per_sm(p.regs_per_sm);
  out->set_smem_per_block(p.smem_per_block);
  out->set_smem_per_block_optin(p.smem_per_block_optin);
  out->set_smem_per_sm(p.smem_per_sm);
  out->set_reserved_smem_per_block(p.reserved_smem_per_block);
}

void WritePmTotals(const PmSums& pm, occtrace::PmTotals* out) {
  out->set_clean(pm.clean);
  out->set_inside(pm.inside);
  out->set_sequence(pm.sequence);
  out->set_mixed(pm.mixed);
  out->set_concurrent(pm.concurrent);
  out->set_dram_pct_ns(pm.dram_pct_ns);
  out->set_dram_ns(pm.dram_ns);
  out->set_dram_samples(pm.dram_samples);
  out->set_fit(PmFitName(pm.fit));
  out->set_partner(pm.partner);
  out->set_inflation(pm.inflation);
  occtrace::PmSolvedTotals* solved = out->mutable_solved();
  solved->set_samples(pm.solved.samples);
  solved->set_mixed(pm.solved.mixed);
  solved->set_warps(pm.solved.warps);
  solved->set_capacity(pm.solved.capacity);
  solved->set_var_warps(pm.solved.var_warps);
  solved->set_var_capacity(pm.solved.var_capacity);
  solved->set_cov(pm.solved.cov);
  for (auto [sums, totals] : {std::pair{&pm.clean_sums, out->mutable_clean_sums()},
                              std::pair{&pm.inside_sums, out->mutable_inside_sums()}}) {
    totals->set_samples(sums->samples);
    totals->set_warps(sums->warps);
    totals->set_capacity(sums->capacity);
    totals->set_warps2(sums->warps2);
    totals->set_capacity2(sums->capacity2);
    totals->set_warps_capacity(sums->warps_capacity);
  }
}

void PutConfig(const std::string& format, const ConfigStats& c, occtrace::SummaryConfig* out) {
  out->set_device_id(c.device_id);
  out->set_context_id(c.context_id);
  out->set_name(c.name);
  out->set_short_name(c.short_name);
  out->set_mangled_name(c.mangled_name);
  std::string filter_text = KernelFilterText(format, c);
  if (filter_text != c.name) out->set_kernel_filter_text(std::move(filter_text));
  for (int i = 0; i < 3; ++i) {
    out->add_grid(c.grid[i]);
    out->add_block(c.block[i]);
    out->add_cluster(c.cluster[i]);
  }
  out->set_registers_per_thread(c.registers_per_thread);
  out->set_registers_known(c.registers_known);
  out->set_static_smem(c.static_smem);
  out->set_dynamic_smem(c.dynamic_smem);
  out->set_local_mem_per_thread(c.local_mem_per_thread);
  out->set_smem_executed(c.smem_executed);
  out->set_smem_limit_config(c.smem_limit_config);
  out->set_carveout_pct(c.carveout_pct);
  out->set_cache_config(c.cache_config);
  out->set_graph_id(c.graph_id);
  out->set_barrier_count(c.barrier_count);
  out->set_func_max_threads(c.func_max_threads);
  out->set_triton_num_warps(c.triton_num_warps);
  out->set_triton_num_stages(c.triton_num_stages);
  out->set_source_file(c.source_file);
  out->set_source_line(c.source_line);
  out->set_source_nodes(c.source_nodes);
  out->set_original_aten(c.original_aten);
  out->set_launches(c.launches);
  out->set_untimed_launches(c.untimed_launches);
  out->set_total_ns(c.total_ns);
  out->set_min_ns(c.min_ns);
  out->set_max_ns(c.max_ns);
  out->set_achieved_samples(c.achieved_samples);
  out->set_achieved_sum(c.achieved_sum);
  out->set_achieved_min(c.achieved_min);
  out->set_achieved_max(c.achieved_max);
  out->set_achieved_not_measured(c.achieved_not_measured);
  for (const auto& [reason, count] : c.not_measured_reasons) {
    (*out->mutable_not_measured_reasons())[reason] = count;
  }
  occtrace::ThroughputTotals* t = out->mutable_throughput();
  for (int i = 0; i < kThroughputUnits; ++i) {
    t->add_sum(c.throughput.sum[i]);
    t->add_samples(c.throughput.samples[i]);
  }
  t->set_launches(c.throughput.launches);
  out->set_time_estimated(c.time_estimated);
  out->set_estimate_samples(c.estimate_samples);
  out->set_estimate_variance(c.estimate_variance);
  if (!c.pm.empty()) WritePmTotals(c.pm, out->mutable_pm());
  out->set_loader(c.loader);
  out->set_module_library(c.module_library);
  out->set_first_start_ns(c.first_start_ns);
  out->set_last_end_ns(c.last_end_ns);
  if (c.tail_launches >= 0) out->set_tail_launches(c.tail_launches);
  if (c.overlap.known()) {
    occtrace::OverlapTotals* o = out->mutable_overlap();
    o->set_launches(c.overlap.launches);
    o->set_launch_ns(c.overlap.launch_ns);
    o->set_overlapped_ns(c.overlap.overlapped_ns);
    o->set_solo_launches(c.overlap.solo_launches);
    o->set_solo_ns(c.overlap.solo_ns);
    for (int64_t stream : c.overlap.streams) o->add_streams(stream);
    o->set_more_streams(c.overlap.more_streams);
  }
}

}  // namespace

std::string DefaultSummaryPath(const std::string& trace) {
  const size_t slash = trace.find_last_of('/');
  const size_t dot = trace.find_last_of('.');
  const bool has_extension = dot != std::string::npos && dot > 0 &&
                             (slash == std::string::npos || dot > slash + 1);
  return (has_extension ? trace.substr(0, dot) : trace) + kSummaryExtension;
}

occtrace::TraceSummary SummaryOf(const AnalysisInput& trace, const TraceScan& scan) {
  occtrace::TraceSummary summary;
  summary.set_format(kSummaryFormatMarker);
  summary.set_version(kSummaryVersion);
  *summary.mutable_input() = trace.info();
  for (const auto& d : trace.devices()) {
    occtrace::SummaryDevice* out = summary.add_devices();
    out->set_device_id(d.device_id);
    out->set_known(d.known);
    out->set_unknown_reason(d.unknown_reason);
    PutLimits(d.props, out->mutable_limits());
    out->set_max_blocks_per_sm(d.max_blocks_per_sm);
    out->set_source(d.source);
    for (const auto& f : d.defaulted_fields) out->add_defaulted_fields(f);
  }
  occtrace::ScanTotals* totals = summary.mutable_totals();
  totals->set_launches(scan.launches);
  totals->set_total_ns(scan.total_ns);
  totals->set_busy_ns(std::max<int64_t>(0, scan.busy_ns));
  totals->set_first_start(scan.first_start);
  totals->set_last_end(scan.last_end);
  for (const auto& c : scan.configs) PutConfig(trace.info().format(), c, summary.add_configs());
  return summary;
}

StatusOr<std::string> SummaryToJson(const occtrace::TraceSummary& summary) {
  // Compact, and zeros left out (proto3 reads an absent number as 0): a fleet's report reads
  // hundreds of these, and the pretty-printed form with every field was 4-5x larger.
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = false;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(summary, &json, options);
  if (!status.ok()) return Internal("cannot write the summary as JSON: " + status.ToString());
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

}  // namespace occ
