// Light tracing's timing windows: when CUPTI's kernel records (CONCURRENT_KERNEL) are on.
//
// Without records a light trace knows every launch but no GPU time. Records switched on for
// short windows sample durations; occ-report estimates each configuration's time as its launch
// count times its sampled mean. Records are on from the start (tracing begins inside cuInit,
// before any launch) until `window_ns` after the program's first kernel launch, so that a
// short program's first kernels are timed too; then a window opens every
// `period_ns` after the last one opened, and soon after a configuration not seen before
// appears (so that new kernels get timed while they run), closing after `window_ns`. A window
// also opens when configurations that are still under-timed (fewer timed launches than an
// estimate needs; the writer counts them) keep being launched: a CUDA graph replayed only
// between periodic windows, say, whose kernels were all seen before in eager warm-up runs.
// New-configuration and under-timed windows are rationed so that records stay on at most `max_duty` of the
// time since the first launch, counted over at least `grace_ns` (a short program may spend
// max_duty x grace_ns in windows at once): a program whose shapes never repeat cannot turn
// light tracing back into full tracing. Pure logic, driven by the writer thread's clock
// (tests/injector/kernel_windows_test.cc).
#pragma once

#include <cstdint>

namespace occ::inj {

struct KernelWindowSettings {
  int64_t period_ns = 5'000'000'000;      // OCCTRACE_LIGHT_PERIOD_MS
  int64_t window_ns = 200'000'000;        // OCCTRACE_LIGHT_WINDOW_MS
  double max_duty = 0.10;                 // OCCTRACE_LIGHT_MAX_DUTY_PCT / 100
  // New-configuration and under-timed windows.
  bool windows_for_new_configs = true;    // OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS
  int64_t grace_ns = 10'000'000'000;
};

class KernelWindowSchedule {
 public:
  explicit KernelWindowSchedule(KernelWindowSettings settings);

  // Called on every writer wake-up: `launched` says whether any kernel was launched yet,
  // `new_configs` whether configurations appeared since the last window opened, `under_timed`
  // whether under-timed configurations were launched often enough since then to be worth a
  // window. Returns whether records should be on from `now_ns`.
  bool Update(int64_t now_ns, bool launched, bool new_configs, bool under_timed = false);
  bool started() const { return started_; }
  int64_t start_ns() const { return start_ns_; }

  bool open() const { return open_ || !started_; }
  uint64_t windows_opened() const { return windows_; }
  uint64_t windows_for_new_configs() const { return new_config_windows_; }
  uint64_t windows_for_under_timed() const { return under_timed_windows_; }
  int64_t open_ns_total(int64_t now_ns) const;

 private:
  KernelWindowSettings settings_;
  bool started_ = false;
  int64_t start_ns_ = 0;
  bool open_ = false;
  int64_t opened_at_ns_ = 0;
  int64_t last_periodic_ns_ = 0;
  int64_t closed_ns_total_ = 0;  // time spent open in windows already closed
  uint64_t windows_ = 0;
  uint64_t new_config_windows_ = 0;
  uint64_t under_timed_windows_ = 0;
};

}  // namespace occ::inj
