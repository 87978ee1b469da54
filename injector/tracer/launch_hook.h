// The launch hook: every kernel and graph launch seen by wrapping the driver's launch entry
// points, so that launches are recorded while CUPTI is detached -- light tracing's between
// timing windows (OCCTRACE_LIGHT_DETACH=1) -- and CUPTI's launch callbacks can stay off most
// of the time.
// (Light tracing with the hook but CUPTI attached, once OCCTRACE_LIGHT_HOOK=1, did not lower
// its cost and was removed.)
//
// Why: with CUPTI's kernel records off, light tracing's per-launch cost was CUPTI's callback
// dispatch (+0.6-0.9 us per empty launch, +2 us per PyTorch launch; docs/performance.md), the
// largest part of its cost. A wrapper that reads the launch's arguments and appends one
// LaunchCall costs a function call and the append.
//
// How: programs reach the driver through pointers -- the CUDA runtime's dispatch table (filled
// from cuGetProcAddress), GOT slots of libraries that import cuLaunchKernel, statics that
// Triton's launchers and Python bindings fill. The hook learns the addresses of the driver's
// launch entry points (dlsym and cuGetProcAddress, legacy and per-thread-stream versions) and
// rewrites every stored copy in the writable data of loaded objects -- except the driver's,
// CUPTI's and occtrace's own -- to point at a wrapper that calls the real entry point and,
// when it succeeded, records the launch (LightTracer::OnHookedLaunch). A word equal to a
// driver code address is taken to be a pointer to it.
//
// What a pointer scan cannot see (a pointer kept on the heap, as Python's ctypes does, or one
// stored after the last scan) is caught by CUPTI's launch callbacks, which stay on while the
// hook is watched: the first seconds, a few seconds after any library or CUDA module is loaded,
// every timing window, and whenever a launch came through them without the hook (a "miss").
// A miss triggers a rescan; when rescans keep finding nothing while misses continue, the
// callbacks stay on for good (light_hook_fallback), so no launch goes unrecorded for long. All
// of this runs on the writer thread (Tick); the wrappers only record.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>


namespace occ::inj {

class CuptiController;
class LightTracer;

// When CUPTI's launch callbacks are wanted to watch the hook. Pure logic, driven by the
// writer's clock (tests/injector/launch_hook_test.cc).
class HookWatchPolicy {
 public:
  struct Settings {
    int64_t watch_ns = 2'000'000'000;         // callbacks on after a load or a miss
    int64_t periodic_period_ns = 10'000'000'000;  // and for periodic_watch_ns every period
    int64_t periodic_watch_ns = 500'000'000;
    int64_t rescan_interval_ns = 1'000'000'000;
    int fruitless_rescans_to_fall_back = 3;
  };
  struct Decision {
    bool rescan = false;     // scan loaded objects for launch pointers now
    bool callbacks = false;  // CUPTI's launch callbacks wanted on
  };
  HookWatchPolicy(Settings settings, int64_t start_ns)
      : settings_(settings), watch_until_ns_(start_ns + settings.watch_ns),
        next_periodic_ns_(start_ns + settings.periodic_period_ns) {}

  // `objects_added`: shared objects loaded since the last tick; `modules_loaded`: CUDA modules;
  // `misses`: launches the callbacks saw without the hook; `records_on`: a timing window.
  // The callbacks never change while kernel records are on; a change waits for the window to
  // close. The first GPU run switched them with the windows and its torch.compile graph
  // estimates came out 67-216 % high (H100, 2026-11-25). The second, without such switches,
  // still had bad records -- of kernels queued at a records switch-off, which the writer now
  // drops -- so the switches were probably not the cause; keeping CUPTI's state still while
  // records are on costs nothing.
  Decision Tick(int64_t now_ns, bool objects_added, bool modules_loaded, bool misses, bool records_on);
  // After a rescan the Decision asked for: how many pointers it rewrote. A rescan asked for by
  // misses that rewrote nothing is fruitless; after `fruitless_rescans_to_fall_back` in a row
  // the callbacks stay on for good.
  void Rescanned(int64_t now_ns, int rewritten);
  bool fell_back() const { return fell_back_; }
  bool rescan_pending() const { return rescan_pending_ || rescan_for_misses_; }

 private:
  Settings settings_;
  int64_t watch_until_ns_;
  int64_t next_periodic_ns_;
  bool callbacks_ = true;  // as they are now (on at the start)
  int64_t last_rescan_ns_ = INT64_MIN / 2;
  int fruitless_rescans_ = 0;
  bool rescan_pending_ = false;     // objects were loaded since the last rescan
  bool rescan_for_misses_ = false;  // launches were missed since the last rescan
  bool fell_back_ = false;
};

class LaunchHook {
 public:
  // Finds the driver's launch entry points and rewrites the pointers to them found now.
  // Null when the driver or its entry points cannot be found (light tracing then keeps CUPTI's
  // callbacks on). One per process: the wrappers reach `light` through a global.
  static LaunchHook* Install(LightTracer* light, CuptiController* controller, int64_t now_ns);

  // Writer thread, every wake-up: rescans and switches the callbacks as the policy says.
  void Tick(int64_t now_ns, bool records_on);
  // From CUPTI's MODULE_LOADED callback (any thread).
  void NoteModuleLoaded();

  std::vector<std::pair<std::string, std::string>> Meta() const;
  // Launches kept missing the hook (HookWatchPolicy): CUPTI's callbacks must stay on for good.
  bool fell_back() const { return policy_.fell_back(); }
  // Writer thread, at the end of a timing window (CUPTI detached between windows): whether the
  // hook caught every launch the callbacks saw since the last call, no rescan is due, and the
  // program loaded no library or CUDA module and launched no new function for
  // kQuietBeforeDetachNs. Light tracing detaches only then: while detached a launch the hook
  // misses is lost, not recorded late, and new code is where misses come from (a library's
  // first launch before the rescan that hooks it: 1 launch of each of 2 cuDNN kernels and of
  // a Triton kernel, H100, 2026-11-26).
  bool ReadyToDetach(int64_t now_ns);
  static constexpr int64_t kQuietBeforeDetachNs = 10'000'000'000;

 private:
  LaunchHook(LightTracer* light, CuptiController* controller, int64_t now_ns);
  int Rescan();

  LightTracer* light_;
  CuptiController* controller_;  // switches the launch callbacks (cupti_controller.h)
  HookWatchPolicy policy_;
  int entry_points_ = 0;
  uint64_t objects_added_seen_ = 0;
  uint64_t modules_seen_ = 0;
  uint64_t misses_seen_ = 0;
  int rescans_ = 0;  // the first scan (at Install, inside cuInit) included
  int64_t scan_ns_total_ = 0;
  int64_t scan_ns_max_ = 0;
  int64_t installed_ns_ = 0;
  // When each rescan after the first ran, in s since Install (the first kMaxRescanTimes): a
  // rescan runs on the writer thread but rewrites pointers the program's threads read, so
  // whether it fell inside a measured stretch matters when reading a cost.
  static constexpr size_t kMaxRescanTimes = 32;
  std::vector<double> rescan_at_s_;
  int rewritten_total_ = 0;
  std::vector<std::string> hooked_objects_;
  std::string switch_error_;
  uint64_t objects_added_at_last_scan_ = 0;
  uint64_t misses_at_last_detach_check_ = 0;
  uint64_t new_functions_seen_ = 0;
  int64_t last_new_code_ns_ = 0;  // the last tick that saw a library, module or function appear
};

}  // namespace occ::inj
