#include "injector/achieved/pm_sampling_policy.h"

#include <algorithm>

namespace occ::inj {

PmSamplingPolicy::PmSamplingPolicy(const PmPolicySettings& settings)
    : settings_(settings), budget_(settings.budget_fraction, settings.window_ns, settings.free_ns) {}

void PmSamplingPolicy::NoteNewCode(int64_t now_ns) {
  new_code_until_ns_ = std::max(new_code_until_ns_, now_ns + settings_.new_code_ns);
  // Its first launches run now: every device is looked at again.
  for (auto& [device, idle] : idle_) idle = Idle{};
}

void PmSamplingPolicy::NoteWork(const PmWorkReport& report) {
  wanting_.clear();
  busy_ns_ = 0;
  for (const PmWorkReport::Device& device : report.devices) {
    wanting_[device.device_id] = device.wanting;
    busy_ns_ += device.busy_ns;
  }
}

void PmSamplingPolicy::NoteSpotCheck(uint32_t device_id, int64_t now_ns, int64_t sampled_ns, bool active) {
  Idle& idle = idle_[device_id];
  if (active) {
    idle.stopped = false;
    return;
  }
  idle_sampled_ns_ += std::max<int64_t>(0, sampled_ns);
  if (IdleAllowanceSpent()) {
    idle.look_at_ns = now_ns + settings_.probe_period_ns;
    idle.stopped = true;
  }
}

bool PmSamplingPolicy::IdleAllowanceSpent() const {
  if (settings_.budget_fraction >= 1.0) return false;
  return static_cast<double>(idle_sampled_ns_) >
         static_cast<double>(settings_.idle_free_ns) + settings_.budget_fraction * static_cast<double>(busy_ns_);
}

bool PmSamplingPolicy::Signalled(uint32_t device_id, int64_t now_ns) const {
  if (now_ns < new_code_until_ns_) return true;
  auto found = wanting_.find(device_id);
  return found != wanting_.end() && found->second > 0;
}

bool PmSamplingPolicy::Wanted(uint32_t device_id, int64_t now_ns) const {
  if (!Signalled(device_id, now_ns)) return false;
  auto idle = idle_.find(device_id);
  return idle == idle_.end() || !idle->second.stopped || now_ns >= idle->second.look_at_ns;
}

bool PmSamplingPolicy::StoppedForIdleness(uint32_t device_id, int64_t now_ns) const {
  return Signalled(device_id, now_ns) && !Wanted(device_id, now_ns);
}

bool PmSamplingPolicy::ProbePending(int64_t now_ns) const {
  // `stopped` is only set with the allowance spent, and holds until the look (as in Wanted),
  // even if GPU-busy time has grown the allowance since.
  for (const auto& [device, idle] : idle_) {
    if (idle.stopped && now_ns < idle.look_at_ns && Signalled(device, now_ns)) return true;
  }
  return false;
}

void PmSamplingPolicy::Decide(int64_t now_ns, int64_t sampled_ns, std::map<uint32_t, PmTarget>* targets) {
  bool any_wanted = false;
  for (auto& [device, target] : *targets) {
    const bool wanted = Wanted(device, now_ns);
    any_wanted |= wanted;
    target = wanted ? PmTarget::kSampling : PmTarget::kArmed;
  }
  // The CPU bound counts the sampling the idle allowance did not take.
  if (!any_wanted || budget_.Allows(sampled_ns - idle_sampled_ns_, busy_ns_)) return;
  for (auto& [device, target] : *targets) {
    if (target == PmTarget::kSampling) target = PmTarget::kPaused;
  }
}

}  // namespace occ::inj
