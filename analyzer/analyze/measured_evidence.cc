#include "analyzer/analyze/measured_evidence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "analyzer/analyze/function_key.h"
#include "analyzer/analyze/kernel_origin.h"
#include "analyzer/analyze/throughput_ceiling.h"
#include "analyzer/model/register_advice.h"

namespace occ {
namespace {

// A configuration must be this much faster per launch to count as measured evidence: run-to-run
// spread of one configuration in the recorded traces stays well below it.
constexpr double kFasterRatio = 0.9;
// Short-lived blocks: block lifetime below this, over at least kMinWaves waves, with achieved
// occupancy below kGapRatio of theoretical.
constexpr double kShortBlockNs = 5000;
constexpr double kMinWaves = 2.0;
constexpr double kGapRatio = 0.6;

// Concurrent kernels (launch_overlap.h). A configuration whose launches overlapped other kernels
// is compared by the mean of its launches that ran alone when at least kMinSoloLaunches of them
// did, and at least kMinSoloShare of its launches or kEnoughSoloLaunches in all: ten launches put
// a mean's run-to-run spread (a few % in the recorded traces) well inside the 10 % a faster
// configuration must win by, and a tenth of the launches keeps a few solo ones from being
// outliers (the first launch). Fifty are a measurement whatever their share: a program that runs
// each configuration alone first and then all at once (tests/gpu/advice/concurrent_sweep.cu, H200)
// had 103 of 1,601 launches alone at block 32, whose solo mean (159.2 µs) matched its own
// serialized timing (160.8 µs). Below kNegligibleOverlapPct of its time overlapped, every
// launch counts as alone: a kernel slowed even to half speed while shared loses at most that
// share of its mean, well inside the 10 % margin (the same program's block 64 run with nothing
// alone had 2.9 % of its time shared, its neighbours' edges). Where both sides had kMostlyOverlappedPct or more of their time
// overlapped without enough solo launches, the means measure contention and are not compared.
constexpr int64_t kMinSoloLaunches = 10;
constexpr double kMinSoloShare = 0.1;
constexpr int64_t kEnoughSoloLaunches = 50;
constexpr double kNegligibleOverlapPct = 5;
constexpr double kMostlyOverlappedPct = 50;

// What a configuration's launches are compared by.
struct Basis {
  double mean_ns = 0;
  bool solo = false;        // the mean of its launches that ran alone
  bool overlapped = false;  // overlapped, too few ran alone: its mean includes contention
};

Basis BasisOf(const occtrace::KernelGroup& g) {
  if (!g.has_overlap() || g.overlap().overlapped_pct() < kNegligibleOverlapPct) return {g.mean_ns(), false, false};
  const occtrace::LaunchOverlap& o = g.overlap();
  if (o.solo_launches() >= kMinSoloLaunches &&
      (o.solo_launches() >= kEnoughSoloLaunches ||
       static_cast<double>(o.solo_launches()) >= kMinSoloShare * static_cast<double>(o.launches()))) {
    return {o.solo_mean_ns(), true, false};
  }
  return {g.mean_ns(), false, true};
}

double ComparableMean(const occtrace::KernelGroup& g) { return BasisOf(g).mean_ns; }

std::string Micros(double ns) {
  char text[32];
  std::snprintf(text, sizeof(text), ns >= 100'000 ? "%.0f µs" : "%.1f µs", ns / 1000.0);
  return text;
}

std::string Count(double n) {
  char text[32];
  if (n >= 1e6) {
    std::snprintf(text, sizeof(text), "%.2f M", n / 1e6);
  } else if (n >= 1e4) {
    std::snprintf(text, sizeof(text), "%.1f k", n / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.0f", n);
  }
  return text;
}

int64_t GridBlocks(const occtrace::KernelGroup& g) {
  return int64_t{std::max(1, g.grid_x())} * std::max(1, g.grid_y()) * std::max(1, g.grid_z());
}
int64_t BlockThreads(const occtrace::KernelGroup& g) {
  return int64_t{std::max(1, g.block_x())} * std::max(1, g.block_y()) * std::max(1, g.block_z());
}

int64_t Threads(const occtrace::KernelGroup& g) { return GridBlocks(g) * BlockThreads(g); }

// The same work: a grid of ceil(n / block) blocks launches n threads rounded up to whole blocks,
// so two block sizes over the same n differ by less than the larger block (saxpy over 4,194,304
// floats at block 96 launches 4,194,336 threads). The rounding must also be small against the
// work (1 %): one block of 1,024 threads and one of 128 could cover the same 100 items, but
// nothing says they do.
bool SameWork(const occtrace::KernelGroup& a, const occtrace::KernelGroup& b) {
  const int64_t larger = std::max(Threads(a), Threads(b));
  const int64_t difference = larger - std::min(Threads(a), Threads(b));
  return difference < std::max(BlockThreads(a), BlockThreads(b)) && difference * 100 <= larger;
}

std::string Dims(int x, int y, int z) {
  std::string s = std::to_string(x);
  if (y > 1 || z > 1) s += ", " + std::to_string(y);
  if (z > 1) s += ", " + std::to_string(z);
  return y > 1 || z > 1 ? "(" + s + ")" : s;
}

// A block as its owner wrote it: 256, or (32, 8) for a 2-D block.
std::string BlockText(const occtrace::KernelGroup& g) { return Dims(g.block_x(), g.block_y(), g.block_z()); }

// The measured configuration `g` written the way its owner sets it, from `now`. Triton launches
// 32 x num_warps threads per program over cdiv(n, XBLOCK) programs: num_warps never changes the
// grid, so another grid names XBLOCK (BLOCK_SIZE in a hand-written kernel) as well.
std::string ConfigInOwnersWords(KernelOriginKind kind, const occtrace::KernelGroup& g,
                                const occtrace::KernelGroup& now) {
  const std::string grid = Dims(g.grid_x(), g.grid_y(), g.grid_z());
  const std::string block = Dims(g.block_x(), g.block_y(), g.block_z());
  switch (kind) {
    case KernelOriginKind::kNumba: return "kernel[" + grid + ", " + block + "]";
    case KernelOriginKind::kCuPy: {
      // CuPy takes tuples: (n,) for one dimension, (x, y) as written for more.
      auto tuple = [](const std::string& d) { return d.front() == '(' ? d : "(" + d + ",)"; };
      return "kernel(" + tuple(grid) + ", " + tuple(block) + ", args)";
    }
    case KernelOriginKind::kTriton:
    case KernelOriginKind::kInductor: {
      const std::string warps = "num_warps=" + std::to_string(BlockThreads(g) / 32);
      if (GridBlocks(g) == GridBlocks(now)) return warps + " (the same grid, " + grid + " programs)";
      const std::string xblock = kind == KernelOriginKind::kInductor ? "XBLOCK" : "BLOCK_SIZE";
      return warps + " and the " + xblock + " that launches " + grid + " programs (grid = cdiv(n, " + xblock +
             "); " + std::to_string(GridBlocks(now)) + " now)";
    }
    default: return "<<<" + grid + ", " + block + ">>>";
  }
}

bool IsLaunchConfigSuggestion(const occtrace::Suggestion& s) {
  return s.kind() == "block_size" || s.kind() == "register_cap" || s.kind() == "shared_memory" ||
         s.kind() == "grid_size" || s.kind() == "cluster" || s.kind() == "barriers";
}

void MarkNotTunable(const KernelOrigin& origin, occtrace::KernelGroup* g) {
  auto* suggestions = g->mutable_suggestions();
  suggestions->erase(std::remove_if(suggestions->begin(), suggestions->end(), IsLaunchConfigSuggestion),
                     suggestions->end());
  g->set_headroom_pct(0);
  g->set_priority(0);
  g->set_recoverable_ns_upper_bound(0);
  if (origin.kind == KernelOriginKind::kHeaderLibrary) {
    // Compiled into the user's binary, yet not the user's code: the template chooses its launch.
    g->add_issues("not tunable from your code: a " + origin.library + " kernel" +
                  (origin.compiled_into.empty() ? "" : " compiled into " + origin.compiled_into) +
                  " picks its own launch configuration; what you control is " + origin.controls);
    return;
  }
  g->add_issues("not tunable from your code: a " + origin.library +
                " kernel picks its own launch configuration; what you control is the call — tensor "
                "shapes and their alignment (multiples of 8/16), dtype, memory layout (e.g. "
                "channels_last), batch size, or a fused alternative");
}

// `larger_measured_not_faster`: the trace ran this function with larger blocks on the same work
// and they were not faster, which contradicts the advice.
void AddShortBlockAdvice(KernelOriginKind kind, bool larger_measured_not_faster, occtrace::KernelGroup* g) {
  // Near a hardware ceiling the gap is not what limits the kernel; measured on another GPU than
  // the one judged (--gpu), there is no gap to read.
  if (larger_measured_not_faster || NearCeiling(*g) || !g->achieved().measured_on_gpu().empty()) return;
  const auto& a = g->achieved();
  const double theoretical = g->occupancy().theoretical_occupancy_pct();
  if (a.samples() <= 0 || theoretical <= 0 || a.mean_pct() >= kGapRatio * theoretical) return;
  if (g->waves_per_sm() < kMinWaves || g->mean_ns() <= 0) return;
  const double lifetime_ns = g->mean_ns() / g->waves_per_sm();
  if (lifetime_ns >= kShortBlockNs) return;
  occtrace::Suggestion* s = g->add_suggestions();
  s->set_kind("larger_blocks");
  char measured[160];
  std::snprintf(measured, sizeof(measured),
                "achieved %.1f%% of %.1f%% theoretical (%s) over %.1f waves: each block lives ~%s",
                a.mean_pct(), theoretical, a.source() == "pm" ? "PM samples" : "measured", g->waves_per_sm(), Micros(lifetime_ns).c_str());
  std::string fix;
  switch (kind) {
    case KernelOriginKind::kInductor:
      fix = "let Inductor pick larger blocks (torch._inductor.config.coordinate_descent_tuning = True, "
            "or torch.compile(mode=\"max-autotune\")): larger XBLOCK/RBLOCK give each block more work";
      break;
    case KernelOriginKind::kTriton:
      fix = "give each program more work: a larger BLOCK_SIZE constexpr (triton.Config({'BLOCK_SIZE': ...}, "
            "num_warps=...))";
      break;
    default:
      fix = "give each block more work: larger blocks (" + LaunchKnob(kind) +
            ") or several elements per thread (a grid-stride loop)";
  }
  s->set_text("Blocks are too short-lived for the block scheduler to keep SMs full (" + std::string(measured) +
              "): " + fix + ". Confidence: medium (the gap's cause is inferred from block lifetime)");
  s->set_block_size(static_cast<int32_t>(BlockThreads(*g)));
  s->set_assumptions("same total work; gain not predicted by the occupancy model");
}

// The occupancy model's suggestions are worded for CUDA C++ (__launch_bounds__, -maxrregcount,
// <<<grid, block>>>): say what the same change is in the owner's knob, keeping the model's
// figures after it.
// Triton's compile settings as a triton.Config's keyword arguments, with `change` replacing or
// adding one: "num_warps=4, num_stages=3, maxnreg=72". Recorded values are kept where known.
std::string TritonConfigArgs(const occtrace::KernelGroup& g, const std::string& change_key, int change_value) {
  std::string args;
  auto add = [&](const std::string& key, int value) {
    if (value < 0) return;
    args += (args.empty() ? "" : ", ") + key + "=" + std::to_string(value);
  };
  add("num_warps", change_key == "num_warps" ? change_value : (g.triton_num_warps() > 0 ? g.triton_num_warps() : -1));
  if (g.triton_num_warps() > 0) add("num_stages", g.triton_num_stages());
  if (change_key != "num_warps") add(change_key, change_value);
  return args;
}

// A register cap for a kernel compiled with __launch_bounds__(M): said as a change of it. The
// second argument N' asks for N' resident blocks of M threads; B x N threads at the launched
// block B need B x N = M x N' (the same registers per thread), else the bound moves to B.
std::string CapAsLaunchBoundsChange(const occtrace::KernelGroup& g, const occtrace::Suggestion& s) {
  const int64_t bound = g.launch_bounds_max_threads();
  const int64_t block = BlockThreads(g);
  const int64_t blocks = s.predicted_blocks_per_sm();
  const std::string now = "__launch_bounds__(" + std::to_string(bound) + ")";
  if (bound == block || (block * blocks) % bound == 0) {
    const int64_t min_blocks = block * blocks / bound;
    if (min_blocks >= 1) {
      return "change " + now + " to __launch_bounds__(" + std::to_string(bound) + ", " + std::to_string(min_blocks) + ")";
    }
  }
  return "change " + now + " to __launch_bounds__(" + std::to_string(block) + ", " + std::to_string(blocks) +
         ") (the bound lowered to the " + std::to_string(block) + " threads it launches with)";
}

// The model's register cap is worded for CUDA C++: a kernel compiled with __launch_bounds__ gets
// it as a change of that bound, and -maxrregcount (a flag for the whole translation unit) is
// named only for the user's own CUDA C++.
void PhraseRegisterCap(KernelOriginKind kind, const occtrace::KernelGroup& g, occtrace::Suggestion* s) {
  std::string text = s->text();
  const std::string_view reach = kMaxrregcountReach.substr(0, kMaxrregcountReach.find("%d"));
  if (kind != KernelOriginKind::kCudaCpp) {
    if (const size_t at = text.find(reach); at != std::string::npos) {
      text.erase(at, text.find(')', at) + 1 - at);
    }
  }
  const std::string proposed = "__launch_bounds__(" + std::to_string(BlockThreads(g)) + ", " +
                               std::to_string(s->predicted_blocks_per_sm()) + ") on this kernel";
  if (kind == KernelOriginKind::kCudaCpp && g.launch_bounds_max_threads() > 0) {
    if (const size_t at = text.find(proposed); at != std::string::npos) {
      text.replace(at, proposed.size(), CapAsLaunchBoundsChange(g, *s));
    }
  }
  s->set_text(text);
}

void PhraseForOwner(KernelOriginKind kind, const occtrace::KernelGroup& g, occtrace::Suggestion* s) {
  std::string knob;
  const bool triton = kind == KernelOriginKind::kTriton || kind == KernelOriginKind::kInductor;
  if (s->kind() == "register_cap") PhraseRegisterCap(kind, g, s);
  if (s->kind() == "register_cap") {
    if (triton) {
      knob = "cap registers: triton.Config({...}, " + TritonConfigArgs(g, "maxnreg", s->registers_per_thread()) + ")";
    } else if (kind == KernelOriginKind::kNumba) {
      knob = "@cuda.jit(max_registers=" + std::to_string(s->registers_per_thread()) + ")";
    }
  } else if (s->kind() == "block_size" && s->block_size() > 0) {
    if (triton) {
      // The model's text (group_advice.cc) says what num_warps changes and that the grid stays.
      knob = "triton.Config({...}, " + TritonConfigArgs(g, "num_warps", std::max(1, s->block_size() / 32)) + ")";
    } else if (kind == KernelOriginKind::kNumba) {
      // A 2-D or 3-D block is suggested as a shape (group_advice.cc): Numba takes it as a tuple.
      std::string block = std::to_string(s->block_size());
      if (s->block_y() > 1 || s->block_z() > 1) {
        block = "(" + std::to_string(s->block_x()) + ", " + std::to_string(s->block_y()) +
                (s->block_z() > 1 ? ", " + std::to_string(s->block_z()) : "") + ")";
      }
      knob = "kernel[grid, " + block + "] (grid scaled to keep the work)";
    }
  } else if (s->kind() == "shared_memory" && triton) {
    knob = "use less shared memory: fewer num_stages or smaller block constexprs";
  } else if (s->kind() == "grid_size" && triton) {
    // The grid is cdiv(n, XBLOCK) programs: num_warps never changes it.
    knob = "more programs: a smaller XBLOCK (BLOCK_SIZE in a hand-written kernel), as the grid is cdiv(n, XBLOCK)";
  }
  if (knob.empty()) return;
  if (kind == KernelOriginKind::kInductor) knob += " — for Inductor kernels through its autotuning configs";
  s->set_text(knob + ". Model: " + s->text());
}

// The configurations of one function (`members`, indexes into `groups`) that ran the same work as
// groups[i], one point per block shape (the fastest where two configurations share one), when
// at least two shapes ran it. Shapes, not thread counts: (32, 8) and (16, 16) are different
// launches with different speeds, and the advice names the fastest shape.
void AddMeasuredPoints(const std::vector<size_t>& members, size_t i,
                       std::vector<occtrace::KernelGroup>* groups) {
  auto& g = (*groups)[i];
  const int64_t threads = Threads(g);
  // (threads per block, x, y, z): ordered by block size, then shape.
  std::map<std::tuple<int64_t, int, int, int>, const occtrace::KernelGroup*> by_shape;
  for (size_t j : members) {
    const auto& h = (*groups)[j];
    if (!SameWork(g, h)) continue;
    const occtrace::KernelGroup*& slot = by_shape[{BlockThreads(h), h.block_x(), h.block_y(), h.block_z()}];
    if (slot == nullptr || j == i || (slot != &g && ComparableMean(h) < ComparableMean(*slot))) slot = &h;
  }
  if (by_shape.size() < 2) return;
  g.set_measured_work_threads(threads);
  for (const auto& [shape, h] : by_shape) {
    occtrace::MeasuredPoint* p = g.add_measured_points();
    p->set_block_size(static_cast<int32_t>(std::get<0>(shape)));
    p->set_block_x(h->block_x());
    p->set_block_y(h->block_y());
    p->set_block_z(h->block_z());
    p->set_launches(h->launches());
    const Basis basis = BasisOf(*h);
    p->set_mean_ns(basis.mean_ns);
    p->set_solo(basis.solo);
    p->set_theoretical_pct(h->occupancy().theoretical_occupancy_pct());
    p->set_achieved_pct(h->achieved().samples() > 0 ? h->achieved().mean_pct() : -1.0);
    p->set_current(h == &g);
  }
}

// One compiled function: FunctionKeyOf (function_key.h), shared with one action per function.

// A configuration must keep running this long after its name's other configurations stopped for
// those to count as an autotuner's trials: one step or two after the others is a program that
// runs the kernel two ways; XLA's and Triton's choices ran 200-300 more times in the recorded
// traces.
constexpr int64_t kMinChosenTailLaunches = 10;

// Who tunes a kernel of this origin by measuring candidates, if anyone.
std::string AutotunerOf(const KernelOrigin& o) {
  switch (o.kind) {
    case KernelOriginKind::kTriton: return "Triton's autotuner (@triton.autotune)";
    case KernelOriginKind::kInductor:
      return "Inductor's autotuner (it benchmarks a kernel's candidate configs at its first call; max-autotune adds more)";
    case KernelOriginKind::kVendor:
      if (o.library == "XLA (jaxlib)") return "XLA's autotuner";
      if (o.library == "cuBLAS" || o.library == "cuBLASLt") return "cuBLASLt's algorithm selection";
      if (o.library == "cuDNN") return "cuDNN's algorithm search (e.g. torch.backends.cudnn.benchmark)";
      return "";
    default: return "";
  }
}

// Compiled variants per name, and autotuning: where one configuration of a name ran on
// (kMinChosenTailLaunches or more launches) after all the others had stopped, and the owner
// tunes by measuring, the others were the autotuner's trials and the one that ran on its choice.
void MarkVariantsAndAutotuning(const std::vector<KernelOrigin>& origins, std::vector<occtrace::KernelGroup>* groups) {
  std::map<std::pair<std::string, int>, std::vector<size_t>> by_name;
  for (size_t i = 0; i < groups->size(); ++i) {
    by_name[{(*groups)[i].mangled_name(), (*groups)[i].device_id()}].push_back(i);
  }
  for (const auto& [name, members] : by_name) {
    std::set<std::tuple<int, int, int>> variants;
    for (size_t i : members) {
      const auto& g = (*groups)[i];
      variants.insert({g.registers_per_thread(), g.static_shared_mem(), g.local_mem_per_thread()});
    }
    for (size_t i : members) (*groups)[i].set_name_variants(static_cast<int32_t>(variants.size()));
    if (members.size() < 2) continue;
    std::string autotuner;
    for (size_t i : members) {
      if (autotuner.empty()) autotuner = AutotunerOf(origins[i]);
    }
    if (autotuner.empty()) continue;
    size_t chosen = members.size();
    for (size_t k = 0; k < members.size(); ++k) {
      if ((*groups)[members[k]].tail_launches() >= kMinChosenTailLaunches) chosen = k;
    }
    if (chosen == members.size()) continue;
    for (size_t k = 0; k < members.size(); ++k) {
      auto& g = (*groups)[members[k]];
      g.set_autotuner(autotuner);
      g.set_autotuning_trial(k != chosen && g.tail_launches() == 0);
    }
  }
}

void ClearLaunchAdvice(occtrace::KernelGroup* g) {
  auto* suggestions = g->mutable_suggestions();
  suggestions->erase(std::remove_if(suggestions->begin(), suggestions->end(), IsLaunchConfigSuggestion),
                     suggestions->end());
  g->set_headroom_pct(0);
  g->set_priority(0);
  g->set_recoverable_ns_upper_bound(0);
}

void MarkAutotuningTrial(occtrace::KernelGroup* g) {
  ClearLaunchAdvice(g);
  g->clear_suggestions();
  g->set_measured_gain_ns(0);
  g->add_issues("autotuning trial: " + g->autotuner() + " launched this variant in a burst while choosing, "
                "and another ran on after it stopped; not part of the running program, so no advice");
}

// The autotuner measured its candidates and chose this one; the trace has no evidence that a
// configuration outside its list would win, so no launch-configuration advice.
void MarkAutotunerChoice(occtrace::KernelGroup* g) {
  ClearLaunchAdvice(g);
  g->set_measured_gain_ns(0);
  g->add_issues("chosen by " + g->autotuner() + " after measuring the other configurations of this name "
                "in this trace: no launch-configuration advice, as nothing here shows a configuration "
                "outside its list would win");
}

// Occupancy suggestions against the kernel's own measured throughput: near a ceiling, more
// resident warps cannot help (throughput_ceiling.h); the verdict says what would.
void DropOccupancySuggestions(occtrace::KernelGroup* g) {
  auto* suggestions = g->mutable_suggestions();
  const int before = suggestions->size();
  suggestions->erase(std::remove_if(suggestions->begin(), suggestions->end(),
                                    [](const occtrace::Suggestion& s) {
                                      return IsLaunchConfigSuggestion(s) && s.kind() != "grid_size";
                                    }),
                     suggestions->end());
  g->set_headroom_pct(0);
  g->set_priority(0);
  g->set_recoverable_ns_upper_bound(0);
  if (suggestions->size() < before) {
    g->add_issues("no occupancy change suggested: " + g->achieved().throughput().summary());
  }
}

// Nobody identified the owner: the suggestions stay, measured ones too, said to be conditional.
void AddUnknownOwnerCaveat(occtrace::KernelGroup* g) {
  for (auto& s : *g->mutable_suggestions()) {
    s.set_text("Owner unknown (no loading library recorded, name not recognized); if you launch it "
               "yourself: " + s.text());
  }
}

// Each group's owner, from the library that loaded its code and its name (kernel_origin.h).
std::vector<KernelOrigin> ClassifyOwners(std::vector<occtrace::KernelGroup>* groups) {
  std::vector<KernelOrigin> origins;
  origins.reserve(groups->size());
  // Triton's cache keeps one compilation per name, quoted only on the configuration it matches
  // (judge.cc); the name is Triton's for all its configurations.
  std::set<std::string> triton_names;
  for (const auto& g : *groups) {
    if (g.triton_num_warps() > 0) triton_names.insert(g.mangled_name());
  }
  for (auto& g : *groups) {
    KernelFacts facts;
    facts.mangled = g.mangled_name();
    facts.demangled = g.name();
    facts.has_triton_metadata = triton_names.count(g.mangled_name()) > 0;
    facts.loader = g.loader();
    facts.module_library = g.module_library();
    KernelOrigin o = ClassifyKernel(facts);
    g.set_origin(std::string(OriginName(o.kind)));
    g.set_owner_library(o.library);
    g.set_tunable(o.tunable);
    g.set_owner_evidence(o.evidence);
    origins.push_back(std::move(o));
  }
  return origins;
}

// "launches that ran alone: 620 of 2,000" for a configuration compared by its solo launches.
std::string SoloText(const occtrace::KernelGroup& g) {
  return Count(static_cast<double>(g.overlap().solo_launches())) + " of " +
         Count(static_cast<double>(g.overlap().launches()));
}

// "60 % of its time overlapped other kernels (streams 14, 15)".
std::string OverlappedText(const occtrace::KernelGroup& g) {
  char pct[32];
  std::snprintf(pct, sizeof(pct), "%.0f %%", g.overlap().overlapped_pct());
  std::string streams;
  for (int64_t id : g.overlap().streams()) streams += (streams.empty() ? "" : ", ") + std::to_string(id);
  if (g.overlap().more_streams()) streams += ", …";
  return "block " + BlockText(g) + ": " + pct + " of its time overlapped other kernels" +
         (streams.empty() ? "" : " (streams " + streams + ")");
}

// `g` was measured slower than `best` on the same work: launch it as `best`, `gain` less GPU time.
// Compared by their launches that ran alone where overlap required it (BasisOf). Where a side's
// launches overlapped other kernels and too few ran alone, the comparison is contention's too:
// the suggestion says so, its confidence is low and its gain is not counted as measured.
void SuggestMeasuredConfig(KernelOriginKind owner, const occtrace::KernelGroup& best, int64_t gain,
                           occtrace::KernelGroup* g_out) {
  occtrace::KernelGroup& g = *g_out;
  const Basis gb = BasisOf(g), bb = BasisOf(best);
  const bool overlapped = gb.overlapped || bb.overlapped;
  const int64_t threads = Threads(g);
  g.set_measured_gain_ns(overlapped ? 0 : gain);
  occtrace::Suggestion* s = g.add_suggestions();
  s->set_kind("measured_config");
  s->set_block_size(static_cast<int32_t>(BlockThreads(best)));
  s->set_block_x(best.block_x());
  s->set_block_y(best.block_y());
  s->set_block_z(best.block_z());
  s->set_predicted_occupancy_pct(best.occupancy().theoretical_occupancy_pct());
  const bool solo = gb.solo || bb.solo;
  std::string launches = std::to_string(best.launches()) + " and " + std::to_string(g.launches()) + " launches";
  if (solo) launches = "launches that ran alone: " + SoloText(best) + " and " + SoloText(g);
  std::string text = "Launch it as " + ConfigInOwnersWords(owner, best, g) + ": measured in this trace" +
                     (solo && !overlapped ? " on launches that ran alone" : "") + ", block " + BlockText(best) + " takes " +
                     Micros(bb.mean_ns) + " for the same " + Count(static_cast<double>(threads)) +
                     " threads where block " + BlockText(g) + " takes " + Micros(gb.mean_ns) + " (" + launches +
                     ") — " + Micros(static_cast<double>(gain)) + " less GPU time over this configuration's launches";
  if (overlapped) {
    text += ", not counted: " + OverlappedText(gb.overlapped ? g : best) +
            " and too few of its launches ran alone to compare them. Confidence: low (overlapped)";
  } else {
    text += ". Confidence: high (measured)";
  }
  s->set_text(text);
  s->set_assumptions(std::string("the same work per launch (threads launched equal up to rounding the grid to whole blocks)") +
                     (solo ? "; compared on launches no other kernel overlapped" : ""));
}

// Both sides mostly overlapped, too few solo launches: nothing measured to compare.
bool MostlyOverlapped(const occtrace::KernelGroup& g) {
  return BasisOf(g).overlapped && g.overlap().overlapped_pct() >= kMostlyOverlappedPct;
}

// Same compiled function, same device: its configurations' measured speed on the same work,
// compared by BasisOf. Autotuning trials are left out (the autotuner measured them already, and
// they are not the running program). An owner nobody identified keeps its measurement, with the
// caveat (AddUnknownOwnerCaveat): a measured 3x is evidence whoever launches the kernel.
void AddMeasuredEvidence(const std::vector<KernelOrigin>& origins,
                         std::vector<occtrace::KernelGroup>* groups) {
  std::map<FunctionKey, std::vector<size_t>> by_function;
  for (size_t i = 0; i < groups->size(); ++i) {
    const auto& g = (*groups)[i];
    if (g.launches() > 0 && g.mean_ns() > 0 && !g.autotuning_trial()) by_function[FunctionKeyOf(g)].push_back(i);
  }
  for (const auto& [key, members] : by_function) {
    if (members.size() < 2) continue;
    for (size_t i : members) AddMeasuredPoints(members, i, groups);
    for (size_t i : members) {
      auto& g = (*groups)[i];
      if (!origins[i].tunable || !g.autotuner().empty()) continue;
      const occtrace::KernelGroup* best = nullptr;
      for (size_t j : members) {
        const auto& h = (*groups)[j];
        if (j == i || !SameWork(g, h)) continue;
        if (ComparableMean(h) < kFasterRatio * ComparableMean(g) &&
            (best == nullptr || ComparableMean(h) < ComparableMean(*best))) {
          best = &h;
        }
      }
      if (best == nullptr) continue;
      if (MostlyOverlapped(g) && MostlyOverlapped(*best)) {
        g.add_issues("not compared with block " + BlockText(*best) + " on the same work: " + OverlappedText(g) +
                     "; " + OverlappedText(*best) + "; too few launches of either ran alone, so their means "
                     "measure contention, not the configuration");
        continue;
      }
      const int64_t gain =
          static_cast<int64_t>((ComparableMean(g) - ComparableMean(*best)) * static_cast<double>(g.launches()));
      SuggestMeasuredConfig(origins[i].kind, *best, gain, &g);
    }
  }
}

// Measured evidence first, in every format (the list, CSV's best suggestion, JSON, the HTML
// chart): another configuration measured faster, then a measured occupancy gap, then the
// model's predictions, each kind in its own order. Block 64 at the model's 100 % theoretical can
// run 2.5x slower than a measured block 512; only a measurement shows it.
void MeasuredFirst(occtrace::KernelGroup* g) {
  auto rank = [](const occtrace::Suggestion& s) {
    return s.kind() == "measured_config" ? 0 : s.kind() == "larger_blocks" ? 1 : 2;
  };
  auto* suggestions = g->mutable_suggestions();
  std::stable_sort(suggestions->begin(), suggestions->end(),
                   [&](const occtrace::Suggestion& x, const occtrace::Suggestion& y) { return rank(x) < rank(y); });
}

// The advice group `i` keeps for its owner: none for autotuning trials, library kernels and
// autotuners' choices; otherwise phrased in the owner's words, with the measured gain as its
// priority.
void ApplyOwner(const KernelOrigin& origin, size_t i, int64_t run_total_ns,
                std::vector<occtrace::KernelGroup>* groups) {
  auto& g = (*groups)[i];
  if (g.autotuning_trial()) {
    MarkAutotuningTrial(&g);
    return;
  }
  if (!origin.tunable) {
    MarkNotTunable(origin, &g);
    return;
  }
  if (!g.autotuner().empty()) {
    MarkAutotunerChoice(&g);
    return;
  }
  if (NearCeiling(g)) DropOccupancySuggestions(&g);
  bool larger_not_faster = false;
  for (size_t j = 0; j < groups->size(); ++j) {
    const auto& h = (*groups)[j];
    if (j != i && FunctionKeyOf(h) == FunctionKeyOf(g) && SameWork(g, h) &&
        BlockThreads(h) > BlockThreads(g) && !(ComparableMean(h) < kFasterRatio * ComparableMean(g))) {
      larger_not_faster = true;
    }
  }
  for (auto& s : *g.mutable_suggestions()) {
    if (s.kind() != "measured_config") PhraseForOwner(origin.kind, g, &s);
  }
  if (g.judged()) AddShortBlockAdvice(origin.kind, larger_not_faster, &g);
  if (origin.kind == KernelOriginKind::kUnknown) AddUnknownOwnerCaveat(&g);
  MeasuredFirst(&g);
  if (run_total_ns > 0 && g.measured_gain_ns() > 0) {
    g.set_priority(std::max(g.priority(), 100.0 * static_cast<double>(g.measured_gain_ns()) /
                                              static_cast<double>(run_total_ns)));
  }
}

}  // namespace

void ApplyOwnerAndEvidence(std::vector<occtrace::KernelGroup>* groups, int64_t run_total_ns) {
  const std::vector<KernelOrigin> origins = ClassifyOwners(groups);
  MarkVariantsAndAutotuning(origins, groups);
  AddMeasuredEvidence(origins, groups);
  for (size_t i = 0; i < groups->size(); ++i) ApplyOwner(origins[i], i, run_total_ns, groups);
}

}  // namespace occ
