#include "injector/achieved/pm_sampling_policy.h"

#include <algorithm>

namespace occ::inj {

PmSamplingPolicy::PmSamplingPolicy(const PmPolicySettings& settings)
    : settings_(settings), budget_(settings.budget_fraction, settings.window_ns, settings.free_ns) {}

void PmSamplingPolicy::NoteNewCode(int64_t now_ns) {
  new_code_until_ns_ = std::max(new_code_until_ns_, now_ns + settings_.new_code_ns);
}

void PmSamplingPolicy::NoteWork(const PmWorkReport& report) {
  wanting_.clear();
  busy_ns_ = 0;
  for (const PmWorkReport::Device& device : report.devices) {
    wanting_[device.device_id] = device.wanting;
    busy_ns_ += device.busy_ns;
  }
}

bool PmSamplingPolicy::Wanted(uint32_t device_id, int64_t now_ns) const {
  if (now_ns < new_code_until_ns_) return true;
  auto found = wanting_.find(device_id);
  return found != wanting_.end() && found->second > 0;
}

void PmSamplingPolicy::Decide(int64_t now_ns, int64_t sampled_ns, std::map<uint32_t, PmTarget>* targets) {
  bool any_wanted = false;
  for (auto& [device, target] : *targets) {
    const bool wanted = Wanted(device, now_ns);
    any_wanted |= wanted;
    target = wanted ? PmTarget::kSampling : PmTarget::kArmed;
  }
  if (!any_wanted || budget_.Allows(sampled_ns, busy_ns_)) return;
  for (auto& [device, target] : *targets) {
    if (target == PmTarget::kSampling) target = PmTarget::kPaused;
  }
}

}  // namespace occ::inj
