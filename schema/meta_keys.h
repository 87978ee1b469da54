// OCC_META's keys (schema/trace_schema.sql): the one declared table of every name that occtrace
// writes into a trace's OCC_META, or wrote in older versions, with the part that writes it, its
// unit and what it means. Everything else follows from it:
//   - docs/schema.md's list is generated from it (schema/meta_keys_doc.h; rewrite it with
//     `cmake --build build --target update_meta_keys_doc`), and tests/schema/meta_keys_test.cc
//     fails when the two differ;
//   - the injector's TraceWriter::SetMeta checks every key it writes against it and records the
//     undeclared ones (injector/writer/trace_writer.h), and the injector's tests fail on any;
//     tests/schema/meta_keys_test.cc also scans the injector's sources for literal keys and reads
//     the checked-in recorded traces;
//   - the analyzer names the keys it reads and the ones its torch.profiler import writes as
//     CheckedMetaKey, which does not compile for a key that is not declared here.
//
// Why a header and not a data file: the table is a constexpr array, so the injector (which must
// not link protobuf, and parses nothing at start-up) and the analyzer both include it without
// linking each other or a parser, and the static_asserts below check every row when it compiles.
//
// Adding a key: one row in kMetaKeys, then regenerate docs/schema.md. A name is snake_case; a
// part written with a number in it (an index, a device) is declared as the placeholder `{n}`,
// which stands for one or more decimal digits: "cupti_error_{n}". Descriptions are one line of
// Markdown (no `|`: they become table cells).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace occ::meta {

// The part of occtrace that writes a key: one bit each, a key may have several. kRetired keys
// were written by occtrace before 2026-11-28 and by nothing since: older traces still hold them,
// so they stay documented and readable, but writing one today is an error like an undeclared key.
enum Writer : uint16_t {
  kWriter = 1 << 0,       // injector/writer/
  kSession = 1 << 1,      // injector/session/
  kTracer = 1 << 2,       // injector/tracer/
  kLight = 1 << 3,        // injector/light/
  kPm = 1 << 4,           // injector/achieved/pm/
  kReplay = 1 << 5,       // injector/achieved/replay/
  kTorchImport = 1 << 6,  // analyzer/read/: a torch.profiler trace converted to this schema
  kRetired = 1 << 7,
};
inline constexpr uint16_t kInjector = kWriter | kSession | kTracer | kLight | kPm | kReplay;
inline constexpr uint16_t kAnyWriter = kInjector | kTorchImport | kRetired;

// What a value holds (every value is stored as text).
enum Unit : uint8_t {
  kText,
  kInteger,   // an id or a version number
  kCount,
  kFlag,      // 0 or 1
  kNs,
  kUs,
  kMs,
  kSeconds,
  kBytes,
  kPercent,
  kShare,     // a fraction of 1
  kMsSpread,  // "count, median M ms, max X ms"
};

struct MetaKey {
  std::string_view name;  // may hold the placeholder {n}
  uint16_t writers;       // Writer bits
  Unit unit;
  std::string_view description;
};

// In the order docs/schema.md lists them.
inline constexpr MetaKey kMetaKeys[] = {
    // The session.
    {"schema_version", kWriter | kTorchImport, kInteger, "the trace schema's version, `1` (schema/trace_schema.sql); occ-report refuses a newer one"},
    {"occtrace_version", kSession, kText, "version of libocctrace.so"},
    {"command_line", kSession, kText, "the traced process's `/proc/self/cmdline`, arguments space-separated (quoted if they contain spaces)"},
    {"pid", kSession, kInteger, "process id"},
    {"host", kSession, kText, "host name"},
    {"rank", kSession | kTorchImport, kInteger, "the process's rank in a distributed job, as `rank_source` gave it. Absent when no launcher set a rank"},
    {"local_rank", kSession, kInteger, "the process's rank on its node, from the launcher that gave `rank`; absent when its variable is unset"},
    {"world_size", kSession | kTorchImport, kCount, "processes in the job, from the launcher that gave `rank`; absent when its variable is unset"},
    {"local_world_size", kSession, kCount, "processes on the node, from the launcher that gave `rank`; absent when its variable is unset"},
    {"rank_source", kSession | kTorchImport, kText, "where `rank` came from: the first launcher whose rank variable is set, in this order: `torchrun` (`RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `LOCAL_WORLD_SIZE`), `slurm` (`SLURM_PROCID`, `SLURM_LOCALID`, `SLURM_NTASKS`, `SLURM_NTASKS_PER_NODE`), `openmpi` (`OMPI_COMM_WORLD_RANK`, `_LOCAL_RANK`, `_SIZE`, `_LOCAL_SIZE`), `mpich` (`PMI_RANK`, `MPI_LOCALRANKID`, `PMI_SIZE`, `MPI_LOCALNRANKS`); `torch.profiler distributedInfo` in an imported torch.profiler trace"},
    {"start_time_utc", kSession, kText, "session start, ISO 8601 UTC"},
    {"start_time_ns", kSession, kNs, "session start, CLOCK_REALTIME"},
    {"end_time_ns", kSession, kNs, "session end, CLOCK_REALTIME; absent if the process was killed with SIGKILL"},
    {"status", kSession, kText, "`running` until the end, then `complete`, `terminated by SIGTERM` (SIGINT, SIGHUP), `failed: CUPTI setup`, or `failed: write error` (SQLite failed mid-run; the file holds what was committed before, and these closing rows are written only if the file took writes again at exit). A trace still saying `running` was cut off (SIGKILL, `os._exit`, crash): it holds every launch up to its last commit"},
    {"trace_mode", kSession | kWriter | kTorchImport, kText, "`full` (every launch timed) or `light` (every launch in `OCC_LAUNCH_CALL`, GPU time sampled in windows; tracing.md, \"Light tracing\")"},
    {"output_path", kTracer, kText, "the file as created"},
    {"cuda_driver_version", kTracer, kText, "e.g. `13.0` (`cuDriverGetVersion`), or `unknown`"},
    {"cuda_runtime_version", kTracer, kText, "e.g. `13.0`, or `unknown` when the CUDA runtime is linked statically into the program (nvcc's default) or not used"},
    {"cupti_version", kTracer, kInteger, "`cuptiGetVersion()` of the loaded libcupti (API version number, e.g. `130001`), or `unknown`"},
    {"cupti_api_version_compiled", kTracer, kInteger, "`CUPTI_API_VERSION` occtrace was built against"},
    // Settings in effect.
    {"setting_output_pattern", kTracer, kText, "`OCCTRACE_OUTPUT`, before placeholder expansion"},
    {"setting_force", kTracer, kFlag, "`OCCTRACE_FORCE`"},
    {"setting_flush_period_ms", kSession, kMs, "`OCCTRACE_FLUSH_MS`: the commit period"},
    {"setting_buffer_bytes", kSession, kBytes, "`OCCTRACE_BUFFER_MB`: each CUPTI activity buffer"},
    {"setting_max_buffers", kSession, kCount, "`OCCTRACE_MAX_BUFFERS`: activity buffers in flight at most"},
    {"setting_max_record_age_ms", kSession, kMs, "`OCCTRACE_MAX_RECORD_AGE_MS`: longest CUPTI may keep a buffer before a forced flush"},
    {"setting_light_period_ms", kSession, kMs, "light traces: `OCCTRACE_LIGHT_PERIOD_MS`"},
    {"setting_light_window_ms", kSession, kMs, "light traces: `OCCTRACE_LIGHT_WINDOW_MS`"},
    {"setting_light_max_duty_pct", kSession, kPercent, "light traces: `OCCTRACE_LIGHT_MAX_DUTY_PCT`"},
    {"setting_light_new_config_windows", kSession, kFlag, "light traces: `OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS`"},
    // What was recorded, and what was lost.
    {"launch_count", kSession, kCount, "kernel launches: rows in `OCC_LAUNCH` (a light trace: in `OCC_LAUNCH_CALL`), updated at every commit"},
    {"timed_launch_count", kSession, kCount, "light traces: rows of `OCC_LAUNCH` (launches timed in a window)"},
    {"kernel_count", kSession, kCount, "distinct kernel (mangled) names"},
    {"config_count", kSession, kCount, "rows in `OCC_KERNEL_CONFIG`"},
    {"achieved_count", kSession, kCount, "rows in `OCC_ACHIEVED`"},
    {"function_count", kSession, kCount, "rows written to `OCC_FUNCTION`"},
    {"dropped_records", kSession, kCount, "activity records lost: counted by CUPTI (`cuptiActivityGetNumDroppedRecords`, when no buffer was available), records arriving after the session ended, and `records_lost_write_error`. Non-zero means the trace is incomplete"},
    {"records_lost_write_error", kSession, kCount, "activity records lost to a write error: those in the transaction the failure rolled back plus every one handed over afterwards (occtrace keeps taking CUPTI's buffers to count them). The exit line reports them too"},
    {"achieved_lost_write_error", kSession, kCount, "achieved-occupancy samples lost to a write error, counted as `records_lost_write_error`"},
    {"refused_buffer_requests", kSession, kCount, "times CUPTI asked for a buffer while all were in use (the writer fell behind)"},
    {"unserialized_flushes", kSession, kCount, "CUPTI activity flushes that waited 2 s for another one in progress and then ran concurrently with it (expected 0; occtrace otherwise runs one `cuptiActivityFlushAll` at a time)"},
    {"incomplete_kernel_records", kSession, kCount, "kernel records a forced flush handed back while the kernel ran (start, no end): stored in `OCC_LAUNCH` with `duration` 0; `occ-report` counts them as launches without GPU time"},
    {"stale_forced_flushes", kSession, kCount, "forced flushes made because CUPTI held a buffer longer than `OCCTRACE_MAX_RECORD_AGE_MS`"},
    {"foreign_activity_records", kSession, kCount, "activity records of kinds occtrace never enables that reached its buffers (another client enabling activity kinds process-wide)"},
    // Modules and their loaders.
    {"cubin_modules_parsed", kSession, kCount, "loaded modules whose cubin was read into `OCC_FUNCTION`"},
    {"cubin_modules_skipped", kSession, kCount, "module images that are not a readable cubin (non-ELF, compressed, malformed): the first 3 are named on stderr; their kernels are traced without `OCC_FUNCTION` facts"},
    {"cubin_modules_dropped", kSession, kCount, "module images not copied because 256 MiB of images were already waiting for the writer"},
    {"module_loader_captures", kSession, kCount, "loading-thread stack captures taken for `OCC_MODULE.loader`"},
    {"module_loaders_found", kSession, kCount, "captures that named a loader"},
    {"module_loader_capture_ns_total", kSession, kNs, "what those captures cost the loading threads, summed (once per module)"},
    {"module_loader_capture_ns_max", kSession, kNs, "the costliest capture"},
    // CUPTI and other clients.
    {"cupti_fatal_error", kTracer, kText, "message of a CUPTI fatal error, after which tracing stopped"},
    {"cupti_error_count", kTracer, kCount, "non-fatal CUPTI errors (`CUPTI_CBID_STATE_ERROR`); absent when there were none"},
    {"cupti_error_{n}", kTracer, kText, "the message of CUPTI error n, for the first 5 (also printed as `occtrace: CUPTI error: …` lines)"},
    {"cupti_warning_count", kTracer, kCount, "CUPTI warnings (`CUPTI_CBID_STATE_WARNING`); absent when there were none"},
    {"cupti_warning_{n}", kTracer, kText, "the message of CUPTI warning n, for the first 5"},
    {"subscriber_watch", kTracer, kText, "how many `cuptiSubscribe`/`cuptiSubscribe_v2` call sites of the loaded libraries occtrace routed through itself to see refused CUPTI clients (tracing.md, \"Another profiler in the way\"), or `off` (`OCCTRACE_WATCH_SUBSCRIBERS=0`)"},
    {"cupti_refused_subscriber", kTracer, kText, "the CUPTI client CUPTI refused because occtrace held the subscription, e.g. `torch.profiler (Kineto in libtorch_cpu.so)`. Absent when there was none"},
    // Light tracing (tracing.md, "Light tracing").
    {"light_windows", kSession, kCount, "timing windows opened"},
    {"light_windows_for_new_configs", kSession, kCount, "windows opened for configurations not seen before"},
    {"light_windows_for_under_timed", kSession, kCount, "windows opened for configurations with fewer than 16 timed launches"},
    {"light_records_on_ms", kSession, kMs, "how long kernel records were on"},
    {"light_records_on_pct", kSession, kPercent, "the same, as a share of the time since the first window"},
    {"light_records_switch_on_ms_max", kSession, kMs, "what switching kernel records on cost the writer thread, at most"},
    {"light_records_switch_on_ms_total", kSession, kMs, "the same, summed"},
    {"light_records_switch_off_ms_max", kSession, kMs, "what switching kernel records off cost the writer thread, at most"},
    {"light_records_switch_off_ms_total", kSession, kMs, "the same, summed"},
    {"light_graph_launches", kSession, kCount, "graph launches recorded"},
    {"light_unknown_graph_launches", kSession, kCount, "graph launches whose graph was not seen instantiated"},
    {"light_launches_dropped", kSession, kCount, "launch calls dropped because the launch queue was full"},
    {"light_timed_unmatched", kSession, kCount, "timed launches without a recorded launch call"},
    {"light_timed_dropped_at_switch", kSession, kCount, "kernel records of launches that did not run entirely inside one window (still running or queued when records were switched off, whose end CUPTI reports wrong): neither timed nor stored"},
    {"light_captured_launches", kTracer, kCount, "launches into a capturing stream, not counted"},
    {"light_windows_refused_by_profiler", kTracer, kCount, "windows that timed nothing: CUPTI refuses kernel records while achieved occupancy's range profiler is enabled"},
    {"light_functions_unreadable", kTracer, kCount, "launches whose function's facts (name, attributes) could not be read: not recorded"},
    // Light tracing's launch hook (OCCTRACE_LIGHT_DETACH=1).
    {"light_hook", kTracer, kText, "`on`, or `unavailable` when no driver launch entry point was found"},
    {"light_hook_entry_points", kTracer, kCount, "distinct driver entry-point addresses wrapped"},
    {"light_hook_pointers_rewritten", kTracer, kCount, "stored pointers to them rewritten in the loaded libraries"},
    {"light_hook_rescans", kTracer, kCount, "rescans of the loaded libraries after the first scan"},
    {"light_hook_scan_ms_total", kTracer, kMs, "time spent scanning the libraries' data, summed: the first scan inside `cuInit` on the program's thread, later ones on the writer thread"},
    {"light_hook_scan_ms_max", kTracer, kMs, "the longest scan"},
    {"light_hook_objects", kTracer, kText, "libraries whose pointers were rewritten, comma-separated"},
    {"light_hook_launches", kTracer, kCount, "launches recorded through the wrappers"},
    {"light_hook_launches_outside", kTracer, kCount, "launches CUPTI's callbacks saw without a wrapper, recorded from the callbacks"},
    {"light_hook_fallback", kTracer, kFlag, "`1`: the launch callbacks stayed on for good"},
    {"light_hook_callback_switches", kTracer, kCount, "times CUPTI's launch callbacks were switched on or off"},
    {"light_hook_callbacks_on_ms", kTracer, kMs, "how long CUPTI's launch callbacks were on in all: every launch in that time paid for them"},
    {"light_hook_rescans_at_s", kTracer, kSeconds, "when each rescan after the first ran, since the hook was installed, comma-separated (the first 32), or `none`"},
    // Light tracing with CUPTI detached between windows (tracing.md, "CUPTI detached between windows").
    {"light_detach", kTracer, kText, "`on`"},
    {"light_detaches", kTracer, kCount, "times CUPTI was detached (`cuptiFinalize`)"},
    {"light_reattaches", kTracer, kCount, "times CUPTI was attached again"},
    {"light_reattach_ms", kTracer, kMsSpread, "what attaching again took"},
    {"light_finalize_ms", kTracer, kMsSpread, "what `cuptiFinalize` took"},
    {"light_detach_wait_ms", kTracer, kMsSpread, "how long a requested detach waited"},
    {"light_detach_requests_taken_back", kTracer, kCount, "detach requests taken back before they ran"},
    {"light_reattach_refusals", kTracer, kCount, "attaches CUPTI refused"},
    {"light_reattach_error", kTracer, kText, "why attaching again failed; absent when it never did"},
    {"light_controller_refused_events", kTracer, kCount, "events the CUPTI controller refused because its state table has no row for them in the state it was in (`injector/tracer/cupti_controller.h`)"},
    {"light_detach_state_at_end", kTracer, kText, "`recording`, `attached`, `detach requested`, `finalizing` or `detached` when the trace closed"},
    {"light_detach_windows_kept_attached", kTracer, kCount, "windows that ended attached: the hook missed launches or new code appeared in the last 10 s"},
    {"light_detach_stopped", kTracer, kText, "`no`, or why detaching stopped for good (e.g. CUDA graphs)"},
    {"light_detach_graphs_read_by_hook", kTracer, kCount, "graphs whose kernel nodes the hook read at instantiation"},
    {"light_detach_contexts_learned_equal", kLight, kText, "driver context ids whose CUPTI id was learned, as `equal/learned`"},
    {"light_detach_streams_learned_equal", kLight, kText, "driver stream ids whose CUPTI id was learned, as `equal/learned`"},
    {"light_detach_untranslated_context_launches", kLight, kCount, "launches written with the driver's context id (its CUPTI id was never learned)"},
    {"light_detach_untranslated_stream_launches", kLight, kCount, "launches written with the driver's stream id"},
    // Achieved occupancy (achieved.md).
    {"achieved_mode", kTracer | kPm | kReplay, kText, "`pm` (PM sampling), `sample` or `all` (kernel replay), or `off` (not measured)"},
    {"achieved_status", kPm | kReplay | kTorchImport, kText, "`ok`, `ok: no launch measured`, `no-permission: …`, `unsupported: …` or `error: …` with the failing call; an imported torch.profiler trace says why it has none"},
    // PM sampling (OCCTRACE_ACHIEVED=pm; achieved.md, "PM sampling").
    {"pm_status", kPm, kText, "`on`, `no-permission`, `unsupported`, or `error: …` with the failing call"},
    {"pm_interval_ns", kPm, kNs, "the sampling interval in GPU time (`OCCTRACE_PM_INTERVAL_US`)"},
    {"pm_metrics", kPm, kText, "the metrics sampled, comma-separated"},
    {"pm_chip", kPm, kText, "the chip they were configured for, e.g. `GH100`"},
    {"pm_devices", kPm, kCount, "devices PM sampling was set up on"},
    {"pm_devices_sampled", kPm, kCount, "of those, the ones whose set-up did not fail"},
    {"pm_samples", kWriter, kCount, "rows in `OCC_PM_SAMPLE`, updated at every commit"},
    {"pm_samples_idle", kWriter, kCount, "samples no kernel ran in, or with no SM active: not stored"},
    {"pm_samples_decoded", kPm, kCount, "samples decoded"},
    {"pm_samples_lost", kPm, kCount, "samples decoded while the writer held every image, not stored"},
    {"pm_samples_lost_write_error", kWriter, kCount, "samples lost to a write error"},
    {"pm_evaluate_errors", kWriter, kCount, "samples whose metric evaluation failed"},
    {"pm_overflows", kPm, kCount, "decodes that reported a hardware-buffer overflow (sampling was then set up again)"},
    {"pm_reopens", kPm, kCount, "times sampling was set up again after an overflow or a refused restart"},
    {"pm_decode_errors", kPm, kCount, "decodes that failed"},
    {"pm_decodes", kPm, kCount, "decode passes that read the hardware buffer"},
    {"pm_decode_ms", kPm, kMs, "the decode thread's time decoding, summed"},
    {"pm_decode_max_us", kPm, kUs, "the longest decode"},
    {"pm_sample_info_ms", kPm, kMs, "of `pm_decode_ms`, reading each sample's start and end"},
    {"pm_decode_period_ms", kPm, kMs, "how often the decode thread reads the hardware buffer (`OCCTRACE_PM_DECODE_MS`)"},
    {"pm_wakeups", kPm, kCount, "the decode thread's passes: every decode period while sampling, one per window while paused"},
    {"pm_writer_ms", kWriter, kMs, "the writer thread's time evaluating and storing samples"},
    {"pm_setup_ms", kPm, kMs, "set-up time on the program's threads (at context creation)"},
    {"pm_hardware_buffer_bytes", kPm, kBytes, "the hardware buffer per device (`OCCTRACE_PM_BUFFER_MB`)"},
    {"pm_image_bytes", kPm, kBytes, "each counter-data image"},
    {"pm_image_samples", kPm, kCount, "samples per image at most (`OCCTRACE_PM_IMAGE_SAMPLES`)"},
    {"pm_budget", kPm, kShare, "the CPU bound's share of GPU-busy time (`OCCTRACE_SAMPLE_BUDGET`; achieved.md, \"PM sampling (the default)\")"},
    {"pm_sampling_ms", kPm, kMs, "how long sampling was on, summed over devices"},
    {"pm_run_ms", kPm, kMs, "of how long since it was first set up"},
    {"pm_pauses", kPm, kCount, "times sampling stopped because the share was spent"},
    {"pm_retirements", kPm, kCount, "devices whose last context was destroyed (sampling stopped and disabled)"},
    {"pm_starts", kPm, kCount, "times sampling started from armed: new code, or configurations wanting samples"},
    {"pm_stops", kPm, kCount, "times sampling stopped to armed: nothing wanted samples"},
    {"pm_throttles", kPm, kCount, "times sampling stopped until the writer gave back half the image pool (flow control: no busy sample dropped)"},
    {"pm_resumes", kPm, kCount, "times sampling started again after the CPU bound paused it"},
    {"pm_new_code_signals", kPm, kCount, "module loads that asked for samples (new code running)"},
    {"pm_work_reports", kPm, kCount, "the writer's reports of configurations wanting samples"},
    {"pm_spot_checks", kPm, kCount, "decodes whose samples the collector checked for an active SM"},
    {"pm_spot_checks_untold", kPm, kCount, "spot checks that could not tell (CUPTI lock busy, evaluation failed)"},
    {"pm_idle_sampling_ms", kPm, kMs, "sampling time whose spot check found the GPU idle (the idle allowance's)"},
    {"pm_idle_stops", kPm, kCount, "stops of a device found idle once the idle allowance was spent"},
    {"pm_gpu_busy_ms", kPm, kMs, "GPU-busy time the budget last saw: the union of kernel times"},
    {"pm_samples_expected", kPm, kCount, "sampling time / interval: `pm_samples_decoded` + `pm_samples_undecoded`, to about one sample per start and stop"},
    {"pm_samples_undecoded", kPm, kCount, "samples never decoded (overflows, the end of the run)"},
    {"pm_samples_evaluated", kWriter, kCount, "samples whose metrics were evaluated"},
    {"pm_samples_idle_unevaluated", kWriter, kCount, "of `pm_samples_idle`, those never evaluated (no kernel ran in them)"},
    {"pm_samples_ahead_of_records", kWriter, kCount, "samples evaluated before the kernel records of their time had come"},
    {"pm_samples_rejected_long", kWriter, kCount, "samples longer than 4 intervals, not stored"},
    {"pm_samples_lost_idle", kWriter, kCount, "of `pm_samples_lost`, samples no kernel ran in"},
    {"pm_samples_lost_busy", kWriter, kCount, "of `pm_samples_lost`, samples a kernel ran in (should be 0)"},
    {"pm_samples_waiting", kWriter, kCount, "samples still waiting for their kernel records (0 once the trace is closed)"},
    {"pm_late_kernel_records", kWriter, kCount, "kernel records that came after their samples were judged idle (should be 0)"},
    {"pm_images_judged", kWriter, kCount, "counter-data images the writer judged"},
    {"pm_images_judged_caught_up", kWriter, kCount, "of those, images judged after their kernel records had come"},
    {"pm_images_held_max", kWriter, kCount, "the most images the writer held waiting for kernel records"},
    {"pm_configs_seen", kWriter, kCount, "kernel configurations the writer saw"},
    {"pm_configs_sampled", kWriter, kCount, "of those, configurations with kernel time inside stored samples"},
    {"pm_configs_sampled_enough", kWriter, kCount, "of those, configurations with `pm_enough_sampled_us` of it (sampling stops when every running one has)"},
    {"pm_enough_sampled_us", kWriter, kUs, "the sampled kernel time a configuration needs before sampling may stop for it"},
    // Kernel replay (OCCTRACE_ACHIEVED=sample|all; achieved.md).
    {"achieved_metrics", kReplay, kText, "the metrics measured, comma-separated"},
    {"achieved_replay", kReplay, kText, "`kernel` or `user` (`OCCTRACE_ACHIEVED_REPLAY`)"},
    {"achieved_chip", kReplay, kText, "the chip the metrics were configured for"},
    {"achieved_launches_measured", kReplay, kCount, "launches measured"},
    {"achieved_launches_not_measured", kReplay, kCount, "launches picked for measuring that gave no figure (graph launches, failed ranges)"},
    {"achieved_signatures_measured", kReplay, kCount, "launch signatures (kernel, grid, block, shared memory) with a measured launch"},
    {"achieved_signatures_seen", kReplay, kCount, "launch signatures seen"},
    {"achieved_signature_cap", kReplay, kCount, "most signatures remembered (`OCCTRACE_ACHIEVED_MAX_SIGNATURES`)"},
    {"achieved_launches_over_signature_cap", kReplay, kCount, "launches not considered because their signature came after the cap"},
    {"achieved_samples_per_signature", kReplay, kCount, "`OCCTRACE_SAMPLES`"},
    {"achieved_sample_budget", kReplay, kShare, "`OCCTRACE_SAMPLE_BUDGET`: the share of wall time spent profiling"},
    {"achieved_budget_applies", kReplay, kFlag, "`1` in `sample` mode, where the budget is kept"},
    {"achieved_sample_burst_ms", kReplay, kMs, "`OCCTRACE_SAMPLE_BURST_MS`: budget to build up before sampling resumes after a pause"},
    {"achieved_profiling_ns", kReplay, kNs, "profiling time charged to the budget"},
    {"achieved_setup_ns", kReplay, kNs, "profiler set-up on the program's threads"},
    {"achieved_background_setup", kReplay, kFlag, "`OCCTRACE_ACHIEVED_BACKGROUND_SETUP`"},
    {"achieved_background_setup_ns", kReplay, kNs, "set-up and warm-up on occtrace's set-up threads"},
    {"achieved_budget_pauses", kReplay, kCount, "times sampling paused because the budget was spent"},
    {"achieved_skipped_for_budget", kReplay, kCount, "launches that would have been measured but were skipped while the budget was spent"},
    {"achieved_idle_park_s", kReplay, kSeconds, "`OCCTRACE_ACHIEVED_IDLE`: idle time before the profiler is parked"},
    {"achieved_parks", kReplay, kCount, "times a context's profiler was parked (disabled)"},
    {"achieved_unparks", kReplay, kCount, "times a parked profiler was enabled again"},
    {"achieved_park_deinit", kReplay, kFlag, "`OCCTRACE_ACHIEVED_PARK_DEINIT`"},
    {"achieved_profiler_session_ends", kReplay, kCount, "times CUPTI's profiler session was ended (`cuptiProfilerDeInitialize`) because every context parked"},
    {"achieved_context_wait_timeouts", kReplay, kCount, "launches that gave up waiting for their context's profiler"},
    {"achieved_busy_waits", kReplay, kCount, "waits for a profiler busy on another thread"},
    {"achieved_phase_ms", kReplay, kText, "where measured launches spent their time, ms summed over the run: `start=…,launch=…,stop=…,decode=…,evaluate=…,reset=…`"},
    // Imported torch.profiler traces.
    {"torch_summed_shared_memory", kTorchImport, kCount, "kernels whose static and dynamic shared memory Kineto recorded as one sum"},
    {"distributed_backend", kTorchImport, kText, "the process group's backend (`nccl`, `gloo`, …) from the trace's `distributedInfo`"},
    // Written only before 2026-11-28: kernel replay's re-attach after sampling, quiet parking,
    // CUPTI buffer experiments.
    {"setting_reattach", kRetired, kText, "`OCCTRACE_ACHIEVED_REATTACH`: `1` or `force`"},
    {"reattach", kRetired, kText, "kernel replay's re-attach after sampling: `on`; `off: …` or `unavailable: …` with why"},
    {"reattach_began", kRetired, kCount, "re-attaches begun"},
    {"reattach_completed", kRetired, kCount, "re-attaches that ended with CUPTI attached again"},
    {"reattach_began_at_ms", kRetired, kText, "when each began, ms after tracing started, comma-separated, or `none`"},
    {"reattach_gap_ms", kRetired, kMsSpread, "kernel records off to on again"},
    {"reattach_gap_launches", kRetired, kCount, "launches in those gaps (`OCC_LAUNCH_CALL` rows); `launch_count` includes them"},
    {"reattach_gap_calls_held", kRetired, kCount, "launch calls the hook held during gaps"},
    {"reattach_gap_duplicates", kRetired, kCount, "calls the hook recorded that a kernel record also described, dropped"},
    {"reattach_gap_configs_from_calls", kRetired, kCount, "gap launches of a shape no kernel record had"},
    {"reattach_gap_calls_dropped", kRetired, kCount, "gap calls dropped because the call buffer was full"},
    {"reattach_stopped", kRetired, kText, "`no`, or why re-attaching stopped for good (e.g. CUDA graphs)"},
    {"reattach_ticks_waiting_for_sampling", kRetired, kCount, "writer ticks a re-attach waited for sampling to rest"},
    {"reattach_given_up_for_hook_misses", kRetired, kCount, "re-attaches called off because CUPTI's callbacks saw a launch the hook missed"},
    {"reattach_step_at_end", kRetired, kText, "the re-attach's step when the trace closed"},
    {"reattach_hook_entry_points", kRetired, kCount, "as `light_hook_entry_points`, for the re-attach's launch hook"},
    {"reattach_hook_pointers_rewritten", kRetired, kCount, "as `light_hook_pointers_rewritten`"},
    {"reattach_hook_rescans", kRetired, kCount, "as `light_hook_rescans`"},
    {"reattach_hook_scan_ms_total", kRetired, kMs, "as `light_hook_scan_ms_total`"},
    {"reattach_hook_scan_ms_max", kRetired, kMs, "as `light_hook_scan_ms_max`"},
    {"reattach_hook_objects", kRetired, kText, "as `light_hook_objects`"},
    {"reattach_hook_launches", kRetired, kCount, "as `light_hook_launches`"},
    {"reattach_hook_launches_outside", kRetired, kCount, "as `light_hook_launches_outside`"},
    {"reattach_hook_fallback", kRetired, kFlag, "as `light_hook_fallback`"},
    {"reattach_hook_callback_switches", kRetired, kCount, "as `light_hook_callback_switches`"},
    {"reattach_hook_callbacks_on_ms", kRetired, kMs, "as `light_hook_callbacks_on_ms`"},
    {"reattach_hook_rescans_at_s", kRetired, kSeconds, "as `light_hook_rescans_at_s`"},
    {"reattach_hook_dormant_ms", kRetired, kMs, "how long the hook neither watched nor rescanned because no re-attach could come (after the last one, or once the re-attach stopped for the run); its wrappers still passed every launch through"},
    {"light_hook_dormant_ms", kRetired, kMs, "always 0"},
    {"full_detach", kRetired, kText, "`on`: the re-attach's detaches, as `light_detach`"},
    {"full_detaches", kRetired, kCount, "as `light_detaches`"},
    {"full_reattaches", kRetired, kCount, "as `light_reattaches`"},
    {"full_reattach_ms", kRetired, kMsSpread, "as `light_reattach_ms`"},
    {"full_finalize_ms", kRetired, kMsSpread, "as `light_finalize_ms`"},
    {"full_detach_wait_ms", kRetired, kMsSpread, "as `light_detach_wait_ms`"},
    {"full_detach_requests_taken_back", kRetired, kCount, "as `light_detach_requests_taken_back`"},
    {"full_reattach_refusals", kRetired, kCount, "as `light_reattach_refusals`"},
    {"full_reattach_error", kRetired, kText, "as `light_reattach_error`"},
    {"full_state_at_end", kRetired, kText, "as `light_detach_state_at_end`"},
    {"light_state_at_end", kRetired, kText, "the name `light_detach_state_at_end` had"},
    {"light_detach_windows_kept_attached_for_sampling", kRetired, kCount, "windows kept attached because achieved occupancy was being sampled (light tracing with detach sampled then)"},
    {"achieved_quiet_park", kRetired, kFlag, "`OCCTRACE_ACHIEVED_QUIET_PARK`: once every context was parked, the launch callbacks went off too"},
    {"achieved_quiet_park_listen_ms", kRetired, kMs, "`OCCTRACE_ACHIEVED_LISTEN_MS`: how long every context had to be parked before they did"},
    {"achieved_quiet_parks", kRetired, kCount, "times the launch callbacks went off"},
    {"achieved_listens", kRetired, kCount, "times they came on again"},
    {"setting_zeroed_buffers", kRetired, kFlag, "`OCCTRACE_ZERO_BUFFERS`: buffers reached CUPTI already zeroed"},
    {"setting_cupti_device_buffer_bytes", kRetired, kBytes, "`OCCTRACE_CUPTI_DEVICE_BUFFER_MB`: CUPTI's device-side record buffers (0: CUPTI's default)"},
    {"setting_cupti_device_buffers", kRetired, kCount, "`OCCTRACE_CUPTI_DEVICE_BUFFERS`: how many CUPTI pre-allocated (0: CUPTI's default)"},
};

// Whether `name` is what `declared` names: the same text, where a `{n}` in `declared` stands
// for one or more decimal digits.
constexpr bool MetaKeyMatches(std::string_view declared, std::string_view name) {
  size_t d = 0, n = 0;
  while (d < declared.size()) {
    if (declared.substr(d, 3) == "{n}") {
      const size_t first_digit = n;
      while (n < name.size() && name[n] >= '0' && name[n] <= '9') ++n;
      if (n == first_digit) return false;
      d += 3;
    } else {
      if (n >= name.size() || name[n] != declared[d]) return false;
      ++d, ++n;
    }
  }
  return n == name.size();
}

// The index of the row declaring `name`, or std::size(kMetaKeys). An index, not a pointer:
// GCC 12 with -fsanitize refuses to compare a pointer into the table with nullptr in a constant
// expression, which CheckedMetaKey needs.
constexpr size_t FindMetaKeyIndex(std::string_view name) {
  for (size_t i = 0; i < std::size(kMetaKeys); ++i) {
    if (MetaKeyMatches(kMetaKeys[i].name, name)) return i;
  }
  return std::size(kMetaKeys);
}

// The row declaring `name`, or nullptr.
constexpr const MetaKey* FindMetaKey(std::string_view name) {
  const size_t i = FindMetaKeyIndex(name);
  return i < std::size(kMetaKeys) ? &kMetaKeys[i] : nullptr;
}

// Whether `name` is declared as written by one of `writers` (Writer bits).
constexpr bool IsDeclared(std::string_view name, uint16_t writers = kAnyWriter) {
  const size_t i = FindMetaKeyIndex(name);
  return i < std::size(kMetaKeys) && (kMetaKeys[i].writers & writers) != 0;
}

namespace detail {
// Not constexpr on purpose: a CheckedMetaKey naming an undeclared key calls it, and the
// compiler's error then names it.
void OCC_META_key_is_not_declared_in_schema_meta_keys_h();

constexpr bool IsSnakeCaseName(std::string_view name) {
  if (name.empty() || name.front() == '_' || name.back() == '_') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (name.substr(i, 3) == "{n}") {
      // A digit right after the placeholder would be swallowed by it.
      if (i + 3 < name.size() && name[i + 3] >= '0' && name[i + 3] <= '9') return false;
      i += 2;
    } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Every row: a snake_case name declared once, at least one writer (a retired key none other), a
// one-line description without `|`.
constexpr bool EveryRowIsWellFormed() {
  for (const MetaKey& key : kMetaKeys) {
    if (!IsSnakeCaseName(key.name)) return false;
    if ((key.writers & kAnyWriter) == 0 || key.writers != (key.writers & kAnyWriter)) return false;
    if ((key.writers & kRetired) != 0 && key.writers != kRetired) return false;
    if (key.description.empty() || key.description.find_first_of("|\n") != std::string_view::npos) return false;
  }
  return true;
}

constexpr bool EveryNameIsDeclaredOnce() {
  for (const MetaKey& a : kMetaKeys) {
    int same = 0;
    for (const MetaKey& b : kMetaKeys) same += a.name == b.name ? 1 : 0;
    if (same != 1) return false;
  }
  return true;
}
}  // namespace detail

static_assert(detail::EveryRowIsWellFormed(),
              "a kMetaKeys row is malformed: snake_case name (placeholder {n} only), one or more writers "
              "(kRetired alone), a one-line description without '|'");
static_assert(detail::EveryNameIsDeclaredOnce(), "a kMetaKeys name is declared twice");

// A key named in source code, checked against the table when it compiles: a read of a key
// nobody writes, or a write of a key the table does not declare for `kWriters`, does not build
// (the error names detail::OCC_META_key_is_not_declared_in_schema_meta_keys_h).
template <uint16_t kWriters = kAnyWriter>
struct CheckedMetaKey {
  consteval CheckedMetaKey(const char* key) : name(key) {  // NOLINT: implicit from a literal on purpose
    if (!IsDeclared(name, kWriters)) detail::OCC_META_key_is_not_declared_in_schema_meta_keys_h();
  }
  std::string_view name;
};

}  // namespace occ::meta
