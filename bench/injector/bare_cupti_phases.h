// What CUPTI costs a program *after* it was used, and whether detaching it (cuptiFinalize)
// gives that back: phases of CUPTI use over a run, for bare_cupti_injection.so.
//
// Light tracing switches kernel records on for short windows, and the achieved-occupancy
// profiler switches launch callbacks on while it samples; both keep a subscriber for the rest of
// the run. PyTorch's profiler saw training stay 10-20 % slower after profiling until it called
// cuptiFinalize (pytorch/pytorch#146604). These modes measure the same on our workloads, in
// turns (turns_bench.py), against BARE_CUPTI_MODE=inject and =attach:
//
//   BARE_CUPTI_MODE=callbacks-off   subscriber; the driver and runtime launch callbacks (those
//                                   the achieved profiler enables) on for ON_MS, then off
//                  =records-off     subscriber; kernel records on for ON_MS, then off
//                  =records-detach  kernel records on for ON_MS, then CUPTI detached
//                  =windows-keep    kernel records on for ON_MS, then for WINDOW_MS every
//                                   PERIOD_MS; the subscriber stays (light tracing's windows)
//                  =windows-detach  the same windows, CUPTI detached between them and attached
//                                   again for each (subscribe, buffer callbacks, records)
//                  =ids             not a cost: the driver launch callbacks stay on, and 1 launch
//                                   in 16 compares CUPTI's context and stream ids with the
//                                   driver's (cuCtxGetId, cuStreamGetId) and cuptiGetTimestamp
//                                   with CLOCK_REALTIME and CLOCK_MONOTONIC: whether launches
//                                   recorded with CUPTI detached can be named and stamped as
//                                   CUPTI's records are
//   BARE_CUPTI_ON_MS (3000), BARE_CUPTI_WINDOW_MS (200), BARE_CUPTI_PERIOD_MS (5000)
//
// Detaching follows CUPTI's protocol: records off, a forced flush, then cuptiFinalize from the
// exit of the program's next driver or runtime API call (callbacks on both domains until then).
// At exit one line on stderr, `bare_cupti: ...`, says what each phase cost: attach and finalize
// times (finalize runs on a program thread, inside its API call), how long a detach waited for
// an API call, kernel records per window (records flow again after re-attaching), and CUPTI
// errors.
#pragma once

namespace bare_cupti {

// Whether `mode` (BARE_CUPTI_MODE, may be null) is one of the modes above.
bool IsPhaseMode(const char* mode);

// Starts the phases of `mode` (called inside cuInit, from InitializeInjection): the first
// attach happens before returning, the rest on a thread of its own. False when `mode` is not a
// phase mode or the first attach failed (printed).
bool StartPhases(const char* mode);

}  // namespace bare_cupti
