// TraceSession's writer side (trace_session.h): the queue that application threads and
// CUPTI's buffer callbacks fill, and the writer thread that empties it into the TraceWriter.
//
// Takes: completed buffers (trace_session_buffers.cc), device facts, achieved samples, cubin
// images and OCC_META rows (Submit*, SetMeta: a copy and a queue push on the calling thread);
// wake-ups on the eventfd (Wake) from those pushes and from signals
// (trace_session_signals.h). Gives: every item to the TraceWriter on the writer thread, which
// owns it: parsing and SQLite happen only here. Every flush period (flush_period_ms) the loop
// flushes CUPTI (FlushOnWriter) and commits, so a SIGKILL loses at most max_record_age_ms + one
// period of records; a commit requested by a signal comes at once. Once Finish or a signal ends
// the session, the loop hands over to the shutdown code (trace_session.cc) and returns.
#include "injector/session/trace_session.h"

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "injector/session/trace_session_signals.h"

namespace occ::inj {
namespace {

// Launches of under-timed configurations (TraceWriter's count) since the last window that ask
// for another: enough that a window is likely to catch more of them (one replay of a graph of
// a few dozen kernels), few enough that a configuration launched once a second still gets its
// window within a minute. Rationed with the new-configuration windows (kernel_windows.h).
constexpr uint64_t kUnderTimedLaunchesPerWindow = 32;

}  // namespace

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
void TraceSession::SubmitPmImage(PmImage image) { Push(std::move(image)); }
void TraceSession::SubmitModule(uint32_t module_id, const void* image, size_t size, std::string library,
                                const LoaderFrames* loader) {
  if (InForkedChild() || image == nullptr || size == 0 || !active()) return;
  size_t queued = queued_module_bytes_.load();
  do {
    if (size > options_.max_queued_module_bytes - std::min(queued, options_.max_queued_module_bytes)) {
      dropped_modules_.fetch_add(1);
      return;
    }
  } while (!queued_module_bytes_.compare_exchange_weak(queued, queued + size));
  const auto* bytes = static_cast<const uint8_t*>(image);
  Push(ModuleItem{module_id, std::vector<uint8_t>(bytes, bytes + size), std::move(library),
                  loader != nullptr ? *loader : LoaderFrames{}});
}

void TraceSession::SetMeta(std::string name, std::string value) {
  Push(MetaItem{std::move(name), std::move(value)});
}

void TraceSession::ProcessItems(std::deque<Item>* items) {
  // Launch calls first: a kernel record in `items` belongs to a launch whose call was appended
  // before the kernel ran, hence before its buffer was queued (launch_calls.h).
  if (launch_calls_) {
    if (hooks_.translate_launch_ids) {
      launch_calls_->Drain([this](const LaunchCall& call) {
        LaunchCall translated = call;
        hooks_.translate_launch_ids(&translated);
        writer_->AddLaunchCall(translated);
      });
    } else {
      launch_calls_->Drain([this](const LaunchCall& call) { writer_->AddLaunchCall(call); });
    }
  }
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
    } else if (auto* image = std::get_if<PmImage>(&item)) {
      writer_->AddPmImage(std::move(*image), SteadyNs());
    } else if (auto* module = std::get_if<ModuleItem>(&item)) {
      writer_->AddModule(module->module_id, module->image, module->library, ResolveLoader(module->loader),
                         module->loader.count > 0 ? module->loader.capture_ns : -1);
      queued_module_bytes_.fetch_sub(module->image.size());
      module->image = std::vector<uint8_t>();
    }
  }
  items->clear();
  if (options_.pm_samples) JudgePmImages(false);
  if (writer_->failed()) active_.store(false);
}

void TraceSession::JudgePmImages(bool all) {
  writer_->JudgePmImages(all, SteadyNs());
  if (!pm_image_written_ && writer_->stats().pm_samples_evaluated > 0) {
    pm_image_written_ = true;
    if (hooks_.first_pm_image_written) hooks_.first_pm_image_written();
  }
  PmWorkReport report;
  if (writer_->PmReport(&report) && hooks_.pm_work) hooks_.pm_work(report);
}

int64_t TraceSession::UpdateKernelWindows() {
  const int64_t now = SteadyNs();
  if (!windows_) windows_.emplace(options_.windows);
  const WriterStats& stats = writer_->stats();
  const uint64_t windows_before = windows_->windows_opened();
  const bool under_timed =
      stats.under_timed_launch_calls - under_timed_at_window_open_ >= kUnderTimedLaunchesPerWindow;
  const bool on = windows_->Update(now, stats.launch_calls > 0, stats.configs != configs_at_window_open_, under_timed);
  // Every window opened, the first included (records were already on, so no switch): the
  // configurations known now, and those launched under-timed so far, are timed in it.
  if (windows_->windows_opened() != windows_before) {
    configs_at_window_open_ = stats.configs;
    under_timed_at_window_open_ = stats.under_timed_launch_calls;
  }
  windows_start_ns_ = windows_->start_ns();
  if (on != kernel_records_on_ && hooks_.set_kernel_records) {
    const int64_t before = SteadyNs();
    const uint64_t switched_at = hooks_.set_kernel_records(on);
    if (on) {
      writer_->KernelRecordsStartedAt(switched_at);
    } else if (switched_at != 0) {
      writer_->KernelRecordsStoppedAt(switched_at);
    }
    const int64_t took = SteadyNs() - before;
    records_switch_ns_max_[on] = std::max(records_switch_ns_max_[on], took);
    records_switch_ns_total_[on] += took;
    kernel_records_on_ = on;
  }
  // While a window is open, wake when it should close; otherwise the commit period suffices.
  return on ? now + options_.windows.window_ns : INT64_MAX;
}

void TraceSession::WriterLoop() {
  // Named so that per-thread CPU figures (top -H, /proc/PID/task, turns_bench.py) tell its
  // work apart from the program's.
  pthread_setname_np(pthread_self(), "occtrace-writer");
  using Clock = std::chrono::steady_clock;
  const auto period = std::chrono::milliseconds(options_.flush_period_ms);
  auto next_commit = Clock::now() + period;
  int64_t next_window_event_ns = INT64_MAX;
  std::deque<Item> items;
  while (true) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_commit - Clock::now());
    if (next_window_event_ns != INT64_MAX) {
      wait = std::min(wait, std::chrono::milliseconds(std::max<int64_t>(0, (next_window_event_ns - SteadyNs()) / 1'000'000 + 1)));
    }
    pollfd fd{wake_fd_, POLLIN, 0};
    poll(&fd, 1, static_cast<int>(std::max<int64_t>(0, wait.count())));
    uint64_t counter = 0;
    ssize_t ignored = read(wake_fd_, &counter, sizeof(counter));
    static_cast<void>(ignored);

    const int signal_number = PendingTerminationSignal(wake_fd_);
    if (signal_number != 0 && !finished_.exchange(true)) {
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
      CloseOnWriter();
      return;
    }
    if (launch_calls_ && phase == Phase::kRunning) {
      next_window_event_ns = UpdateKernelWindows();
      if (hooks_.light_tick) hooks_.light_tick(SteadyNs(), kernel_records_on_);
    }
    const bool commit_requested = TakeCommitRequest();
    if (Clock::now() >= next_commit || commit_requested) {
      // Also after a write error: buffers must keep coming back to be counted and recycled.
      if (phase == Phase::kRunning && hooks_.flush_activity) FlushOnWriter();
      writer_->SetMeta("launch_count", std::to_string(launch_calls_ ? writer_->stats().launch_calls
                                                                      : writer_->stats().launches));
      if (options_.pm_samples) writer_->WritePmMeta();
      writer_->Commit();
      if (writer_->failed()) active_.store(false);
      next_commit = Clock::now() + period;
    }
  }
}

}  // namespace occ::inj
