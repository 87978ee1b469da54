#include "injector/cupti_attachment.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace occ::inj {
namespace {

int64_t NowNs() {
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

void CuptiAttachment::RequestDetach() {
  std::lock_guard lock(control_);
  if (stopped() || state() != State::kAttached) return;
  if (!hooks_.request_detach()) return;
  {
    std::lock_guard figures(figures_mutex_);
    requested_at_ns_ = NowNs();
  }
  state_.store(State::kDetachRequested, std::memory_order_release);
}

void CuptiAttachment::FinalizeFromCallback() {
  if (state_.load(std::memory_order_acquire) != State::kDetachRequested) [[likely]] return;
  State expected = State::kDetachRequested;
  if (stopped() || !state_.compare_exchange_strong(expected, State::kFinalizing, std::memory_order_acq_rel)) return;
  const int64_t began = NowNs();
  const bool finalized = hooks_.finalize();
  const int64_t ended = NowNs();
  {
    std::lock_guard figures(figures_mutex_);
    if (finalized) {
      ++figures_.detaches;
      figures_.finalize_ns.push_back(ended - began);
      figures_.detach_wait_ns.push_back(began - requested_at_ns_);
    }
    // A failed finalize leaves CUPTI as it was: attached, with the domains on until the writer
    // takes them back at the next window.
    if (!finalized) domains_left_on_ = true;
    state_.store(finalized ? State::kDetached : State::kAttached, std::memory_order_release);
  }
  finalized_.notify_all();
}

bool CuptiAttachment::Attach() {
  std::lock_guard lock(control_);
  if (stopped()) return state() == State::kAttached;
  State expected = State::kDetachRequested;
  if (state_.compare_exchange_strong(expected, State::kAttached, std::memory_order_acq_rel)) {
    hooks_.cancel_detach();
    std::lock_guard figures(figures_mutex_);
    ++figures_.requests_taken_back;
    return true;
  }
  if (expected == State::kFinalizing) {
    // A program thread is inside cuptiFinalize (milliseconds); it never takes control_.
    std::unique_lock figures(figures_mutex_);
    finalized_.wait(figures, [this] { return state() != State::kFinalizing; });
  }
  if (state() == State::kAttached) {
    bool domains_on = false;
    {
      std::lock_guard figures(figures_mutex_);
      domains_on = std::exchange(domains_left_on_, false);
    }
    if (domains_on) hooks_.cancel_detach();
    return true;
  }
  const int64_t began = NowNs();
  std::string error;
  bool attached = false;
  {
    const ScopedThreadName cupti_thread_name(kCuptiThreadName);
    attached = hooks_.attach(&error);
  }
  const int64_t took = NowNs() - began;
  std::lock_guard figures(figures_mutex_);
  if (!attached) {
    if (figures_.attach_refusals++ == 0) figures_.attach_error = error;
    return false;
  }
  ++figures_.attaches;
  figures_.attach_ns.push_back(took);
  state_.store(State::kAttached, std::memory_order_release);
  return true;
}

bool CuptiAttachment::IfAttached(const std::function<void()>& call, int wait_ms) {
  std::unique_lock lock(control_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::milliseconds(wait_ms))) return false;
  if (state() != State::kAttached) return false;
  call();
  return true;
}

void CuptiAttachment::Stop() {
  std::lock_guard lock(control_);
  stopped_.store(true, std::memory_order_release);
}

CuptiAttachment::Figures CuptiAttachment::figures() const {
  std::lock_guard figures(figures_mutex_);
  return figures_;
}

std::vector<std::pair<std::string, std::string>> CuptiAttachment::Meta() const {
  const Figures f = figures();
  const std::string& p = meta_prefix_;
  std::vector<std::pair<std::string, std::string>> rows = {
      {p + "detach", "on"},
      {p + "detaches", std::to_string(f.detaches)},
      {p + "detach_requests_taken_back", std::to_string(f.requests_taken_back)},
      {p + "reattaches", std::to_string(f.attaches)},
      {p + "reattach_ms", Spread(f.attach_ns)},
      {p + "finalize_ms", Spread(f.finalize_ns)},
      {p + "detach_wait_ms", Spread(f.detach_wait_ns)},
      {p + "reattach_refusals", std::to_string(f.attach_refusals)},
  };
  if (!f.attach_error.empty()) rows.emplace_back(p + "reattach_error", f.attach_error);
  static constexpr const char* kStateNames[] = {"attached", "detach requested", "finalizing", "detached"};
  rows.emplace_back(p + "state_at_end", kStateNames[static_cast<int>(state())]);
  return rows;
}

}  // namespace occ::inj
