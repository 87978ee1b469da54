#include "analyzer/analyze/tuning_overhead.h"

#include <map>
#include <utility>

namespace occ {
namespace {

// A benchmark helper comes before a tuned name, or before itself on the way to one, in this share
// of its launches (Triton's do_bench alternates 1:1; Inductor's benchmarker chains flushes).
constexpr double kAlternationShare = 0.9;

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

void MarkTuningOverhead(const std::vector<occtrace::KernelGroup*>& groups, const std::vector<FollowedBy>& followed_by) {
  // Names an autotuner tried on each device, and who tuned them.
  std::map<std::pair<int, std::string>, std::string> tuned;
  for (const occtrace::KernelGroup* g : groups) {
    if (g->autotuning_trial()) tuned[{g->device_id(), g->mangled_name()}] = g->autotuner();
  }
  for (size_t i = 0; i < groups.size() && i < followed_by.size(); ++i) {
    occtrace::KernelGroup& g = *groups[i];
    if (g.autotuning_trial()) {
      g.set_tuning_overhead(g.autotuner() + ": trial");
      continue;
    }
    const std::string& name = g.name().empty() ? g.mangled_name() : g.name();
    if (g.origin() == "vendor" && Contains(name, "RedzoneAllocatorKernel")) {
      g.set_tuning_overhead("XLA's autotuner: redzone check of a candidate's buffers");
      continue;
    }
    auto it = tuned.find({g.device_id(), followed_by[i].name});
    if (g.origin() == "aten" && Contains(name, "FillFunctor<int>") && it != tuned.end() &&
        (Contains(it->second, "Triton") || Contains(it->second, "Inductor")) && g.launches() > 0 &&
        static_cast<double>(followed_by[i].launches) >= kAlternationShare * static_cast<double>(g.launches())) {
      g.set_tuning_overhead(it->second + ": benchmark cache flush before each timed run");
    }
  }
}

}  // namespace occ
