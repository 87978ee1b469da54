#include "injector/launch_callback_switch.h"

namespace occ::inj {

bool LaunchCallbackSwitch::Want(Owner owner, bool on, std::string* error) {
  std::lock_guard lock(mutex_);
  wants_[static_cast<int>(owner)] = on;
  const bool wanted = wants_[0] || wants_[1] || wants_[2];
  if (wanted == on_) return true;
  if (!apply_(wanted, error)) return false;
  on_ = wanted;
  ++switches_;
  return true;
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
