// TraceSession's setup and shutdown (trace_session.h).
//
// Setup (the OCCTRACE_* settings come parsed, settings.h): Start opens the TraceWriter, writes the
// first OCC_META rows (version, command line, host, settings), creates the eventfd and starts
// the writer thread (trace_session_writer_loop.cc) with every signal blocked.
// Shutdown: Finish (atexit, or the end of a test) stops the periodic flush, runs the final
// flush hooks, lets the writer thread drain the queue and close (CloseOnWriter); a
// default-disposition signal takes the same steps on the writer thread (HandleSignalOnWriter)
// and is then sent again (trace_session_signals.h). CloseWriter writes the closing OCC_META
// rows and the exit line, which reports lost data even under OCCTRACE_QUIET.
#include "injector/session/trace_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "injector/common/errors.h"
#include "injector/session/job_identity.h"
#include "injector/session/output_path.h"
#include "injector/session/trace_session_signals.h"

#ifndef OCC_VERSION
#define OCC_VERSION "unknown"
#endif

namespace occ::inj {
namespace {

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string UtcTimestamp() {
  time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// /proc/self/cmdline with arguments separated by spaces (quoted when they contain one).
std::string CommandLine() {
  std::string raw;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char chunk[4096];
    ssize_t n = 0;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0) raw.append(chunk, static_cast<size_t>(n));
    close(fd);
  }
  std::string out;
  size_t begin = 0;
  while (begin < raw.size()) {
    size_t end = raw.find('\0', begin);
    if (end == std::string::npos) end = raw.size();
    std::string arg = raw.substr(begin, end - begin);
    if (!out.empty()) out.push_back(' ');
    out += arg.find_first_of(" \t\"'") == std::string::npos ? arg : "'" + arg + "'";
    begin = end + 1;
  }
  return out;
}

}  // namespace

TraceSession::TraceSession(const SessionOptions& options, SessionHooks hooks)
    : options_(options), hooks_(std::move(hooks)), writer_(std::make_unique<TraceWriter>()),
      owner_pid_(getpid()) {
  CountLiveSession(1);
}

std::unique_ptr<TraceSession> TraceSession::Start(const SessionOptions& options, SessionHooks hooks) {
  RegisterForkHandler(&TraceSession::OnForkChild);

  std::unique_ptr<TraceSession> session(new TraceSession(options, std::move(hooks)));
  if (!session->writer_->Open(options.path)) return nullptr;
  session->writer_->SetTritonCacheRoots(options.triton_cache_roots);
  if (options.pm_samples) session->writer_->StartPmJoin(options.pm_join);
  const PatternContext process = CurrentProcessContext();
  TraceWriter& w = *session->writer_;
  w.SetMeta("occtrace_version", OCC_VERSION);
  w.SetMeta("command_line", CommandLine());
  w.SetMeta("pid", std::to_string(process.pid));
  w.SetMeta("host", process.host);
  if (const JobIdentity job = JobIdentityFromEnvironment(process.getenv); job.rank >= 0) {
    w.SetMeta("rank", std::to_string(job.rank));
    w.SetMeta("rank_source", job.source);
    if (job.local_rank >= 0) w.SetMeta("local_rank", std::to_string(job.local_rank));
    if (job.world_size >= 0) w.SetMeta("world_size", std::to_string(job.world_size));
    if (job.local_world_size >= 0) w.SetMeta("local_world_size", std::to_string(job.local_world_size));
  }
  w.SetMeta("start_time_utc", UtcTimestamp());
  w.SetMeta("start_time_ns", std::to_string(RealtimeNs()));
  w.SetMeta("setting_flush_period_ms", std::to_string(options.flush_period_ms));
  w.SetMeta("setting_buffer_bytes", std::to_string(options.buffer_bytes));
  w.SetMeta("setting_max_buffers", std::to_string(options.max_buffers));
  w.SetMeta("setting_max_record_age_ms", std::to_string(options.max_record_age_ms));
  w.SetMeta("trace_mode", options.light ? "light" : "full");
  if (options.light) {
    w.SetLightMode();
    w.SetMeta("setting_light_period_ms", std::to_string(options.windows.period_ns / 1'000'000));
    w.SetMeta("setting_light_window_ms", std::to_string(options.windows.window_ns / 1'000'000));
    w.SetMeta("setting_light_max_duty_pct", std::to_string(static_cast<int>(options.windows.max_duty * 100 + 0.5)));
    w.SetMeta("setting_light_new_config_windows", options.windows.windows_for_new_configs ? "1" : "0");
    session->launch_calls_ = std::make_unique<LaunchCallStreams>();
  }
  w.SetMeta("status", "running");
  w.SetMeta("launch_count", "0");
  if (!w.Commit()) return nullptr;

  session->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (session->wake_fd_ < 0) {
    LogLine("eventfd failed: %s; tracing off", std::strerror(errno));
    return nullptr;
  }
  // The writer thread takes no signals: handlers run on the program's threads, and a
  // re-raised signal is delivered to a thread that can act on it.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  session->active_.store(true);
  session->writer_thread_ = std::make_unique<std::thread>([s = session.get()] { s->WriterLoop(); });
  session->writer_thread_id_ = session->writer_thread_->get_id();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return session;
}

void TraceSession::InstallSignalHandlers() {
  if (options_.handle_signals) InstallTerminationHandlers(owner_pid_, wake_fd_);
}

TraceSession::~TraceSession() {
  if (InForkedChild() || getpid() != owner_pid_) {
    // Never touch the parent's file, connection, thread or buffers (leaked on purpose).
    static_cast<void>(writer_.release());
    static_cast<void>(writer_thread_.release());
    free_buffers_.clear();
    return;
  }
  Finish("complete");
  CountLiveSession(-1);
  RestoreSignalHandlers(wake_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  for (uint8_t* buffer : free_buffers_) std::free(buffer);
}

void TraceSession::Finish(const char* reason) {
  if (InForkedChild() || getpid() != owner_pid_) return;
  if (!writer_thread_ && !finished_.load()) {
    // Start() failed before the writer thread existed: nothing was traced.
    finished_.store(true);
    writer_->Close();
    return;
  }
  if (finished_.exchange(true)) {
    // Another path (a signal handled on the writer thread) is closing the file: give it a
    // moment so that exit does not tear the process down mid-write.
    std::unique_lock lock(mutex_);
    phase_changed_.wait_for(lock, std::chrono::seconds(10), [this] { return phase_ == Phase::kDone; });
  } else {
    {
      std::unique_lock lock(mutex_);
      phase_ = Phase::kFinalFlush;
      close_status_ = reason;
    }
    Wake();
    {
      // Wait until the writer is out of any periodic cuptiActivityFlushAll(0), so the forced
      // flush below cannot race it for buffers.
      std::unique_lock lock(mutex_);
      phase_changed_.wait_for(lock, std::chrono::seconds(10), [this] { return periodic_flush_stopped_; });
    }
    if (hooks_.before_final_flush) hooks_.before_final_flush();
    FlushActivity(FlushKind::kFinal);
    {
      std::lock_guard lock(mutex_);
      phase_ = Phase::kDrain;
    }
    Wake();
  }
  if (writer_thread_ && writer_thread_->joinable() && !OnWriterThread()) writer_thread_->join();
}

WriterStats TraceSession::final_stats() const {
  std::lock_guard lock(mutex_);
  return final_stats_;
}

void TraceSession::CloseOnWriter() {
  std::deque<Item> items;
  {
    std::lock_guard lock(mutex_);
    items.swap(queue_);
  }
  ProcessItems(&items);
  CloseWriter(close_status_);
  {
    std::lock_guard lock(mutex_);
    phase_ = Phase::kDone;
  }
  phase_changed_.notify_all();
  // A default-disposition signal that arrived while the program was already exiting:
  // deliver it now that the file is closed.
  ResendLateSignal(wake_fd_);
}

void TraceSession::HandleSignalOnWriter(int signal_number) {
  {
    std::lock_guard lock(mutex_);
    phase_ = Phase::kFinalFlush;
  }
  if (hooks_.before_final_flush) hooks_.before_final_flush();
  FlushActivity(FlushKind::kFinal);
  std::deque<Item> items;
  {
    std::lock_guard lock(mutex_);
    items.swap(queue_);
    phase_ = Phase::kDrain;
  }
  ProcessItems(&items);
  CloseWriter(std::string("terminated by SIG") + sigabbrev_np(signal_number));
  {
    std::lock_guard lock(mutex_);
    phase_ = Phase::kDone;
  }
  phase_changed_.notify_all();
  ResendSignal(signal_number);
}

void TraceSession::AddLightClosingMeta(std::vector<std::pair<std::string, std::string>>* out) const {
  auto& rows = *out;
  const WriterStats& stats = writer_->stats();
  rows.emplace_back("launch_count", std::to_string(stats.launch_calls));
  rows.emplace_back("timed_launch_count", std::to_string(stats.timed_launches));
  rows.emplace_back("light_graph_launches", std::to_string(stats.graph_launches));
  rows.emplace_back("light_unknown_graph_launches", std::to_string(stats.unknown_graph_launches));
  rows.emplace_back("light_timed_unmatched", std::to_string(stats.timed_unmatched));
  rows.emplace_back("light_timed_dropped_at_switch", std::to_string(stats.timed_dropped_at_switch));
  rows.emplace_back("light_launches_dropped", std::to_string(launch_calls_->dropped()));
  const int64_t now = SteadyNs();
  rows.emplace_back("light_windows", std::to_string(windows_ ? windows_->windows_opened() : 0));
  rows.emplace_back("light_windows_for_new_configs", std::to_string(windows_ ? windows_->windows_for_new_configs() : 0));
  rows.emplace_back("light_windows_for_under_timed", std::to_string(windows_ ? windows_->windows_for_under_timed() : 0));
  rows.emplace_back("light_records_on_ms", std::to_string(windows_ ? windows_->open_ns_total(now) / 1'000'000 : 0));
  rows.emplace_back("light_records_on_pct", std::to_string(windows_ && windows_->started() && now > windows_start_ns_
      ? 100.0 * static_cast<double>(windows_->open_ns_total(now)) / static_cast<double>(now - windows_start_ns_) : 0.0));
  rows.emplace_back("light_records_switch_on_ms_max", std::to_string(static_cast<double>(records_switch_ns_max_[1]) / 1e6));
  rows.emplace_back("light_records_switch_off_ms_max", std::to_string(static_cast<double>(records_switch_ns_max_[0]) / 1e6));
  rows.emplace_back("light_records_switch_on_ms_total", std::to_string(static_cast<double>(records_switch_ns_total_[1]) / 1e6));
  rows.emplace_back("light_records_switch_off_ms_total", std::to_string(static_cast<double>(records_switch_ns_total_[0]) / 1e6));
}

// Built from the writer's stats at the time of the call: Close() itself may fail and change
// them (its COMMIT rolls back what it could not write).
std::vector<std::pair<std::string, std::string>> TraceSession::ClosingMeta(
    const std::string& status, const std::vector<std::pair<std::string, std::string>>& hook_rows) const {
  std::vector<std::pair<std::string, std::string>> rows = hook_rows;
  const WriterStats& stats = writer_->stats();
  if (!launch_calls_) rows.emplace_back("launch_count", std::to_string(stats.launches));
  rows.emplace_back("kernel_count", std::to_string(stats.kernels));
  rows.emplace_back("config_count", std::to_string(stats.configs));
  rows.emplace_back("achieved_count", std::to_string(stats.achieved));
  if (options_.pm_samples) {
    for (auto& row : writer_->PmMeta()) rows.push_back(std::move(row));
  }
  rows.emplace_back("dropped_records", std::to_string(dropped_records_.load() + stats.records_lost));
  rows.emplace_back("records_lost_write_error", std::to_string(stats.records_lost));
  rows.emplace_back("incomplete_kernel_records", std::to_string(stats.incomplete_kernels));
  rows.emplace_back("stale_forced_flushes", std::to_string(stale_forced_flushes_));
  rows.emplace_back("achieved_lost_write_error", std::to_string(stats.achieved_lost));
  rows.emplace_back("refused_buffer_requests", std::to_string(refused_buffers_.load()));
  rows.emplace_back("unserialized_flushes", std::to_string(unserialized_flushes_.load()));
  rows.emplace_back("cubin_modules_parsed", std::to_string(stats.modules_parsed));
  rows.emplace_back("cubin_modules_skipped", std::to_string(stats.modules_skipped));
  rows.emplace_back("cubin_modules_dropped", std::to_string(dropped_modules_.load()));
  rows.emplace_back("function_count", std::to_string(stats.functions));
  rows.emplace_back("module_loader_captures", std::to_string(stats.loader_captures));
  rows.emplace_back("module_loaders_found", std::to_string(stats.loaders_found));
  rows.emplace_back("module_loader_capture_ns_total", std::to_string(stats.loader_capture_ns_total));
  rows.emplace_back("module_loader_capture_ns_max", std::to_string(stats.loader_capture_ns_max));
  if (launch_calls_) AddLightClosingMeta(&rows);
  // Kinds occtrace never enables arriving in its buffers: another client (Kineto since
  // 2026-08 enables activities without subscribing) changed CUPTI's process-wide activity
  // state, and may also disable kernel records at its stop.
  rows.emplace_back("foreign_activity_records", std::to_string(stats.other_records));
  rows.emplace_back("end_time_ns", std::to_string(RealtimeNs()));
  rows.emplace_back("status", !writer_->failed()      ? status
                              : status == "complete" ? std::string("failed: write error")
                                                     : "failed: write error; " + status);
  return rows;
}

// The exit line: launches, kernels, the file, and whatever was lost.
void TraceSession::PrintSummary(const WriterStats& stats, bool ok, bool meta_written) const {
  const uint64_t dropped = dropped_records_.load() + stats.records_lost;
  char dropped_text[128] = "";
  if (stats.records_lost > 0 || stats.achieved_lost > 0) {
    std::snprintf(dropped_text, sizeof(dropped_text),
                  ", %llu records dropped (%llu records and %llu achieved samples lost to the write error)",
                  static_cast<unsigned long long>(dropped),
                  static_cast<unsigned long long>(stats.records_lost),
                  static_cast<unsigned long long>(stats.achieved_lost));
  } else if (dropped > 0) {
    std::snprintf(dropped_text, sizeof(dropped_text), ", %llu records dropped",
                  static_cast<unsigned long long>(dropped));
  }
  const char* outcome = ok             ? ""
                        : meta_written ? " (incomplete: write error; counts in OCC_META)"
                                       : " (incomplete: write error; OCC_META could not be updated)";
  // Light traces count their launch calls; full traces their kernel records.
  const uint64_t launches = launch_calls_ ? stats.launch_calls : stats.launches;
  LogLine("%llu kernel launches of %llu kernels%s -> %s%s",
          static_cast<unsigned long long>(launches),
          static_cast<unsigned long long>(stats.kernels), dropped_text, options_.path.c_str(), outcome);
}

void TraceSession::CloseWriter(const std::string& status) {
  if (options_.pm_samples) {
    // After the final forced flush every kernel record is in (not so in light tracing, whose
    // records come only in windows): the last images are judged with all of them.
    if (!options_.light) writer_->PmRecordsThrough(UINT64_MAX);
    JudgePmImages(true);
  }
  std::vector<std::pair<std::string, std::string>> hook_rows;
  if (hooks_.final_meta) hook_rows = hooks_.final_meta();
  bool ok = false;
  bool meta_written = false;
  if (!writer_->failed()) {
    for (const auto& [name, value] : ClosingMeta(status, hook_rows)) writer_->SetMeta(name, value);
    ok = writer_->Close();
    meta_written = ok;
  }
  if (!ok) meta_written = writer_->WriteMetaAfterFailure(ClosingMeta(status, hook_rows));
  const WriterStats& stats = writer_->stats();
  if (stats.other_records > 0) {
    LogLine("%llu activity records of kinds occtrace does not enable arrived: another CUPTI client "
            "(e.g. torch.profiler) changed the process-wide activity settings; the trace may miss kernels",
            static_cast<unsigned long long>(stats.other_records));
  }
  final_stats_ = stats;
  active_.store(false);
  if (ok && options_.remove_if_empty && stats.launches == 0 && stats.launch_calls == 0 && stats.achieved == 0) {
    // Nothing a report could use: no file, so that a job's helper processes do not leave one
    // each beside its ranks' traces (docs/tracing.md, "Multi-GPU runs").
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((options_.path + suffix).c_str());
    if (!options_.quiet) LogLine("no kernel launches: %s removed (OCCTRACE_KEEP_EMPTY=1 keeps it)", options_.path.c_str());
    return;
  }
  // Lost data is reported even under OCCTRACE_QUIET: the line is then an error, not a summary.
  if (!options_.quiet || !ok) PrintSummary(stats, ok, meta_written);
}

}  // namespace occ::inj
