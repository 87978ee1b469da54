#include "injector/light/kernel_windows.h"

#include <algorithm>

namespace occ::inj {

KernelWindowSchedule::KernelWindowSchedule(KernelWindowSettings settings) : settings_(settings) {
  settings_.window_ns = std::max<int64_t>(settings_.window_ns, 1);
  settings_.period_ns = std::max(settings_.period_ns, settings_.window_ns);
}

int64_t KernelWindowSchedule::open_ns_total(int64_t now_ns) const {
  return closed_ns_total_ + (open_ ? std::max<int64_t>(0, now_ns - opened_at_ns_) : 0);
}

bool KernelWindowSchedule::Update(int64_t now_ns, bool launched, bool new_configs, bool under_timed) {
  if (!started_) {
    // Records are on from the start; the first window is the one that ends window_ns after
    // the first launch.
    if (!launched) return true;
    started_ = true;
    start_ns_ = now_ns;
    last_periodic_ns_ = now_ns;
    open_ = true;
    opened_at_ns_ = now_ns;
    ++windows_;
    return true;
  }
  if (open_) {
    if (now_ns - opened_at_ns_ >= settings_.window_ns) {
      open_ = false;
      closed_ns_total_ += now_ns - opened_at_ns_;
    }
    return open_;
  }
  if (now_ns - last_periodic_ns_ >= settings_.period_ns) {
    last_periodic_ns_ = now_ns;
    open_ = true;
  } else if (settings_.windows_for_new_configs && (new_configs || under_timed)) {
    // Rationed: one more window must keep the open share of the elapsed time (counting this
    // window in full, and at least the grace period) within max_duty.
    const double elapsed = static_cast<double>(
        std::max<int64_t>(settings_.grace_ns, now_ns - start_ns_ + settings_.window_ns));
    const double would_be_open = static_cast<double>(closed_ns_total_ + settings_.window_ns);
    if (would_be_open <= settings_.max_duty * elapsed) {
      open_ = true;
      ++(new_configs ? new_config_windows_ : under_timed_windows_);
    }
  }
  if (open_) {
    opened_at_ns_ = now_ns;
    ++windows_;
  }
  return open_;
}

}  // namespace occ::inj
