// CuptiController: the one owner of CUPTI's attachment, kernel records and driver launch
// callbacks, and of every transition between them. Nothing else in the injector subscribes,
// finalizes, switches kernel records or the launch callbacks: it asks the controller, which
// makes the CUPTI calls through its Seam (cupti_controller_seam.cc for real CUPTI; the tests
// give stand-ins).
//
// Who asks what, by mode (settings.h):
//   - full trace (the default): Recording from start to Stop; no event but Stop.
//   - light tracing: timing windows -- OpenWindow / CloseWindow on the writer thread.
//   - light tracing with OCCTRACE_LIGHT_DETACH=1: also detaching between windows, and the
//     launch hook's wish for the launch callbacks (SetLaunchCallbacks).
//
// Why detach: with light tracing's launch hook, CUPTI is needed only in timing windows, yet a
// CUPTI subscriber kept all run long costs the program ~2 % of step time with nothing enabled,
// and kernel records switched on for windows and off again cost 6.5 % while it stays subscribed.
// With CUPTI finalized between windows and attached again for each, train_small.py ran at 1.008
// x untraced (H100, 2026-11-25; docs/performance.md). CUPTI's documented way to detach is
// cuptiFinalize from a callback at an API's exit (Kineto does the same, after a forced flush):
// CloseWindow enables the API callback domains and asks; the first API exit on any program
// thread finalizes (FinalizeFromCallback); OpenWindow attaches again.
//
// The state table. States:
//   kRecording        attached, kernel records on (a full trace; light tracing in a window)
//   kAttached         attached, kernel records off (light tracing between windows)
//   kDetachRequested  attached, records off, API callback domains on: the next API exit finalizes
//   kFinalizing       a program thread is inside cuptiFinalize
//   kDetached         CUPTI finalized: occtrace calls no CUPTI function
// and one flag, `pinned` (a reason string): detaching stopped for good (no launch hook, the hook
// fell back to CUPTI's callbacks, CUDA graphs or stream capture, light tracing without detach).
//
//   event (thread)              from                 to                 CUPTI calls (Seam)
//   ---------------------------------------------------------------------------------------------
//   OpenWindow (writer)         kAttached            kRecording         records(on)
//                               kDetachRequested     kRecording         cancel_detach, records(on)
//                               kFinalizing          (waits for it, then as from kDetached)
//                               kDetached            kRecording         attach, records(on); refused: stays
//   CloseWindow(may_detach)     kRecording           kAttached          records(off), flush
//     (writer)                    ... and may_detach, not pinned       -> kDetachRequested: request_detach
//   FinalizeFromCallback        kDetachRequested     kFinalizing        finalize
//     (program thread)                               -> kDetached (finalized) or kAttached (failed)
//   Pin(reason) (writer)        kDetachRequested     kAttached          cancel_detach
//                               kDetached            kAttached          attach (records stay off)
//                               any other            unchanged          -
//   SetLaunchCallbacks(on)      attached states      unchanged          launch_callbacks(on)
//     (writer)                  kDetached            unchanged          none now: applied at attach
//   Stop (writer, final flush)  kDetachRequested     kAttached          cancel_detach
//                               any                  unchanged; every later event refused
//   IfAttached(call) (any)      kRecording or kAttached: runs `call` (flushes); also from inside
//                               an event's own Seam call (CloseWindow's flush), on that thread
//
// Every other (state, event) pair is refused: nothing is called, the state stays, and the
// refusal is counted (Figures::refused, OCC_META light_controller_refused_events). Refused
// events are expected at the edges (a window closing after Stop, an API exit with nothing
// asked), so they are counted, not reported.
//
// Threads: writer-side events take control_, a mutex that FinalizeFromCallback never takes --
// a callback only moves the state -- so a program thread never waits for the writer. Pure
// logic around the Seam (tests/injector/cupti_controller_test.cc drives every row above).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace occ::inj {

class CuptiController {
 public:
  enum class State { kRecording, kAttached, kDetachRequested, kFinalizing, kDetached };
  static const char* StateName(State state);

  // The CUPTI calls the controller makes, and nothing else makes.
  struct Seam {
    // Kernel records (CONCURRENT_KERNEL) on or off; returns CUPTI's timestamp taken just after
    // switching on or just before switching off (0 if none).
    std::function<uint64_t(bool on)> records;
    // Every kernel record out of CUPTI into the trace (a forced flush), before a detach.
    std::function<void()> flush;
    // Enable the runtime and driver API callback domains, so that the next API exit calls
    // FinalizeFromCallback. False: CUPTI refused; it stays attached.
    std::function<bool()> request_detach;
    // The domains off again (a request taken back, or left on by a failed finalize).
    std::function<void()> cancel_detach;
    // A program thread inside a CUPTI callback at an API exit: cuptiFinalize.
    std::function<bool()> finalize;
    // Subscribe and enable what tracing needs, kernel records off. False (with *error) when
    // CUPTI refused (another client subscribed while occtrace was detached).
    std::function<bool(std::string* error)> attach;
    // The driver launch callbacks on or off; false (with *error) when CUPTI refused.
    std::function<bool(bool on, std::string* error)> launch_callbacks;
  };

  // `initial`: kRecording (every trace starts with kernel records on: light tracing keeps them
  // until its first window ends). `pinned`: why CUPTI must never detach ("" when it may).
  // `launch_callbacks_on`: as the subscriber set them up. `now_ns`: a monotonic clock for the
  // figures (steady_clock unless a test gives its own).
  using Clock = std::function<int64_t()>;
  CuptiController(Seam seam, std::string pinned, bool launch_callbacks_on, Clock now_ns = nullptr);

  // Writer thread. Each returns whether the event was taken (false: refused, or CUPTI refused
  // an attach). OpenWindow/CloseWindow set *cupti_ns to the switch's timestamp when taken.
  bool OpenWindow(uint64_t* cupti_ns);
  bool CloseWindow(bool may_detach, uint64_t* cupti_ns);
  bool Pin(const std::string& reason);
  bool SetLaunchCallbacks(bool on, std::string* error);
  void Stop();
  // A program thread inside a CUPTI callback at an API exit. Cheap unless a detach was
  // requested: one atomic load.
  void FinalizeFromCallback();
  // Runs `call` (which may call CUPTI) while attached with no detach asked for; false when it
  // was not run. Any thread; waits at most `wait_ms` for a writer-side event in progress.
  bool IfAttached(const std::function<void()>& call, int wait_ms = 2000);

  State state() const { return state_.load(std::memory_order_acquire); }
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  std::string pinned() const;

  // The thread name an attach runs under: CUPTI starts its thread (the one that delivers
  // buffers) from the thread that attaches it, and a thread inherits its creator's name, so
  // CUPTI's work would otherwise show as occtrace-writer's in `top -H` and turns_bench.py.
  static constexpr const char* kCuptiThreadName = "occtrace-cupti";

  struct Figures {
    uint64_t detaches = 0;           // finalized from a callback
    uint64_t requests_taken_back = 0;
    uint64_t attaches = 0;           // attached again (the attach at start not counted)
    uint64_t attach_refusals = 0;
    std::string attach_error;        // the first refusal's reason
    uint64_t refused = 0;            // events refused by the table
    uint64_t callback_switches = 0;  // launch callbacks switched (by CUPTI, not remembered)
    std::vector<int64_t> attach_ns;    // each attach, on the writer thread
    std::vector<int64_t> finalize_ns;  // each cuptiFinalize, on a program thread
    std::vector<int64_t> detach_wait_ns;  // request to finalize (the program's next API exit)
  };
  Figures figures() const;
  // How long the launch callbacks have been on (wanted and attached), the current period
  // included: the share of the run in which every launch paid for CUPTI's launch callbacks.
  double callbacks_on_ms() const;
  // OCC_META rows (light_detach_*, light_controller_*).
  std::vector<std::pair<std::string, std::string>> Meta() const;

 private:
  bool Refuse();  // counts a refused event; returns false
  // Under control_: a pending detach request taken back (cancel_detach), or a finalize in
  // progress waited for. Returns the state then: kRecording, kAttached or kDetached.
  State TakeBackOrWaitLocked();
  // Under control_: attaches from kDetached; on success the remembered launch-callback wish
  // is applied.
  bool AttachLocked();
  // CUPTI's launch callbacks as they are now (takes figures_mutex_).
  void NoteCallbacks(bool on);

  Seam seam_;
  Clock now_ns_;
  std::atomic<State> state_{State::kRecording};
  std::atomic<bool> stopped_{false};
  class ControlLock;
  std::timed_mutex control_;  // writer-side events and the CUPTI calls they make
  std::atomic<std::thread::id> holder_{};  // the thread holding control_ (ControlLock)
  std::string pinned_;        // under control_
  bool callbacks_wanted_;     // under control_
  // Under figures_mutex_, which is never held into the Seam: the figures, the launch callbacks
  // as CUPTI has them and since when, and what a request or a failed finalize left.
  mutable std::mutex figures_mutex_;
  bool callbacks_on_;
  int64_t callbacks_on_since_ns_ = 0;
  int64_t callbacks_on_ns_before_ = 0;
  std::condition_variable finalized_;
  Figures figures_;
  int64_t requested_at_ns_ = 0;
  bool domains_left_on_ = false;  // a finalize failed after the request
};

}  // namespace occ::inj
