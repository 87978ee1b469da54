#include "injector/launch_callback_switch.h"

#include <chrono>

namespace occ::inj {

LaunchCallbackSwitch::LaunchCallbackSwitch(Apply apply, bool initially_on, Clock now_ns)
    : apply_(std::move(apply)), now_ns_(std::move(now_ns)), on_(initially_on) {
  if (!now_ns_) {
    now_ns_ = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  wants_[0] = wants_[1] = initially_on;
  if (on_) on_since_ns_ = now_ns_();
}

bool LaunchCallbackSwitch::Want(Owner owner, bool on, std::string* error) {
  std::lock_guard lock(mutex_);
  wants_[static_cast<int>(owner)] = on;
  const bool wanted = wants_[0] || wants_[1];
  if (wanted == on_) return true;
  if (!apply_(wanted, error)) return false;
  const int64_t now = now_ns_();
  if (wanted) {
    on_since_ns_ = now;
  } else {
    on_ns_before_ += now - on_since_ns_;
  }
  on_ = wanted;
  ++switches_;
  return true;
}

double LaunchCallbackSwitch::on_ms() const {
  std::lock_guard lock(mutex_);
  const int64_t total = on_ns_before_ + (on_ ? now_ns_() - on_since_ns_ : 0);
  return static_cast<double>(total) / 1e6;
}

bool LaunchCallbackSwitch::on() const {
  std::lock_guard lock(mutex_);
  return on_;
}

uint64_t LaunchCallbackSwitch::switches() const {
  std::lock_guard lock(mutex_);
  return switches_;
}

}  // namespace occ::inj
