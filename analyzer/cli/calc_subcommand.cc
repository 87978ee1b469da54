// `occ-report calc`: the occupancy calculator for one launch configuration on a named GPU —
// block limits, the limiter in words, the block-size curve and the advice, as text or as the
// JSON mapping of occtrace.OccupancyCalc (schema/occupancy.proto).
#include <google/protobuf/util/json_util.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <ostream>
#include <string>

#include "analyzer/model/advice.h"
#include "analyzer/model/arch_table.h"
#include "analyzer/model/limiter_words.h"
#include "analyzer/model/message_text.h"
#include "analyzer/cli/occ_report.h"
#include "analyzer/model/occupancy.h"
#include "analyzer/model/occupancy_curves.h"
#include "schema/occupancy.pb.h"

namespace occ {
namespace {

constexpr int64_t kMaxGridBlocks = 2147483647LL * 65535LL * 65535LL;

// A non-negative integer, optionally with a K / KiB suffix (x 1024) when `bytes`.
StatusOr<int64_t> ParseCount(const std::string& flag, const std::string& text, bool bytes,
                             int64_t max) {
  std::string digits = text;
  int64_t scale = 1;
  if (bytes) {
    for (const char* suffix : {"KiB", "kiB", "K", "k"}) {
      const std::string s(suffix);
      if (digits.size() > s.size() && digits.compare(digits.size() - s.size(), s.size(), s) == 0) {
        digits.resize(digits.size() - s.size());
        scale = 1024;
        break;
      }
    }
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgument(flag + " " + text + " is outside 0.." + std::to_string(max));
  }
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    return InvalidArgument(flag + " '" + text + "' is not a non-negative integer" +
                           (bytes ? " (bytes, or with a K suffix)" : ""));
  }
  if (value < 0 || value > max / scale) {
    return InvalidArgument(flag + " " + text + " is outside 0.." + std::to_string(max));
  }
  return value * scale;
}

struct Dims {
  int64_t x = 1, y = 1, z = 1;
  int64_t Product() const { return x * y * z; }
  std::string Text() const {
    return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
  }
};

// "256", "32x8", "32x8x2" (also with ',' or '*').
StatusOr<Dims> ParseDims(const std::string& flag, const std::string& text, int64_t max_each) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == 'x' || c == 'X' || c == ',' || c == '*') {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  if (parts.size() > 3) {
    return InvalidArgument(flag + " '" + text + "' has more than 3 dimensions (use N or XxYxZ)");
  }
  int64_t v[3] = {1, 1, 1};
  for (size_t i = 0; i < parts.size(); ++i) {
    auto parsed = ParseCount(flag, parts[i], false, max_each);
    if (!parsed.ok()) {
      return InvalidArgument(flag + " '" + text + "' is not N or XxYxZ with positive integers");
    }
    v[i] = *parsed;
  }
  return Dims{v[0], v[1], v[2]};
}

std::string LimitText(int v) { return v == kNoLimit ? "-" : std::to_string(v); }

class CalcSubcommand : public Subcommand {
 public:
  std::string name() const override { return "calc"; }
  std::string description() const override {
    return "Occupancy of one launch configuration on a GPU, with its limiter and advice "
           "(e.g. occ-report calc --gpu H100 --block 256 --regs 44)";
  }

  void AddFlags(CLI::App* app) override {
    app->add_option("--gpu", gpu_,
                    "GPU name or alias (H100, a100, \"RTX 4090\", ...) or compute capability "
                    "(sm_90, 9.0, 90)")
        ->required()
        ->type_name("NAME");
    app->add_option("--block", block_, "threads per block: N or XxYxZ")
        ->required()
        ->type_name("N|XxYxZ");
    app->add_option("--regs", regs_, "registers per thread (ptxas -v, ncu), 0..255; default 0")
        ->type_name("N");
    app->add_option("--smem-static", smem_static_,
                    "static shared memory per block, bytes (K suffix = KiB)")
        ->type_name("BYTES");
    app->add_option("--smem-dynamic", smem_dynamic_,
                    "dynamic shared memory per block, bytes (K suffix = KiB)")
        ->type_name("BYTES");
    app->add_option("--smem-config", smem_config_,
                    "executed shared-memory carveout, bytes (ncu 'Shared Memory Configuration "
                    "Size', CUPTI sharedMemoryExecuted): adds Nsight Compute's Smem row")
        ->type_name("BYTES");
    app->add_option("--carveout", carveout_, "requested carveout preference, percent 0..100")
        ->type_name("PCT");
    app->add_option("--cache-config", cache_config_, "cache preference: none, shared, l1, equal")
        ->check(CLI::IsMember({"none", "shared", "l1", "equal"}));
    app->add_flag("--opt-in", opt_in_,
                  "the kernel opted in to more than 48 KiB of dynamic shared memory "
                  "(cudaFuncAttributeMaxDynamicSharedMemorySize)");
    app->add_option("--barriers", barriers_,
                    "named barriers per block, 0..16 (default 1, an assumption; limits blocks on "
                    "sm_90 and newer)")
        ->type_name("N");
    app->add_option("--grid", grid_, "grid size in blocks, N or XxYxZ: adds waves and fixed-work advice")
        ->type_name("N|XxYxZ");
    app->add_option("--sms", sms_,
                    "SM count override (MIG, green contexts, or sm_XY without a reference GPU)")
        ->type_name("N");
    app->add_option("--local-mem", local_mem_,
                    "local memory per thread, bytes (spills: register caps get a warning)")
        ->type_name("BYTES");
    app->add_option("--format", format_, "output format: text or json")
        ->check(CLI::IsMember({"text", "json"}));
  }

  Status Run(const RunContext& ctx) override {
    OCC_ASSIGN_OR_RETURN(const int64_t sms, ParseCount("--sms", sms_.empty() ? "0" : sms_, false, 100000));
    OCC_ASSIGN_OR_RETURN(DeviceProps device, LookupGpu(gpu_, static_cast<int>(sms)));
    OCC_ASSIGN_OR_RETURN(const Dims block, ParseBlock(device));
    OCC_ASSIGN_OR_RETURN(const LaunchParams launch, ParseLaunch(device, block));
    OCC_ASSIGN_OR_RETURN(const AdviceInputs inputs, ParseAdviceInputs());

    OCC_ASSIGN_OR_RETURN(const LaunchAdvice advice, AdviseLaunch(device, launch, inputs));
    OCC_ASSIGN_OR_RETURN(const Curve curve, BlockSizeCurve(device, launch));
    OCC_ASSIGN_OR_RETURN(const Curve register_curve, RegisterCurve(device, launch));
    OCC_ASSIGN_OR_RETURN(const Curve smem_curve, SharedMemCurve(device, launch));

    occtrace::OccupancyCalc out;
    Fill(device, launch, block, inputs, advice, curve, &out);
    AddCurve(register_curve, out.mutable_register_curve());
    AddCurve(smem_curve, out.mutable_shared_mem_curve());
    if (regs_.empty()) out.add_notes("registers per thread not given (--regs): 0 assumed, so registers never limit");
    if (format_ == "json") {
      std::string json;
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = true;
      options.always_print_primitive_fields = true;
      options.add_whitespace = true;
      if (!google::protobuf::util::MessageToJsonString(out, &json, options).ok()) {
        return Internal("calc: JSON serialisation failed");
      }
      *ctx.out << json;
    } else {
      PrintText(out, launch, *ctx.out);
    }
    if (!*ctx.out) return IoError("calc: cannot write the output");
    return OkStatus();
  }

 private:
  // --block, within the GPU's threads per block.
  StatusOr<Dims> ParseBlock(const DeviceProps& device) const {
    OCC_ASSIGN_OR_RETURN(const Dims block, ParseDims("--block", block_, 1 << 20));
    if (block.Product() > device.max_threads_per_block || block.Product() == 0) {
      return InvalidArgument("block size " + std::to_string(block.Product()) + " (--block " + block_ +
                             ") is outside 1.." + std::to_string(device.max_threads_per_block) +
                             " threads per block on " + device.name);
    }
    if (block.z > 64) {
      return InvalidArgument("--block " + block_ + ": z is " + std::to_string(block.z) +
                             ", the limit is 64");
    }
    return block;
  }

  // The launch: --regs, the shared-memory flags, --carveout, --cache-config and --barriers.
  StatusOr<LaunchParams> ParseLaunch(const DeviceProps& device, const Dims& block) const {
    LaunchParams launch;
    launch.block_threads = static_cast<int>(block.Product());
    OCC_ASSIGN_OR_RETURN(const int64_t regs, ParseCount("--regs", regs_.empty() ? "0" : regs_, false, 1 << 20));
    if (regs > 255) {
      return InvalidArgument("--regs " + regs_ + " exceeds the maximum of 255 registers per thread");
    }
    launch.regs_per_thread = static_cast<int>(regs);
    OCC_RETURN_IF_ERROR(ParseSharedMemory(device, &launch));
    if (!carveout_.empty()) {
      OCC_ASSIGN_OR_RETURN(const int64_t pct, ParseCount("--carveout", carveout_, false, 1 << 20));
      if (pct > 100) return InvalidArgument("--carveout " + carveout_ + " is outside 0..100 (percent)");
      launch.carveout_pct = static_cast<int>(pct);
    }
    if (cache_config_ == "shared") launch.cache_config = CacheConfig::kPreferShared;
    if (cache_config_ == "l1") launch.cache_config = CacheConfig::kPreferL1;
    if (cache_config_ == "equal") launch.cache_config = CacheConfig::kPreferEqual;
    OCC_ASSIGN_OR_RETURN(const int64_t barriers,
                         ParseCount("--barriers", barriers_.empty() ? "1" : barriers_, false, 1 << 20));
    if (barriers > 16) {
      return InvalidArgument("--barriers " + barriers_ + " exceeds the 16 named barriers per block");
    }
    launch.num_block_barriers = static_cast<int>(barriers);
    return launch;
  }

  // --smem-static, --smem-dynamic, --smem-config and --opt-in into `launch`.
  Status ParseSharedMemory(const DeviceProps& device, LaunchParams* launch) const {
    const int64_t smem_max = 1 << 30;
    OCC_ASSIGN_OR_RETURN(const int64_t smem_static,
                         ParseCount("--smem-static", smem_static_.empty() ? "0" : smem_static_, true, smem_max));
    OCC_ASSIGN_OR_RETURN(const int64_t smem_dynamic,
                         ParseCount("--smem-dynamic", smem_dynamic_.empty() ? "0" : smem_dynamic_, true, smem_max));
    OCC_ASSIGN_OR_RETURN(const int64_t smem_config,
                         ParseCount("--smem-config", smem_config_.empty() ? "0" : smem_config_, true, smem_max));
    launch->static_smem = static_cast<int>(smem_static);
    launch->dynamic_smem = static_cast<int>(smem_dynamic);
    launch->executed_smem_config = static_cast<int>(smem_config);
    if (smem_config > 0 && smem_config < static_cast<int64_t>(smem_static) + smem_dynamic + device.reserved_smem_per_block) {
      return InvalidArgument("--smem-config " + smem_config_ + " is smaller than one block's " +
                             std::to_string(smem_static + smem_dynamic + device.reserved_smem_per_block) +
                             " B of shared memory (static + dynamic + driver reserve)");
    }
    if (opt_in_) {
      launch->shmem_limit_config = ShmemLimitConfig::kOptIn;
      launch->max_dynamic_smem = std::max(0, std::max(device.smem_per_block_optin, device.smem_per_block) -
                                                 launch->static_smem);
    }
    return OkStatus();
  }

  // What the advice needs beyond the launch: --grid, --local-mem, whether --barriers was given.
  StatusOr<AdviceInputs> ParseAdviceInputs() const {
    AdviceInputs inputs;
    inputs.barrier_count_known = !barriers_.empty();
    if (!grid_.empty()) {
      OCC_ASSIGN_OR_RETURN(const Dims grid, ParseDims("--grid", grid_, 2147483647LL));
      if (grid.Product() == 0 || grid.y > 65535 || grid.z > 65535 || grid.Product() > kMaxGridBlocks) {
        return InvalidArgument("--grid " + grid_ + ": needs 1..2147483647 x 1..65535 x 1..65535 blocks");
      }
      inputs.grid_blocks = grid.Product();
    }
    OCC_ASSIGN_OR_RETURN(const int64_t local_mem,
                         ParseCount("--local-mem", local_mem_.empty() ? "0" : local_mem_, true, 1 << 24));
    inputs.local_memory_per_thread = static_cast<int>(local_mem);
    return inputs;
  }

  static void AddCurve(const Curve& curve,
                       google::protobuf::RepeatedPtrField<occtrace::OccupancyCurvePoint>* out) {
    for (const auto& p : curve.points) {
      auto* c = out->Add();
      c->set_x(p.x);
      c->set_active_blocks_per_sm(p.active_blocks_per_sm);
      c->set_active_warps_per_sm(p.active_warps_per_sm);
      c->set_occupancy_pct(p.occupancy_pct);
      for (const auto& n : LimitingFactorNames(p.limiting_factors)) c->add_limiting_factors(n);
    }
  }

  static void Fill(const DeviceProps& d, const LaunchParams& l, const Dims& block,
                   const AdviceInputs& in, const LaunchAdvice& a, const Curve& curve,
                   occtrace::OccupancyCalc* out) {
    const OccupancyResult& r = a.occupancy;
    out->set_gpu(d.name);
    out->set_compute_capability(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    out->set_num_sms(d.num_sms);
    out->set_block_size(l.block_threads);
    out->set_block_dims(block.Text());
    out->set_registers_per_thread(l.regs_per_thread);
    out->set_static_shared_mem(l.static_smem);
    out->set_dynamic_shared_mem(l.dynamic_smem);
    out->set_shared_mem_config(l.executed_smem_config);
    out->set_carveout_pct(l.carveout_pct);
    out->set_opt_in(l.shmem_limit_config == ShmemLimitConfig::kOptIn);
    out->set_barriers(l.num_block_barriers);
    out->set_grid_blocks(in.grid_blocks);
    out->set_theoretical_occupancy_pct(r.theoretical_occupancy_pct);
    out->set_active_blocks_per_sm(r.active_blocks_per_sm);
    out->set_active_warps_per_sm(r.active_warps_per_sm);
    out->set_max_warps_per_sm(r.max_warps_per_sm);
    out->set_warps_per_block(r.warps_per_block);
    out->set_block_limit_warps(r.block_limit_warps);
    out->set_block_limit_registers(r.block_limit_registers);
    out->set_block_limit_shared_mem(r.block_limit_shared_mem);
    out->set_block_limit_blocks(r.block_limit_blocks);
    out->set_block_limit_barriers(r.block_limit_barriers);
    out->set_block_limit_virtual(r.block_limit_virtual);
    for (const auto& n : LimitingFactorNames(r.limiting_factors)) out->add_limiting_factors(n);
    out->set_allocated_registers_per_block(r.allocated_registers_per_block);
    out->set_allocated_registers_per_thread(r.allocated_registers_per_thread);
    out->set_allocated_shared_mem_per_block(r.allocated_shared_mem_per_block);
    out->set_shared_mem_config_bytes(r.shared_mem_config_bytes);
    out->set_ncu_block_limit_shared_mem(r.ncu_block_limit_shared_mem);
    out->set_ncu_block_limit_barriers(r.ncu_block_limit_barriers);
    for (const auto& n : LimitingFactorNames(RealLimiters(r))) out->add_real_limiters(n);
    out->set_primary_limiter(a.primary_limiter);
    out->set_limiter_sentence(a.limiter_sentence);
    if (a.waves) {
      auto* w = out->mutable_waves();
      w->set_grid_blocks(a.waves->grid_blocks);
      w->set_blocks_per_wave(a.waves->blocks_per_wave);
      w->set_waves_per_sm(a.waves->waves_per_sm);
      w->set_full_waves(a.waves->full_waves);
      w->set_tail_blocks(a.waves->tail_blocks);
      w->set_tail_pct(a.waves->tail_pct);
      w->set_wave_efficiency(a.waves->wave_efficiency);
      w->set_grid_below_sm_count(a.waves->grid_below_sm_count);
      w->set_tail_sentence(TailSentence(*a.waves));
    }
    AddCurve(curve, out->mutable_block_size_curve());
    for (const auto& s : a.registers.steps) {
      auto* p = out->add_register_steps();
      p->set_max_registers_per_thread(s.max_registers_per_thread);
      p->set_active_blocks_per_sm(s.active_blocks_per_sm);
      p->set_occupancy_pct(s.occupancy_pct);
    }
    out->set_register_headroom(a.registers.headroom_registers);
    for (const auto& s : a.shared_memory.steps) {
      auto* p = out->add_shared_mem_steps();
      p->set_max_user_smem_per_block(s.max_user_smem_per_block);
      p->set_active_blocks_per_sm(s.active_blocks_per_sm);
      p->set_occupancy_pct(s.occupancy_pct);
      p->set_carveout_bytes(s.carveout_bytes);
    }
    out->set_shared_mem_headroom_bytes(a.shared_memory.headroom_bytes);
    for (const auto& s : a.suggestions) {
      ToProto(s, out->add_suggestions());
    }
    out->set_block_size_verdict(a.block_size.verdict);
    out->set_register_verdict(a.registers.verdict);
    out->set_shared_mem_verdict(a.shared_memory.verdict);
    out->set_block_size_assumptions(a.block_size.assumptions);
    for (const auto& n : a.notes) out->add_notes(n);
  }

  static void PrintText(const occtrace::OccupancyCalc& c, const LaunchParams& l, std::ostream& os) {
    PrintLaunch(c, os);
    PrintBlockLimits(c, os);
    if (c.has_waves()) PrintWaves(c.waves(), os);
    PrintBlockSizeCurve(c, l, os);
    PrintAdvice(c, os);
    if (!c.notes().empty()) {
      os << "\nNotes\n";
      for (const auto& note : c.notes()) os << "  - " << note << "\n";
    }
  }

  // The GPU, the launch as given, its theoretical occupancy and the limiter in words.
  static void PrintLaunch(const occtrace::OccupancyCalc& c, std::ostream& os) {
    os << c.gpu() << " (compute capability " << c.compute_capability() << ", " << c.num_sms()
       << " SMs)\n";
    os << "Launch: block " << c.block_dims() << " = " << c.block_size() << " threads ("
       << c.warps_per_block() << " warps), " << c.registers_per_thread() << " registers/thread ("
       << c.allocated_registers_per_thread() << " allocated), shared memory " << c.static_shared_mem()
       << " B static + " << c.dynamic_shared_mem() << " B dynamic (" << c.allocated_shared_mem_per_block()
       << " B allocated)" << (c.opt_in() ? ", opt-in" : "") << ", " << c.barriers() << " barrier"
       << (c.barriers() == 1 ? "" : "s");
    if (c.carveout_pct() >= 0) os << ", carveout " << c.carveout_pct() << "%";
    if (c.grid_blocks() > 0) os << ", grid " << c.grid_blocks() << " blocks";
    os << "\n\n";
    os << "Theoretical occupancy  " << Pct(c.theoretical_occupancy_pct()) << "  ("
       << c.active_warps_per_sm() << " of " << c.max_warps_per_sm() << " warps/SM, "
       << c.active_blocks_per_sm() << (c.active_blocks_per_sm() == 1 ? " block/SM)\n" : " blocks/SM)\n");
    os << c.limiter_sentence() << "\n\n";
  }

  // Nsight Compute's block-limit rows, the binding ones marked.
  static void PrintBlockLimits(const occtrace::OccupancyCalc& c, std::ostream& os) {
    os << "Block limit (blocks/SM)\n";
    auto row = [&](const char* name, int value, const char* factor, const std::string& note) {
      bool header_bit = false, real = false;
      for (const auto& f : c.limiting_factors()) header_bit = header_bit || f == factor;
      for (const auto& f : c.real_limiters()) real = real || f == factor;
      // The header keeps e.g. WARPS set when barriers lower the result: say which bits bind.
      const char* mark = real ? "<- limiting" : header_bit ? "(cuda_occupancy.h sets this bit too)" : "";
      char buf[160];
      std::snprintf(buf, sizeof(buf), "  %-22s %6s %s", name, LimitText(value).c_str(), mark);
      std::string line = buf;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      os << line << note << "\n";
    };
    row("Registers", c.block_limit_registers(), "registers", "");
    row("Shared Mem", c.block_limit_shared_mem(), "shared_memory",
        "  (carveout " + std::to_string(c.shared_mem_config_bytes()) + " B)");
    row("Warps", c.block_limit_warps(), "warps", "");
    row("SM (blocks)", c.block_limit_blocks(), "blocks", "");
    // Nsight Compute's Block Limit Barriers: the barrier pool's limit capped by the SM's block
    // limit (cuda_occupancy.h's own figure, e.g. 64 on an H100 for one barrier, can never bind
    // above the 32 blocks/SM). The reports print the same value (reports/report_facts.cc).
    row("Barriers", c.ncu_block_limit_barriers() > 0 ? c.ncu_block_limit_barriers() : c.block_limit_barriers(),
        "barriers", "");
    if (c.block_limit_virtual() != kNoLimit) row("Virtual resources", c.block_limit_virtual(), "virtual", "");
    os << "  Nsight Compute shows: Shared Mem " << LimitText(c.ncu_block_limit_shared_mem())
       << (c.shared_mem_config() > 0 ? " (executed carveout " + std::to_string(c.shared_mem_config()) + " B)"
                                     : " (executed carveout unknown: header value)")
       << "\n";
  }

  static void PrintWaves(const occtrace::WaveStats& w, std::ostream& os) {
    char buf[200];
    if (w.blocks_per_wave() == 0) {
      std::snprintf(buf, sizeof(buf), "\nWaves: none (no block of this launch fits on an SM)");
    } else {
      std::snprintf(buf, sizeof(buf), "\nWaves: %.2f per SM (%lld blocks per wave)",
                    w.waves_per_sm(), static_cast<long long>(w.blocks_per_wave()));
    }
    os << buf;
    if (!w.tail_sentence().empty()) os << "; " << w.tail_sentence();
    os << "\n";
  }

  static void PrintBlockSizeCurve(const occtrace::OccupancyCalc& c, const LaunchParams& l, std::ostream& os) {
    os << "\nOccupancy vs block size (" << l.regs_per_thread << " registers/thread and "
       << (l.static_smem + l.dynamic_smem) << " B shared memory per block held fixed)\n";
    for (const auto& p : c.block_size_curve()) {
      const int width = static_cast<int>(p.occupancy_pct() / 100.0 * 40.0 + 0.5);
      char buf[160];
      std::snprintf(buf, sizeof(buf), "  %5d %3d blk %7s |%-40s|", p.x(), p.active_blocks_per_sm(),
                    Pct(p.occupancy_pct()).c_str(), std::string(static_cast<size_t>(width), '#').c_str());
      os << buf << (p.x() == c.block_size() ? " <- current" : "") << "\n";
    }
  }

  // The numbered suggestions, then each resource's verdict with its steps.
  static void PrintAdvice(const occtrace::OccupancyCalc& c, std::ostream& os) {
    os << "\nAdvice\n";
    if (c.suggestions().empty()) {
      os << "  No change raises theoretical occupancy or the use of the GPU for this launch.\n";
    }
    int n = 1;
    for (const auto& s : c.suggestions()) {
      os << "  " << n++ << ". " << s.text() << "\n     assumes: " << s.assumptions() << "\n";
    }
    // A verdict that is one of the numbered suggestions refers to it instead of repeating it.
    auto verdict = [&](const char* what, const std::string& text) {
      for (int i = 0; i < c.suggestions_size(); ++i) {
        if (c.suggestions(i).text() == text) {
          os << "  " << what << ": advice " << i + 1 << " above\n";
          return;
        }
      }
      os << "  " << what << ": " << text << "\n";
    };
    verdict("Block size", c.block_size_verdict());
    verdict("Registers", c.register_verdict());
    if (!c.register_steps().empty()) {
      os << "    caps:";
      for (const auto& s : c.register_steps()) {
        os << " <=" << s.max_registers_per_thread() << " -> " << s.active_blocks_per_sm() << " blk ("
           << Pct(s.occupancy_pct()) << ");";
      }
      os << "\n";
    }
    verdict("Shared memory", c.shared_mem_verdict());
    if (!c.shared_mem_steps().empty()) {
      os << "    budgets:";
      for (const auto& s : c.shared_mem_steps()) {
        os << " <=" << s.max_user_smem_per_block() << " B -> " << s.active_blocks_per_sm() << " blk ("
           << Pct(s.occupancy_pct()) << ");";
      }
      os << "\n";
    }
  }

  std::string gpu_, block_, regs_, smem_static_, smem_dynamic_, smem_config_, carveout_;
  std::string cache_config_ = "none";
  bool opt_in_ = false;
  std::string barriers_, grid_, sms_, local_mem_;
  std::string format_ = "text";
};

}  // namespace

std::unique_ptr<Subcommand> MakeCalcSubcommand() { return std::make_unique<CalcSubcommand>(); }

}  // namespace occ
