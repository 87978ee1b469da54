// The transitions of cupti_controller.h's state table, one function per event.
#include "injector/tracer/cupti_controller.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace occ::inj {
namespace {

int64_t SteadyClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Spread(std::vector<int64_t> values) {  // "count, median, max" in ms
  if (values.empty()) return "0";
  std::sort(values.begin(), values.end());
  auto ms = [](int64_t ns) { return std::to_string(static_cast<double>(ns) / 1e6); };
  return std::to_string(values.size()) + ", median " + ms(values[values.size() / 2]) + " ms, max " + ms(values.back()) +
         " ms";
}

// Names the calling thread for its lifetime, then gives the old name back.
class ScopedThreadName {
 public:
  explicit ScopedThreadName(const char* name) {
    renamed_ = pthread_getname_np(pthread_self(), old_, sizeof(old_)) == 0 &&
               pthread_setname_np(pthread_self(), name) == 0;
  }
  ~ScopedThreadName() {
    if (renamed_) pthread_setname_np(pthread_self(), old_);
  }
  ScopedThreadName(const ScopedThreadName&) = delete;
  ScopedThreadName& operator=(const ScopedThreadName&) = delete;

 private:
  char old_[16] = {};  // the kernel's limit, 15 characters and the terminator
  bool renamed_ = false;
};

}  // namespace

// control_ held, and this thread known as its holder (IfAttached).
class CuptiController::ControlLock {
 public:
  explicit ControlLock(CuptiController* owner) : owner_(owner) {
    owner_->control_.lock();
    owner_->holder_.store(std::this_thread::get_id(), std::memory_order_release);
  }
  ~ControlLock() {
    owner_->holder_.store(std::thread::id(), std::memory_order_release);
    owner_->control_.unlock();
  }
  ControlLock(const ControlLock&) = delete;
  ControlLock& operator=(const ControlLock&) = delete;

 private:
  CuptiController* owner_;
};

const char* CuptiController::StateName(State state) {
  switch (state) {
    case State::kRecording: return "recording";
    case State::kAttached: return "attached";
    case State::kDetachRequested: return "detach requested";
    case State::kFinalizing: return "finalizing";
    case State::kDetached: return "detached";
  }
  return "unknown";
}

CuptiController::CuptiController(Seam seam, std::string pinned, bool launch_callbacks_on, Clock now_ns)
    : seam_(std::move(seam)),
      now_ns_(now_ns ? std::move(now_ns) : Clock(SteadyClockNs)),
      pinned_(std::move(pinned)),
      callbacks_wanted_(launch_callbacks_on),
      callbacks_on_(launch_callbacks_on) {
  if (callbacks_on_) callbacks_on_since_ns_ = now_ns_();
}

bool CuptiController::Refuse() {
  std::lock_guard figures(figures_mutex_);
  ++figures_.refused;
  return false;
}

void CuptiController::NoteCallbacks(bool on) {
  std::lock_guard figures(figures_mutex_);
  if (on == callbacks_on_) return;
  const int64_t now = now_ns_();
  if (on) {
    callbacks_on_since_ns_ = now;
  } else {
    callbacks_on_ns_before_ += now - callbacks_on_since_ns_;
  }
  callbacks_on_ = on;
}

bool CuptiController::AttachLocked() {
  const int64_t began = now_ns_();
  std::string error;
  bool attached = false;
  {
    const ScopedThreadName cupti_thread_name(kCuptiThreadName);
    attached = seam_.attach(&error);
  }
  const int64_t took = now_ns_() - began;
  {
    std::lock_guard figures(figures_mutex_);
    if (!attached) {
      if (figures_.attach_refusals++ == 0) figures_.attach_error = error;
      return false;
    }
    ++figures_.attaches;
    figures_.attach_ns.push_back(took);
  }
  state_.store(State::kAttached, std::memory_order_release);
  // An attach enables the launch callbacks with the rest (light tracing's own setup); the wish
  // made while detached decides whether they stay.
  NoteCallbacks(true);
  if (!callbacks_wanted_) {
    std::string ignored;
    if (seam_.launch_callbacks(false, &ignored)) NoteCallbacks(false);
  }
  return true;
}

CuptiController::State CuptiController::TakeBackOrWaitLocked() {
  State expected = State::kDetachRequested;
  if (state_.compare_exchange_strong(expected, State::kAttached, std::memory_order_acq_rel)) {
    seam_.cancel_detach();
    std::lock_guard figures(figures_mutex_);
    ++figures_.requests_taken_back;
  }
  if (state() == State::kFinalizing) {
    // A program thread is inside cuptiFinalize (milliseconds); it never takes control_.
    std::unique_lock figures(figures_mutex_);
    finalized_.wait(figures, [this] { return state() != State::kFinalizing; });
  }
  return state();
}

bool CuptiController::OpenWindow(uint64_t* cupti_ns) {
  ControlLock lock(this);
  if (stopped() || state() == State::kRecording) return Refuse();
  const State state = TakeBackOrWaitLocked();
  if (state == State::kAttached) {
    bool domains_on = false;
    {
      std::lock_guard figures(figures_mutex_);
      domains_on = std::exchange(domains_left_on_, false);
    }
    if (domains_on) seam_.cancel_detach();
  } else if (!AttachLocked()) {  // kDetached
    return false;
  }
  *cupti_ns = seam_.records(true);
  state_.store(State::kRecording, std::memory_order_release);
  return true;
}

bool CuptiController::CloseWindow(bool may_detach, uint64_t* cupti_ns) {
  ControlLock lock(this);
  if (stopped() || state() != State::kRecording) return Refuse();
  *cupti_ns = seam_.records(false);
  state_.store(State::kAttached, std::memory_order_release);
  if (!may_detach || !pinned_.empty()) return true;
  // Every record out of CUPTI first: nothing may be held in CUPTI when it is finalized.
  seam_.flush();
  if (!seam_.request_detach()) return true;
  {
    std::lock_guard figures(figures_mutex_);
    requested_at_ns_ = now_ns_();
  }
  state_.store(State::kDetachRequested, std::memory_order_release);
  return true;
}

void CuptiController::FinalizeFromCallback() {
  if (state_.load(std::memory_order_acquire) != State::kDetachRequested) [[likely]] return;
  State expected = State::kDetachRequested;
  if (stopped() || !state_.compare_exchange_strong(expected, State::kFinalizing, std::memory_order_acq_rel)) return;
  const int64_t began = now_ns_();
  const bool finalized = seam_.finalize();
  const int64_t ended = now_ns_();
  {
    std::lock_guard figures(figures_mutex_);
    if (finalized) {
      ++figures_.detaches;
      figures_.finalize_ns.push_back(ended - began);
      figures_.detach_wait_ns.push_back(began - requested_at_ns_);
      // Finalized, CUPTI has no callbacks: on_ms stops counting.
      if (callbacks_on_) {
        callbacks_on_ns_before_ += ended - callbacks_on_since_ns_;
        callbacks_on_ = false;
      }
    } else {
      // CUPTI as it was: attached, with the domains on until the next window takes them back.
      domains_left_on_ = true;
    }
    state_.store(finalized ? State::kDetached : State::kAttached, std::memory_order_release);
  }
  finalized_.notify_all();
}

bool CuptiController::Pin(const std::string& reason) {
  ControlLock lock(this);
  if (stopped()) return Refuse();
  if (pinned_.empty()) pinned_ = reason;
  // Attached again for good; kernel records stay off until the next window.
  if (TakeBackOrWaitLocked() == State::kDetached) return AttachLocked();
  return true;
}

bool CuptiController::SetLaunchCallbacks(bool on, std::string* error) {
  ControlLock lock(this);
  if (stopped()) return Refuse();
  callbacks_wanted_ = on;
  const State state = this->state();
  if (state == State::kDetached || state == State::kFinalizing) return true;  // applied at attach
  bool currently_on = false;
  {
    std::lock_guard figures(figures_mutex_);
    currently_on = callbacks_on_;
  }
  if (currently_on == on) return true;
  if (!seam_.launch_callbacks(on, error)) return false;
  {
    std::lock_guard figures(figures_mutex_);
    ++figures_.callback_switches;
  }
  NoteCallbacks(on);
  return true;
}

void CuptiController::Stop() {
  ControlLock lock(this);
  if (stopped()) return;
  TakeBackOrWaitLocked();  // the final flush needs CUPTI
  stopped_.store(true, std::memory_order_release);
}

bool CuptiController::IfAttached(const std::function<void()>& call, int wait_ms) {
  // From inside an event's Seam call on the same thread (CloseWindow's flush): control_ is
  // this thread's already.
  std::unique_lock lock(control_, std::defer_lock);
  if (holder_.load(std::memory_order_acquire) != std::this_thread::get_id() &&
      !lock.try_lock_for(std::chrono::milliseconds(wait_ms))) {
    return false;
  }
  const State state = this->state();
  if (state != State::kRecording && state != State::kAttached) return false;
  call();
  return true;
}

std::string CuptiController::pinned() const {
  ControlLock lock(const_cast<CuptiController*>(this));
  return pinned_;
}

CuptiController::Figures CuptiController::figures() const {
  std::lock_guard figures(figures_mutex_);
  return figures_;
}

double CuptiController::callbacks_on_ms() const {
  std::lock_guard figures(figures_mutex_);
  int64_t on_ns = callbacks_on_ns_before_;
  if (callbacks_on_) on_ns += now_ns_() - callbacks_on_since_ns_;
  return static_cast<double>(on_ns) / 1e6;
}

std::vector<std::pair<std::string, std::string>> CuptiController::Meta() const {
  const Figures f = figures();
  std::vector<std::pair<std::string, std::string>> rows = {
      {"light_detach", "on"},
      {"light_detaches", std::to_string(f.detaches)},
      {"light_detach_requests_taken_back", std::to_string(f.requests_taken_back)},
      {"light_reattaches", std::to_string(f.attaches)},
      {"light_reattach_ms", Spread(f.attach_ns)},
      {"light_finalize_ms", Spread(f.finalize_ns)},
      {"light_detach_wait_ms", Spread(f.detach_wait_ns)},
      {"light_reattach_refusals", std::to_string(f.attach_refusals)},
      {"light_controller_refused_events", std::to_string(f.refused)},
  };
  if (!f.attach_error.empty()) rows.emplace_back("light_reattach_error", f.attach_error);
  rows.emplace_back("light_detach_state_at_end", StateName(state()));
  return rows;
}

}  // namespace occ::inj
