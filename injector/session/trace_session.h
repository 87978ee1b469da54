// TraceSession: everything between CUPTI's buffer callbacks and the TraceWriter, with no
// CUPTI calls of its own (the CUPTI glue passes them in as hooks), so that tests can drive it
// with fake record buffers.
//
// Threads and locks:
//  - CUPTI's buffer callbacks (CUPTI worker thread, or any thread calling cuptiActivityFlushAll)
//    call AcquireBuffer / CompleteBuffer. Neither blocks: buffers come from a capped pool of
//    recycled, 8-byte aligned allocations; when the writer falls behind and the pool is
//    exhausted AcquireBuffer returns nullptr (safe from CUPTI API v27, CUDA 12.9) and CUPTI
//    counts the dropped records. The queue is therefore bounded by the pool.
//  - The writer thread owns the TraceWriter (SQLite). It wakes on an eventfd (queue pushes,
//    signals) or every flush period, calls the flush hook (cuptiActivityFlushAll(0)), forces a
//    flush when CUPTI has held a buffer longer than max_record_age_ms (held_buffers.h says
//    why the plain flush is not enough), and commits, so SIGKILL / os._exit lose at most
//    max_record_age_ms + one period of records.
//  - mutex_ guards the queue, pool and phase. It is never held while calling a hook (CUPTI),
//    since CUPTI calls back into CompleteBuffer from inside cuptiActivityFlushAll.
//  - flush_mutex_ serializes every cuptiActivityFlushAll occtrace makes (FlushActivity: the
//    writer's periodic FlushAll(0), the CONTEXT_DESTROY_STARTING forced flush on an app
//    thread, the final forced flush at exit or on a signal). CUPTI's header documents
//    FlushAll as blocking and usable next to CUPTI's own worker-thread flush
//    (cuptiActivityFlushPeriod), but says nothing about client calls from several threads at
//    once, so occtrace never makes two. Lock order: flush_mutex_ -> (CUPTI's internal locks)
//    -> mutex_. CUPTI runs the buffer callbacks synchronously inside FlushAll, on the
//    flushing thread, while flush_mutex_ is held: AcquireBuffer / CompleteBuffer therefore
//    take mutex_ only, never flush_mutex_ (not recursive), and nothing takes flush_mutex_
//    while holding mutex_. The periodic flush only try-locks (a busy flush_mutex_ means
//    another flush is delivering the same buffers). A blocking flush waits at most
//    flush_lock_wait_ms and then flushes anyway (counted, OCC_META unserialized_flushes):
//    the context-destroy flush runs inside a driver callback, and should CUPTI hold a lock
//    there that the flush in progress needs, waiting longer would deadlock the program.
//
// Write errors: the first SQLite failure turns the writer off (active() false), but buffers
// keep flowing (AcquireBuffer, periodic flush) so that the writer counts every record it is
// handed as lost, with the records its failed transaction rolled back. The count goes into the
// exit line (printed even with OCCTRACE_QUIET) and, through a fresh connection if the file
// takes writes again, OCC_META (dropped_records, records_lost_write_error, status).
//
// Termination: Finish() (atexit, or the end of a test) stops periodic flushing, calls the
// final-flush hooks, drains the queue, writes the closing OCC_META rows and closes the file.
// SIGINT/SIGTERM/SIGHUP whose disposition is the default: the handler only marks the signal
// and writes the eventfd; the writer thread flushes, commits and closes, restores the default
// disposition and re-sends the signal. A handler installed before ours (Python's SIGINT) is
// called right away instead, and the program's own exit path (atexit) flushes.
// fork: a child never touches the parent's writer, file or thread (see OnForkChild).
//
// Files, one job each: trace_session.cc (setup: settings, OCC_META start rows, the writer
// thread; shutdown: Finish, the closing rows and exit line), trace_session_buffers.cc (the
// activity buffer pool: CUPTI's buffer callbacks, flushes, the record-age forced flush),
// trace_session_writer_loop.cc (the queue and the writer thread's loop: commit period, items
// into the TraceWriter), trace_session_signals.{h,cc} (signal handlers, re-sent signals, fork).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/common/env_settings.h"
#include "injector/session/held_buffers.h"
#include "injector/light/kernel_windows.h"
#include "injector/light/launch_calls.h"
#include "injector/writer/module_loader.h"
#include "injector/achieved/pm_samples.h"
#include "injector/writer/trace_writer.h"

namespace occ::inj {

// std::chrono::steady_clock in ns: the writer thread's clock for timing windows.
inline int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct SessionOptions {
  std::string path;                      // created by ClaimOutputFile
  int flush_period_ms = 250;             // OCCTRACE_FLUSH_MS
  size_t buffer_bytes = 4 << 20;         // OCCTRACE_BUFFER_MB
  size_t max_buffers = 64;               // pool cap: at most 256 MB in flight by default
  bool quiet = false;                    // OCCTRACE_QUIET: no summary line
  // A process that launched no kernel leaves no file at exit (a torchrun agent, a compile
  // worker: they initialize CUDA and launch nothing). On from the environment unless
  // OCCTRACE_KEEP_EMPTY=1; off here so that sessions made in code keep what they write.
  bool remove_if_empty = false;
  bool handle_signals = true;
  size_t max_queued_module_bytes = 256 << 20;  // cubin copies waiting for the writer
  int flush_lock_wait_ms = 2000;         // FlushActivity: longest wait for another flush
  // OCCTRACE_MAX_RECORD_AGE_MS: longest a buffer may stay with CUPTI before the writer forces a
  // flush (held_buffers.h). A forced flush hands back kernels still running without their end
  // time (stored with duration 0, counted in OCC_META incomplete_kernel_records); 0 = never
  // force (records then wait for CUPTI to complete their buffer, possibly until exit).
  int max_record_age_ms = 500;
  // Where Triton's compile metadata is looked for (triton_cache.h); empty = none.
  std::vector<std::string> triton_cache_roots;
  // OCCTRACE_ACHIEVED=pm: PM-sample images come (SubmitPmImage), wait in the writer for the
  // kernel records of their time (pm_sample_join.h: `pm_join` sets it up), and the writer's
  // counts of their samples go into OCC_META at every commit (pm_samples, pm_samples_idle...).
  bool pm_samples = false;
  PmJoinSettings pm_join;
  // OCCTRACE_DEBUG_FLUSH: one stderr line per writer tick (flush kinds, durations, buffers).
  bool debug_flush = false;
  // OCCTRACE_MODE=light: launches from launch callbacks (launch_calls.h), kernel records only
  // in timing windows (kernel_windows.h: OCCTRACE_LIGHT_PERIOD_MS, OCCTRACE_LIGHT_WINDOW_MS,
  // OCCTRACE_LIGHT_MAX_DUTY_PCT, OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS).
  bool light = false;
  KernelWindowSettings windows;
};

struct SessionHooks {
  // cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0). Called only by
  // FlushActivity, with flush_mutex_ held and mutex_ not held; may call AcquireBuffer /
  // CompleteBuffer synchronously on the same thread.
  std::function<void(bool forced)> flush_activity;
  // Before the final forced flush (the achieved-occupancy profiler's Shutdown()).
  std::function<void()> before_final_flush;
  // Rows for OCC_META gathered at the end (achieved profiler's SessionMeta()).
  std::function<std::vector<std::pair<std::string, std::string>>()> final_meta;
  // Light tracing: switches CUPTI's kernel records on or off (a timing window opens or closes).
  // On the writer thread, with no lock of the session held. Returns the CUPTI timestamp taken
  // just before switching off, just after switching on (0 if none).
  std::function<uint64_t(bool on)> set_kernel_records;
  // Light tracing, on the writer thread after every window update: the launch hook's rescans
  // and callback switching (launch_hook.h). `records_on`: a timing window is open.
  std::function<void(int64_t now_ns, bool records_on)> light_tick;
  // Light tracing with CUPTI detached between windows: on the writer thread, each launch's
  // driver context and stream ids turned into CUPTI's before it is written (id_translation.h).
  std::function<void(LaunchCall* call)> translate_launch_ids;
  // PM sampling: on the writer thread, once, after it evaluated its first PM samples (by then
  // CUPTI has created its evaluation state; pm_collector.h says why that matters at exit).
  std::function<void()> first_pm_image_written;
  // PM sampling: CUPTI's timestamp now (cuptiGetTimestamp), the clock of kernel records and PM
  // samples. Taken just before the writer's flushes, to tell the writer how far kernel records
  // are complete (pm_sample_join.h, "caught up"). Writer thread, no lock held.
  std::function<uint64_t()> cupti_timestamp;
  // PM sampling: on the writer thread, with no lock of the session held, each time what the
  // kernel timeline says about GPU work changed (the collector's PmCollector::NoteWork).
  std::function<void(const PmWorkReport&)> pm_work;
};

class TraceSession {
 public:
  // Opens the writer on options.path and starts the writer thread. nullptr (after one
  // "occtrace:" line) if the file cannot be written.
  static std::unique_ptr<TraceSession> Start(const SessionOptions& options, SessionHooks hooks);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  // CUPTI buffer-request: an 8-byte aligned buffer of *size bytes, or nullptr (pool exhausted
  // or session over: CUPTI then drops and counts the records).
  uint8_t* AcquireBuffer(size_t* size);
  // CUPTI buffer-completed: queues the buffer for the writer. `cupti_dropped` is
  // cuptiActivityGetNumDroppedRecords for that buffer's context/stream.
  void CompleteBuffer(uint8_t* buffer, size_t valid_size, size_t cupti_dropped);

  void SubmitDeviceExtras(DeviceExtras extras);
  void SubmitAchieved(AchievedSample sample);
  // A PM-sampling image (pm_collector.h), evaluated and written on the writer thread.
  void SubmitPmImage(PmImage image);
  // CUPTI_CBID_RESOURCE_MODULE_LOADED: copies the image (the app thread only copies; the
  // writer parses it). Images beyond max_queued_module_bytes waiting at once are skipped and
  // counted (OCC_META cubin_modules_dropped), so a burst of large modules cannot grow memory.
  // `library`: the shared object the image was mapped from (dladdr), empty when unknown.
  // `loader`: the loading thread's stack (module_loader.h), resolved on the writer thread.
  void SubmitModule(uint32_t module_id, const void* image, size_t size, std::string library = {},
                    const LoaderFrames* loader = nullptr);
  void SetMeta(std::string name, std::string value);

  // Light tracing: where launch callbacks append their launches (null in a full trace). Lives
  // as long as the session; appending after Finish is harmless (never read).
  LaunchCallStreams* launch_calls() const { return launch_calls_.get(); }
  // Light tracing: a launch shape not seen before was launched; the writer wakes to open a
  // timing window while it runs. One eventfd write: safe on any thread, never blocks.
  void NotifyNewLaunchShape() {
    if (!InForkedChild()) Wake();
  }

  enum class FlushKind {
    kPeriodic,        // writer thread, FlushAll(0); skipped while another flush runs
    kStale,           // writer thread, forced: a buffer was held past max_record_age_ms
    kContextDestroy,  // CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, forced, any app thread
    kFinal,           // Finish / signal path, forced
    kDetach,          // writer thread, forced: a timing window ended and CUPTI is to detach
  };
  // The only way occtrace calls the flush hook (see "Threads and locks" above). Never call it
  // from a buffer callback or with mutex_ held. False when a periodic flush was skipped (another
  // flush was in progress).
  bool FlushActivity(FlushKind kind);

  // Installs the SIGINT/SIGTERM/SIGHUP handlers for this TraceSession (one per process).
  void InstallSignalHandlers();

  // Final flush, drain, close, summary line. Idempotent; a no-op in a forked child.
  void Finish(const char* reason = "complete");

  // Not finished and the writer healthy (after a write error buffers are still taken, and
  // their records counted as lost).
  bool active() const { return active_.load(std::memory_order_acquire); }
  const std::string& path() const { return options_.path; }
  const SessionOptions& options() const { return options_; }
  // Valid after Finish().
  WriterStats final_stats() const;
  uint64_t dropped_records() const { return dropped_records_.load(); }

  // Called by the pthread_atfork child hook (trace_session_signals.h) when the parent had a
  // live session: marks this process as a forked child in which every session call is a no-op.
  static void OnForkChild() { forked_child_.store(true); }
  // Inline: checked first by every CUPTI callback and buffer callback.
  static bool InForkedChild() { return forked_child_.load(); }

 private:
  struct BufferItem {
    uint8_t* data;
    size_t valid_size;
  };
  struct MetaItem {
    std::string name, value;
  };
  struct ModuleItem {
    uint32_t module_id;
    std::vector<uint8_t> image;
    std::string library;
    LoaderFrames loader;
  };
  using Item = std::variant<BufferItem, DeviceExtras, AchievedSample, MetaItem, ModuleItem, PmImage>;
  enum class Phase { kRunning, kFinalFlush, kDrain, kDone };

  TraceSession(const SessionOptions& options, SessionHooks hooks);

  // The queue and the writer thread (trace_session_writer_loop.cc).
  void Push(Item item);
  // Inline: buffer callbacks and Push (on application threads) wake the writer.
  void Wake() {
    uint64_t one = 1;
    ssize_t ignored = write(wake_fd_, &one, sizeof(one));
    static_cast<void>(ignored);
  }
  void WriterLoop();
  void ProcessItems(std::deque<Item>* items);
  // PM sampling, after each batch of items: the writer judges the images that are due, and the
  // collector hears what changed (hooks_.pm_work). `all`: at the end, every image.
  void JudgePmImages(bool all);
  // Light tracing, writer thread: opens or closes a timing window as the schedule says;
  // returns when it next needs a wake-up (steady-clock ns).
  int64_t UpdateKernelWindows();
  bool OnWriterThread() const { return std::this_thread::get_id() == writer_thread_id_; }

  // The buffer pool (trace_session_buffers.cc).
  void ReleaseBuffer(uint8_t* buffer);
  // The writer's periodic step: plain flush, forced flush when a buffer is stale, then the
  // queue into the writer. Writer thread only.
  void FlushOnWriter();

  // Shutdown (trace_session.cc), on the writer thread: the queue drained after Finish's final
  // flush, or a default-disposition signal to finish the trace with.
  void CloseOnWriter();
  void HandleSignalOnWriter(int signal_number);
  void CloseWriter(const std::string& status);
  // CloseWriter's parts: the closing OCC_META rows (light tracing's in AddLightClosingMeta),
  // and the exit line.
  std::vector<std::pair<std::string, std::string>> ClosingMeta(
      const std::string& status, const std::vector<std::pair<std::string, std::string>>& hook_rows) const;
  void AddLightClosingMeta(std::vector<std::pair<std::string, std::string>>* rows) const;
  void PrintSummary(const WriterStats& stats, bool ok, bool meta_written) const;

  static inline std::atomic<bool> forked_child_{false};  // set in a forked child (OnForkChild)

  SessionOptions options_;
  SessionHooks hooks_;
  bool pm_image_written_ = false;   // writer thread only
  // Heap-held so that a forked child can abandon them (release, never destroy): destroying
  // them there would close the parent's SQLite connection or std::terminate on a thread
  // that does not exist in the child.
  std::unique_ptr<TraceWriter> writer_;  // writer thread only (and Finish after joining it)
  pid_t owner_pid_ = 0;
  int wake_fd_ = -1;

  std::timed_mutex flush_mutex_;  // taken before mutex_, never while holding it
  std::atomic<uint64_t> unserialized_flushes_{0};
  mutable std::mutex mutex_;
  std::condition_variable phase_changed_;
  Phase phase_ = Phase::kRunning;
  bool periodic_flush_stopped_ = false;
  std::deque<Item> queue_;
  std::vector<uint8_t*> free_buffers_;
  size_t allocated_buffers_ = 0;
  HeldBuffers held_buffers_;  // guarded by mutex_

  std::unique_ptr<std::thread> writer_thread_;
  std::thread::id writer_thread_id_;
  std::atomic<bool> active_{false};
  std::atomic<bool> finished_{false};
  std::atomic<uint64_t> dropped_records_{0};
  std::atomic<uint64_t> refused_buffers_{0};
  std::atomic<size_t> queued_module_bytes_{0};
  std::atomic<uint64_t> dropped_modules_{0};
  uint64_t stale_forced_flushes_ = 0;  // writer thread only
  // Light tracing; the schedule and window figures are the writer thread's.
  std::unique_ptr<LaunchCallStreams> launch_calls_;
  std::optional<KernelWindowSchedule> windows_;
  bool kernel_records_on_ = true;  // light tracing enables records at the start (cupti_tracer.cc)
  int64_t windows_start_ns_ = 0;
  uint64_t configs_at_window_open_ = 0;
  uint64_t under_timed_at_window_open_ = 0;
  int64_t records_switch_ns_max_[2] = {0, 0};  // longest call that switched records off / on
  int64_t records_switch_ns_total_[2] = {0, 0};
  WriterStats final_stats_;
  std::string close_status_;
};

}  // namespace occ::inj
