// Light tracing with CUPTI detached between timing windows (OCCTRACE_LIGHT_DETACH=1): when
// occtrace may call CUPTI, and how CUPTI is finalized and attached again.
//
// Why: with light tracing's launch hook, CUPTI is needed only in timing windows, yet a CUPTI
// subscriber kept all run long costs the program ~2 % of step time with nothing enabled, and
// kernel records switched on for windows and off again cost 6.5 % while it stays subscribed.
// With CUPTI finalized between the same windows and attached again for each, the program ran
// at 1.008 x untraced (train_small.py in turns, H100, 2026-11-25; docs/performance.md).
//
// How: CUPTI's documented way to detach is cuptiFinalize from a callback at an API's exit
// (Kineto does the same, after a forced flush). At the end of a window the writer thread
// flushes, enables the runtime and driver API callback domains and asks (RequestDetach); the
// first API exit on any program thread finalizes (FinalizeFromCallback). At the next window
// the writer attaches again (Attach). Between the two, occtrace calls no CUPTI function: the
// launch hook records launches with the driver's ids and the C library's clock
// (light_tracer.h), and the writer's CUPTI calls go through IfAttached, which skips them.
//
// States: kAttached -> (writer) kDetachRequested -> (program thread, in a callback)
// kFinalizing -> kDetached -> (writer) kAttached. The writer takes a request back when it
// needs CUPTI before any callback has begun finalizing. Writer-side calls run under a mutex
// that a finalizing callback never takes: a callback only moves the state, so a program
// thread never waits for the writer. Pure logic around the hooks given to it
// (tests/injector/cupti_attachment_test.cc).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace occ::inj {

class CuptiAttachment {
 public:
  enum class State { kAttached, kDetachRequested, kFinalizing, kDetached };
  struct Hooks {
    // Writer thread, attached: enable the API callback domains so that the next API exit
    // calls FinalizeFromCallback. False: CUPTI refused; CUPTI stays attached.
    std::function<bool()> request_detach;
    // Writer thread: a request taken back (no finalize began): the domains off again.
    std::function<void()> cancel_detach;
    // A program thread inside a CUPTI callback at an API exit: cuptiFinalize.
    std::function<bool()> finalize;
    // Writer thread, detached: subscribe, callbacks, records on. False (with *error) when CUPTI
    // refused (another client subscribed while occtrace was detached).
    std::function<bool(std::string* error)> attach;
  };
  // `meta_prefix`: the OCC_META rows' prefix ("light_" for light tracing's detaching,
  // "full_" for a full trace's re-attach after sampling).
  explicit CuptiAttachment(Hooks hooks, std::string meta_prefix = "light_")
      : hooks_(std::move(hooks)), meta_prefix_(std::move(meta_prefix)) {}

  // Writer thread. A no-op unless attached.
  void RequestDetach();
  // Writer thread: attached again when it returns true (takes a pending request back, or
  // waits for a finalize in progress, then attaches). False: CUPTI stays detached (refused,
  // or Stop was called). The attach hook runs with the calling thread named kCuptiThreadName,
  // its own name given back after: CUPTI starts its thread (the one that delivers buffers)
  // from the thread that attaches it, and a thread inherits its creator's name, so CUPTI's
  // work would otherwise show as occtrace-writer's in `top -H` and in turns_bench.py.
  bool Attach();
  static constexpr const char* kCuptiThreadName = "occtrace-cupti";
  // Any program thread, inside a CUPTI callback at an API exit. Cheap unless a detach was
  // requested: one atomic load.
  void FinalizeFromCallback();
  // Runs `call` (which may call CUPTI) when CUPTI is attached; false when it was not run. Never
  // takes a pending request back: what needs CUPTI then waits for the next window. Any thread;
  // waits at most `wait_ms` for the writer's attach or detach in progress (then false).
  bool IfAttached(const std::function<void()>& call, int wait_ms = 2000);
  // At the end of the trace: no more attaching or finalizing.
  void Stop();

  State state() const { return state_.load(std::memory_order_acquire); }
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }

  struct Figures {
    uint64_t detaches = 0;           // finalized from a callback
    uint64_t requests_taken_back = 0;
    uint64_t attaches = 0;           // attached again (the first attach, at start, not counted)
    uint64_t attach_refusals = 0;
    std::string attach_error;        // the first refusal's reason
    std::vector<int64_t> attach_ns;  // each attach, on the writer thread
    std::vector<int64_t> finalize_ns;  // each cuptiFinalize, on a program thread
    std::vector<int64_t> detach_wait_ns;  // request to finalize (the program's next API exit)
  };
  Figures figures() const;
  // OCC_META rows (light_detach_*, or with the prefix given).
  std::vector<std::pair<std::string, std::string>> Meta() const;

 private:
  Hooks hooks_;
  std::string meta_prefix_;
  std::atomic<State> state_{State::kAttached};
  std::atomic<bool> stopped_{false};
  std::timed_mutex control_;  // writer-side transitions and CUPTI calls
  mutable std::mutex figures_mutex_;
  std::condition_variable finalized_;
  Figures figures_;
  int64_t requested_at_ns_ = 0;  // under figures_mutex_
  bool domains_left_on_ = false;  // under figures_mutex_: a finalize failed after the request
};

}  // namespace occ::inj
