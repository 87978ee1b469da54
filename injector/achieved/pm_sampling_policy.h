// PmSamplingPolicy: when PM sampling should be on. The one owner of that decision; the collector
// (pm/pm_collector.h) asks it after every decode pass and every signal, and turns its answer
// into CUPTI calls through its state table. It makes no CUPTI call and reads no clock: every
// input comes with its time, so CPU tests drive it with a stand-in clock.
//
// Sampling follows GPU work that lacks samples, not the wall clock. A device is *wanted* while
//  - new code has just started running: a module was loaded (CUPTI_CBID_RESOURCE_MODULE_LOADED;
//    with lazy loading, CUDA's default since 12.2, a module loads at its first kernel's first
//    launch, so this fires right when new code starts), for new_code_ns after the load: long
//    enough for the writer to receive that code's kernel records (they come up to
//    OCCTRACE_MAX_RECORD_AGE_MS + one flush period late, trace_session.h) and say whether its
//    configurations still need samples; or
//  - the writer's latest report (PmWorkReport, from the kernel timeline: pm_sample_join.h)
//    names configurations on the device that ran within its running window and have less
//    sampled kernel time than they need.
// Otherwise the sampler is stopped (armed): model building, cuDNN autotuning's host side, an
// Inductor or XLA compile, data loading or an idle GPU cost no sampling and no budget. A
// configuration seen for the first time is wanting by definition, so new configurations start
// sampling again; once every configuration that keeps running has enough, it stops.
//
// Both signals last about a second past the work that raised them (the records' lag), and a
// compile raises them again and again: cold torch.compile and JAX runs sampled 5.0 s, their
// whole free allowance, against 150 ms of GPU work, and their steady-state steps then found the
// budget spent (H200, 2026-11-29; shortening the windows did not change that,
// bench/results/2026-11-29-pm-idle). So the collector spot-checks a few samples of each decode
// pass (NoteSpotCheck: was any SM active?), which it knows within a decode period, and the
// policy keeps two accounts:
//  - sampling whose spot check found the GPU idle is charged to its own allowance,
//    idle_free_ns + budget_fraction x GPU-busy time, not to the CPU bound below;
//  - once that is spent, a device whose last spot check found it idle is stopped (armed), and
//    started again by new code (a module loads at its first launch), or every probe_period_ns
//    while the signals still want it, to look (a training loop's stall then costs at most a
//    probe period of its samples).
// While the idle allowance lasts (a second of idle sampling, and 5 % of GPU-busy time on), a
// training loop's gaps stop nothing; once it is spent, each gap stops sampling until the next
// look or new code. On the H200 coverage list that cost no program any coverage, and cold
// torch.compile went from 32 to 98 % of its GPU time, JAX from 0-5 to 68-78 %
// (bench/results/2026-11-29-pm-idle).
//
// The CPU bound: decoding costs 19-24 us of CPU per sample whatever the GPU does (H200,
// 2026-11-29), so sampling is allowed for at most
//     free_ns + budget_fraction x GPU-busy time
// of sampling time (each device's time sampling, summed, less what the idle allowance took:
// together at most free_ns + idle_free_ns + 2 x budget_fraction x GPU-busy time, and a
// decode period per new code or probe beyond), where GPU-busy time is the union of
// kernel times the writer measured (summed over devices): the allowance grows only while the GPU
// works, so a start spent compiling or loading data leaves it whole. Once spent, wanted devices
// pause, and start again when window_ns more fits (WallTimeBudget's rule, with GPU-busy time for
// its clock), so that each restart pays for a burst of samples, not a sliver.
//
// Not thread-safe: the collector calls it with its devices_mutex_ held.
#pragma once

#include <cstdint>
#include <map>

#include "injector/achieved/pm_samples.h"
#include "injector/achieved/time_budget.h"

namespace occ::inj {

// What a set-up device should be doing.
enum class PmTarget {
  kArmed,     // stopped: nothing on it wants samples
  kSampling,  // started
  kPaused,    // stopped: wanted, but the budget is spent
};

struct PmPolicySettings {
  double budget_fraction = 0.05;  // OCCTRACE_SAMPLE_BUDGET; >= 1: never paused
  int64_t window_ns = 500'000'000;
  int64_t free_ns = 5'000'000'000;
  // How long a module load keeps devices wanted. The tracer sets it from the session's record
  // lag (settings.cc); this default is for the default session settings.
  int64_t new_code_ns = 1'000'000'000;
  int64_t idle_free_ns = 1'000'000'000;   // sampling of an idle GPU allowed besides the share
  int64_t probe_period_ns = 250'000'000;  // a stopped idle device that is wanted is looked at
};

class PmSamplingPolicy {
 public:
  explicit PmSamplingPolicy(const PmPolicySettings& settings);

  // A module was loaded (new code runs from now on, on any device).
  void NoteNewCode(int64_t now_ns);
  // The writer's latest view; replaces the previous one.
  void NoteWork(const PmWorkReport& report);
  // A spot check of a decode's samples on the device, spanning `sampled_ns` of sampling:
  // whether any SM was active in them.
  void NoteSpotCheck(uint32_t device_id, int64_t now_ns, int64_t sampled_ns, bool active);

  // Fills (*targets)[device] for every key of *targets (the devices set up now), given the
  // sampling time spent so far. Decides the budget once for all devices, and only when some
  // device is wanted, so that stopping for want of work never counts as a budget pause.
  void Decide(int64_t now_ns, int64_t sampled_ns, std::map<uint32_t, PmTarget>* targets);

  // Whether the device has work that wants samples now, budget aside.
  bool Wanted(uint32_t device_id, int64_t now_ns) const;
  // Whether a device stopped for idleness is wanted by the signals and will be looked at later:
  // the collector then wakes every decode period, since no signal comes for it.
  bool ProbePending(int64_t now_ns) const;
  // GPU-busy time, all devices, as last reported.
  int64_t busy_ns() const { return busy_ns_; }
  int64_t budget_pauses() const { return budget_.pauses(); }
  // Whether the device is not wanted only because it was found idle (the signals want it).
  bool StoppedForIdleness(uint32_t device_id, int64_t now_ns) const;
  int64_t idle_sampled_ns() const { return idle_sampled_ns_; }  // charged to the idle allowance
  bool budget_paused() const { return budget_.paused(); }

 private:
  // New code or the writer's report wants samples on the device (idle or not).
  bool Signalled(uint32_t device_id, int64_t now_ns) const;
  // Whether the idle allowance is spent (a device's idleness then stops it).
  bool IdleAllowanceSpent() const;

  const PmPolicySettings settings_;
  WallTimeBudget budget_;  // its "elapsed" is GPU-busy time here
  int64_t new_code_until_ns_ = INT64_MIN;
  std::map<uint32_t, uint32_t> wanting_;  // device -> wanting configurations, as reported
  int64_t busy_ns_ = 0;
  // Per device: its last spot check found it idle with the idle allowance spent (stopped), and
  // when it may be looked at again.
  struct Idle {
    bool stopped = false;
    int64_t look_at_ns = 0;
  };
  std::map<uint32_t, Idle> idle_;
  int64_t idle_sampled_ns_ = 0;
};

}  // namespace occ::inj
