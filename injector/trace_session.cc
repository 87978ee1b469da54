#include "injector/trace_session.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <chrono>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>

#include "injector/errors.h"
#include "injector/job_identity.h"
#include "injector/output_path.h"

#ifndef OCC_VERSION
#define OCC_VERSION "unknown"
#endif

namespace occ::inj {
namespace {

// ---- Signal plumbing (one session per process owns the handlers). ----
// Everything the handler touches is a lock-free atomic or written before installation.
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumHandledSignals = static_cast<int>(std::size(kHandledSignals));
struct sigaction g_previous_actions[kNumHandledSignals];
std::atomic<bool> g_installed[kNumHandledSignals];
std::atomic<int> g_pending_signal{0};   // default-disposition signal to finish with
std::atomic<int> g_commit_request{0};   // a chained signal: commit now
std::atomic<int> g_signal_wake_fd{-1};
std::atomic<pid_t> g_signal_owner_pid{0};
std::atomic<bool> g_forked_child{false};
std::atomic<int> g_live_sessions{0};

int SignalIndex(int signal_number) {
  for (int i = 0; i < kNumHandledSignals; ++i) {
    if (kHandledSignals[i] == signal_number) return i;
  }
  return -1;
}

bool IsFunction(const struct sigaction& action) {
  if ((action.sa_flags & SA_SIGINFO) != 0) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void CallPrevious(const struct sigaction& previous, int signal_number, siginfo_t* info,
                  void* context) {
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(signal_number, info, context);
  } else {
    previous.sa_handler(signal_number);
  }
}

void WakeFromSignal() {
  int fd = g_signal_wake_fd.load();
  if (fd < 0) return;
  uint64_t one = 1;
  ssize_t ignored = write(fd, &one, sizeof(one));
  static_cast<void>(ignored);
}

// Async-signal-safe: atomics, getpid, write, sigaction, raise only.
void OnSignal(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const int index = SignalIndex(signal_number);
  if (index < 0) return;
  const struct sigaction& previous = g_previous_actions[index];
  if (getpid() != g_signal_owner_pid.load()) {
    // A forked child: behave as if occtrace had never installed anything.
    if (IsFunction(previous)) {
      CallPrevious(previous, signal_number, info, context);
    } else {
      sigaction(signal_number, &previous, nullptr);
      raise(signal_number);
    }
    errno = saved_errno;
    return;
  }
  if (IsFunction(previous)) {
    // The program handles this signal itself (Python's SIGINT -> KeyboardInterrupt): make
    // what we have durable now and let the program decide; its exit path flushes the rest.
    g_commit_request.store(1);
    WakeFromSignal();
    CallPrevious(previous, signal_number, info, context);
    errno = saved_errno;
    return;
  }
  int expected = 0;
  if (g_signal_wake_fd.load() < 0 || !g_pending_signal.compare_exchange_strong(expected, signal_number)) {
    // No writer to finish the trace, or a second signal while the first is being handled:
    // terminate now, as the default disposition would.
    sigaction(signal_number, &previous, nullptr);
    raise(signal_number);
    errno = saved_errno;
    return;
  }
  WakeFromSignal();
  errno = saved_errno;
}

void ForkChildHook() { TraceSession::OnForkChild(); }

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

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

void ApplyEnvironment(const EnvLookup& env, SessionOptions* options, std::vector<std::string>* warnings) {
  auto integer = [&](const char* name, long fallback, long min, long max) {
    return IntegerSetting(env, name, fallback, min, max, warnings);
  };
  options->flush_period_ms = static_cast<int>(integer("OCCTRACE_FLUSH_MS", options->flush_period_ms, 10, 60000));
  options->buffer_bytes =
      static_cast<size_t>(integer("OCCTRACE_BUFFER_MB", static_cast<long>(options->buffer_bytes >> 20), 1, 256)) << 20;
  options->max_buffers =
      static_cast<size_t>(integer("OCCTRACE_MAX_BUFFERS", static_cast<long>(options->max_buffers), 2, 65536));
  options->zeroed_buffers = SwitchSetting(env, "OCCTRACE_ZERO_BUFFERS", options->zeroed_buffers, warnings);
  options->cupti_device_buffer_bytes = static_cast<size_t>(integer(
      "OCCTRACE_CUPTI_DEVICE_BUFFER_MB", static_cast<long>(options->cupti_device_buffer_bytes >> 20), 0, 1024)) << 20;
  options->cupti_device_buffers = static_cast<size_t>(
      integer("OCCTRACE_CUPTI_DEVICE_BUFFERS", static_cast<long>(options->cupti_device_buffers), 0, 200));
  options->cupti_flush_period_ms =
      static_cast<int>(integer("OCCTRACE_CUPTI_FLUSH_PERIOD_MS", options->cupti_flush_period_ms, 0, 60000));
  if (std::optional<bool> pinned = OptionalSwitchSetting(env, "OCCTRACE_CUPTI_HOST_PINNED", warnings)) {
    options->cupti_host_pinned = pinned;
  }
  if (std::optional<bool> per_thread = OptionalSwitchSetting(env, "OCCTRACE_CUPTI_PER_THREAD_BUFFERS", warnings)) {
    options->cupti_per_thread_buffers = per_thread;
  }
  options->max_record_age_ms =
      static_cast<int>(integer("OCCTRACE_MAX_RECORD_AGE_MS", options->max_record_age_ms, 0, 3600000));
  options->debug_flush = SwitchSetting(env, "OCCTRACE_DEBUG_FLUSH", options->debug_flush, warnings);
  options->quiet = SwitchSetting(env, "OCCTRACE_QUIET", options->quiet, warnings);
}

void ApplyEnvironment(SessionOptions* options) {
  std::vector<std::string> warnings;
  ApplyEnvironment(ProcessEnvironment(), options, &warnings);
  for (const std::string& warning : warnings) LogLine("%s", warning.c_str());
}

void TraceSession::OnForkChild() {
  if (g_live_sessions.load() > 0) g_forked_child.store(true);
}
bool TraceSession::InForkedChild() { return g_forked_child.load(); }

TraceSession::TraceSession(const SessionOptions& options, SessionHooks hooks)
    : options_(options), hooks_(std::move(hooks)), writer_(std::make_unique<TraceWriter>()),
      owner_pid_(getpid()) {
  g_live_sessions.fetch_add(1);
}

std::unique_ptr<TraceSession> TraceSession::Start(const SessionOptions& options, SessionHooks hooks) {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, ForkChildHook); });

  std::unique_ptr<TraceSession> session(new TraceSession(options, std::move(hooks)));
  if (!session->writer_->Open(options.path)) return nullptr;
  session->writer_->SetTritonCacheRoots(options.triton_cache_roots);
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
  w.SetMeta("setting_zeroed_buffers", options.zeroed_buffers ? "1" : "0");
  w.SetMeta("setting_cupti_device_buffer_bytes", std::to_string(options.cupti_device_buffer_bytes));
  w.SetMeta("setting_cupti_device_buffers", std::to_string(options.cupti_device_buffers));
  w.SetMeta("setting_max_buffers", std::to_string(options.max_buffers));
  w.SetMeta("setting_max_record_age_ms", std::to_string(options.max_record_age_ms));
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

TraceSession::~TraceSession() {
  if (InForkedChild() || getpid() != owner_pid_) {
    // Never touch the parent's file, connection, thread or buffers (leaked on purpose).
    static_cast<void>(writer_.release());
    static_cast<void>(writer_thread_.release());
    free_buffers_.clear();
    return;
  }
  Finish("complete");
  g_live_sessions.fetch_sub(1);
  if (g_signal_wake_fd.load() == wake_fd_) g_signal_wake_fd.store(-1);
  for (int i = 0; i < kNumHandledSignals; ++i) {
    if (g_installed[i].exchange(false)) sigaction(kHandledSignals[i], &g_previous_actions[i], nullptr);
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  for (uint8_t* buffer : free_buffers_) std::free(buffer);
}

void TraceSession::InstallSignalHandlers() {
  if (!options_.handle_signals) return;
  g_signal_owner_pid.store(owner_pid_);
  g_signal_wake_fd.store(wake_fd_);
  for (int i = 0; i < kNumHandledSignals; ++i) {
    struct sigaction current {};
    if (sigaction(kHandledSignals[i], nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN && (current.sa_flags & SA_SIGINFO) == 0) continue;  // keep ignoring
    g_previous_actions[i] = current;
    struct sigaction ours {};
    ours.sa_sigaction = OnSignal;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    if (sigaction(kHandledSignals[i], &ours, nullptr) == 0) g_installed[i].store(true);
  }
}

uint8_t* TraceSession::AcquireBuffer(size_t* size) {
  *size = 0;
  if (InForkedChild()) return nullptr;
  std::lock_guard lock(mutex_);
  // Also after a write error (active_ false): the writer then counts every record it is handed
  // as lost. A refused buffer would make CUPTI drop them instead, and CUPTI's count reaches us
  // only with a later completed buffer of the same context and stream, i.e. maybe never.
  if (phase_ == Phase::kDrain || phase_ == Phase::kDone) return nullptr;
  uint8_t* buffer = nullptr;
  if (!free_buffers_.empty()) {
    buffer = free_buffers_.back();
    free_buffers_.pop_back();
  } else if (allocated_buffers_ < options_.max_buffers) {
    // CUPTI requires 8-byte alignment (ACTIVITY_RECORD_ALIGNMENT); calloc gives 16, and for
    // buffers this large fresh zero pages rather than a memset here, on CUPTI's thread.
    buffer = static_cast<uint8_t*>(options_.zeroed_buffers
                                       ? std::calloc(1, options_.buffer_bytes)
                                       : std::aligned_alloc(8, options_.buffer_bytes));
    if (buffer != nullptr) ++allocated_buffers_;
  }
  if (buffer == nullptr) {
    // Writer behind (or out of memory): CUPTI drops the records and counts them.
    refused_buffers_.fetch_add(1);
    return nullptr;
  }
  held_buffers_.Acquired(buffer, MonotonicNs());
  *size = options_.buffer_bytes;
  return buffer;
}

void TraceSession::ReleaseBuffer(uint8_t* buffer) {
  // Before it is back in the pool (SessionOptions::zeroed_buffers); normally on the writer.
  if (options_.zeroed_buffers) std::memset(buffer, 0, options_.buffer_bytes);
  std::lock_guard lock(mutex_);
  free_buffers_.push_back(buffer);
}

void TraceSession::CompleteBuffer(uint8_t* buffer, size_t valid_size, size_t cupti_dropped) {
  if (InForkedChild() || buffer == nullptr) return;  // a child never frees or queues (parent's heap state)
  if (cupti_dropped > 0) dropped_records_.fetch_add(cupti_dropped);
  {
    std::lock_guard lock(mutex_);
    held_buffers_.Completed(buffer);
    if (phase_ != Phase::kDrain && phase_ != Phase::kDone) {
      queue_.push_back(BufferItem{buffer, valid_size});
      buffer = nullptr;
    }
  }
  if (buffer != nullptr) {
    // Session over: the records are lost; count them.
    dropped_records_.fetch_add(ForEachActivity(buffer, valid_size, [](const CUpti_Activity&) {}));
    ReleaseBuffer(buffer);
    return;
  }
  // From inside a flush on the writer thread: it drains the queue right after the flush.
  if (!OnWriterThread()) Wake();
}

void TraceSession::Push(Item item) {
  if (InForkedChild()) return;
  {
    std::lock_guard lock(mutex_);
    if (phase_ == Phase::kDone) return;
    queue_.push_back(std::move(item));
  }
  if (!OnWriterThread()) Wake();
}

void TraceSession::SubmitDeviceExtras(DeviceExtras extras) { Push(std::move(extras)); }
void TraceSession::SubmitAchieved(AchievedSample sample) { Push(std::move(sample)); }
void TraceSession::SubmitModule(uint32_t module_id, const void* image, size_t size, std::string library) {
  if (InForkedChild() || image == nullptr || size == 0 || !active()) return;
  size_t queued = queued_module_bytes_.load();
  do {
    if (size > options_.max_queued_module_bytes - std::min(queued, options_.max_queued_module_bytes)) {
      dropped_modules_.fetch_add(1);
      return;
    }
  } while (!queued_module_bytes_.compare_exchange_weak(queued, queued + size));
  const auto* bytes = static_cast<const uint8_t*>(image);
  Push(ModuleItem{module_id, std::vector<uint8_t>(bytes, bytes + size), std::move(library)});
}

void TraceSession::SetMeta(std::string name, std::string value) {
  Push(MetaItem{std::move(name), std::move(value)});
}

void TraceSession::FlushActivity(FlushKind kind) {
  if (InForkedChild() || getpid() != owner_pid_ || !hooks_.flush_activity) return;
  const bool forced = kind != FlushKind::kPeriodic;
  std::unique_lock lock(flush_mutex_, std::defer_lock);
  if (kind == FlushKind::kPeriodic || kind == FlushKind::kStale) {
    if (!lock.try_lock()) return;
  } else if (!lock.try_lock_for(std::chrono::milliseconds(options_.flush_lock_wait_ms))) {
    // The flush in progress did not end: flush anyway rather than risk a deadlock (see the
    // header). Not expected; counted and said once.
    if (unserialized_flushes_.fetch_add(1) == 0) {
      LogLine("a CUPTI activity flush waited %d ms for another one; flushing concurrently",
              options_.flush_lock_wait_ms);
    }
  }
  hooks_.flush_activity(forced);
}

void TraceSession::Wake() {
  uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  static_cast<void>(ignored);
}

void TraceSession::ProcessItems(std::deque<Item>* items) {
  for (Item& item : *items) {
    if (auto* buffer = std::get_if<BufferItem>(&item)) {
      writer_->AddBuffer(buffer->data, buffer->valid_size);
      ReleaseBuffer(buffer->data);
    } else if (auto* extras = std::get_if<DeviceExtras>(&item)) {
      writer_->AddDeviceExtras(*extras);
    } else if (auto* sample = std::get_if<AchievedSample>(&item)) {
      writer_->AddAchieved(*sample);
    } else if (auto* meta = std::get_if<MetaItem>(&item)) {
      writer_->SetMeta(meta->name, meta->value);
    } else if (auto* module = std::get_if<ModuleItem>(&item)) {
      writer_->AddModule(module->module_id, module->image, module->library);
      queued_module_bytes_.fetch_sub(module->image.size());
      module->image = std::vector<uint8_t>();
    }
  }
  items->clear();
  if (writer_->failed()) active_.store(false);
  const uint64_t configs = writer_->stats().configs;
  if (configs != configs_announced_) {
    configs_announced_ = configs;
    if (hooks_.new_kernel_configurations) hooks_.new_kernel_configurations();
  }
}

void TraceSession::CloseWriter(const std::string& status) {
  std::vector<std::pair<std::string, std::string>> hook_rows;
  if (hooks_.final_meta) hook_rows = hooks_.final_meta();
  // Built from the writer's stats at the time of the call: Close() itself may fail and
  // change them (its COMMIT rolls back what it could not write).
  auto closing_meta = [&] {
    std::vector<std::pair<std::string, std::string>> rows = hook_rows;
    const WriterStats& stats = writer_->stats();
    rows.emplace_back("launch_count", std::to_string(stats.launches));
    rows.emplace_back("kernel_count", std::to_string(stats.kernels));
    rows.emplace_back("config_count", std::to_string(stats.configs));
    rows.emplace_back("achieved_count", std::to_string(stats.achieved));
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
    // Kinds occtrace never enables arriving in its buffers: another client (Kineto since
    // 2026-08 enables activities without subscribing) changed CUPTI's process-wide activity
    // state, and may also disable kernel records at its stop.
    rows.emplace_back("foreign_activity_records", std::to_string(stats.other_records));
    rows.emplace_back("end_time_ns", std::to_string(RealtimeNs()));
    rows.emplace_back("status", !writer_->failed()      ? status
                                : status == "complete" ? std::string("failed: write error")
                                                       : "failed: write error; " + status);
    return rows;
  };
  bool ok = false;
  bool meta_written = false;
  if (!writer_->failed()) {
    for (const auto& [name, value] : closing_meta()) writer_->SetMeta(name, value);
    ok = writer_->Close();
    meta_written = ok;
  }
  if (!ok) meta_written = writer_->WriteMetaAfterFailure(closing_meta());
  const WriterStats& stats = writer_->stats();
  if (stats.other_records > 0) {
    LogLine("%llu activity records of kinds occtrace does not enable arrived: another CUPTI client "
            "(e.g. torch.profiler) changed the process-wide activity settings; the trace may miss kernels",
            static_cast<unsigned long long>(stats.other_records));
  }
  final_stats_ = stats;
  active_.store(false);
  // Lost data is reported even under OCCTRACE_QUIET: the line is then an error, not a summary.
  if (!options_.quiet || !ok) {
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
    LogLine("%llu kernel launches of %llu kernels%s -> %s%s",
            static_cast<unsigned long long>(stats.launches),
            static_cast<unsigned long long>(stats.kernels), dropped_text, options_.path.c_str(), outcome);
  }
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
  const int index = SignalIndex(signal_number);
  if (index >= 0) {
    g_installed[index].store(false);
    sigaction(signal_number, &g_previous_actions[index], nullptr);
  }
  // Process-directed: delivered to a program thread (this one blocks all signals).
  kill(getpid(), signal_number);
}

void TraceSession::WriterLoop() {
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::milliseconds(options_.flush_period_ms);
  auto next_commit = Clock::now() + period;
  std::deque<Item> items;
  while (true) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_commit - Clock::now());
    pollfd fd{wake_fd_, POLLIN, 0};
    poll(&fd, 1, static_cast<int>(std::max<int64_t>(0, wait.count())));
    uint64_t counter = 0;
    ssize_t ignored = read(wake_fd_, &counter, sizeof(counter));
    static_cast<void>(ignored);

    const int signal_number = g_pending_signal.load();
    if (signal_number != 0 && g_signal_wake_fd.load() == wake_fd_ && !finished_.exchange(true)) {
      HandleSignalOnWriter(signal_number);
      return;
    }
    Phase phase;
    {
      std::lock_guard lock(mutex_);
      items.swap(queue_);
      phase = phase_;
      if (phase != Phase::kRunning && !periodic_flush_stopped_) {
        periodic_flush_stopped_ = true;
        phase_changed_.notify_all();
      }
    }
    ProcessItems(&items);
    if (phase == Phase::kDrain) {
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
      const int late_signal = g_pending_signal.load();
      const int index = SignalIndex(late_signal);
      if (late_signal != 0 && index >= 0 && g_signal_wake_fd.load() == wake_fd_) {
        g_installed[index].store(false);
        sigaction(late_signal, &g_previous_actions[index], nullptr);
        kill(getpid(), late_signal);
      }
      return;
    }
    const bool commit_requested = g_commit_request.exchange(0) != 0;
    if (Clock::now() >= next_commit || commit_requested) {
      // Also after a write error: buffers must keep coming back to be counted and recycled.
      if (phase == Phase::kRunning && hooks_.flush_activity) FlushOnWriter();
      writer_->SetMeta("launch_count", std::to_string(writer_->stats().launches));
      writer_->Commit();
      if (writer_->failed()) active_.store(false);
      next_commit = Clock::now() + period;
    }
  }
}

void TraceSession::FlushOnWriter() {
  std::deque<Item> items;
  auto drain = [&] {
    {
      std::lock_guard lock(mutex_);
      items.swap(queue_);
    }
    ProcessItems(&items);
  };
  const int64_t began = MonotonicNs();
  FlushActivity(FlushKind::kPeriodic);
  drain();
  const int64_t plain_done = MonotonicNs();
  int64_t oldest_age_ns = 0;
  size_t held = 0;
  {
    std::lock_guard lock(mutex_);
    oldest_age_ns = held_buffers_.OldestAgeNs(plain_done);
    held = held_buffers_.count();
  }
  const bool stale = options_.max_record_age_ms > 0 &&
                     oldest_age_ns >= int64_t{options_.max_record_age_ms} * 1'000'000;
  if (stale) {
    FlushActivity(FlushKind::kStale);
    drain();
    ++stale_forced_flushes_;
    writer_->SetMeta("stale_forced_flushes", std::to_string(stale_forced_flushes_));
  }
  if (options_.debug_flush) {
    const int64_t done = MonotonicNs();
    LogLine("flush t=%.3f plain=%.2fms held=%zu oldest=%.0fms forced=%s%s launches=%" PRIu64,
            static_cast<double>(began) / 1e9, static_cast<double>(plain_done - began) / 1e6, held,
            static_cast<double>(oldest_age_ns) / 1e6, stale ? "yes " : "no",
            stale ? (std::to_string(static_cast<double>(done - plain_done) / 1e6) + "ms").c_str() : "",
            writer_->stats().launches);
  }
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

}  // namespace occ::inj
