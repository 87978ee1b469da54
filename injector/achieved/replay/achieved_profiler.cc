// RangeAchievedProfiler, the range-profiler implementation of AchievedProfiler (achieved.h),
// assembled from its layers (achieved_profiler.h), and the factories that build it:
// CreateAchievedProfiler with the CUPTI device, the CLOCK_BOOTTIME clock and the process start,
// CreateRangeAchievedProfiler with whatever the caller passes. What remains here is the
// interface's glue to the layers and the OCC_META rows they report.
#include "injector/achieved/replay/achieved_profiler.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "injector/achieved/replay/achieved_launch_path.h"
#include "injector/common/errors.h"

namespace occ::inj {
namespace {

int64_t BootTimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Process start on the CLOCK_BOOTTIME scale (/proc/self/stat field 22, in clock ticks), so the
// budget is a fraction of the program's whole wall time, interpreter start-up included.
int64_t ProcessStartBootTimeNs() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return BootTimeNs();
  // Field 2 (comm) may contain spaces and parentheses: fields after it start at the last ')'.
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return BootTimeNs();
  std::istringstream fields(line.substr(paren + 2));
  std::string field;
  // Fields 3..21 precede starttime (field 22).
  for (int i = 3; i <= 21 && fields >> field; ++i) {
  }
  unsigned long long start_ticks = 0;
  if (!(fields >> start_ticks)) return BootTimeNs();
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return BootTimeNs();
  const int64_t start = static_cast<int64_t>(start_ticks) *
                        (1'000'000'000 / static_cast<int64_t>(ticks_per_second));
  const int64_t now = BootTimeNs();
  return start <= now ? start : now;
}

class RangeAchievedProfiler final : public AchievedLaunchPath {
 public:
  RangeAchievedProfiler(AchievedSink sink, AchievedConfig config,
                        std::unique_ptr<ProfilerDevice> device, NanoClock clock, int64_t start_ns)
      : AchievedLaunchPath(std::move(sink), config, std::move(device), std::move(clock),
                           start_ns) {}

  // Disables what is still enabled; threads' caches may keep a ContextState alive a little
  // longer, but never an enabled profiler.
  ~RangeAchievedProfiler() override { Shutdown(); }

  void EnableCallbacks(CUpti_SubscriberHandle subscriber) override {
    SubscribeCallbacks(subscriber);
  }

  void Shutdown() override { ShutDownContexts(); }

  bool NeedsSharedActivityBuffers() const override { return policy_.config().mode == AchievedMode::kAll; }

  std::vector<std::pair<std::string, std::string>> SessionMeta() const override {
    std::vector<std::pair<std::string, std::string>> meta;
    const AchievedConfig& config = policy_.config();
    auto [status, metrics, chip] = status_.Read();
    if (status.empty()) status = policy_.launches_measured() > 0 ? "ok" : "ok: no launch measured";
    meta.emplace_back("achieved_mode", std::string(AchievedModeName(config.mode)));
    meta.emplace_back("achieved_status", status);
    meta.emplace_back("achieved_metrics", metrics);
    meta.emplace_back("achieved_replay", config.user_replay ? "user" : "kernel");
    meta.emplace_back("achieved_chip", chip);
    meta.emplace_back("achieved_launches_measured", std::to_string(policy_.launches_measured()));
    meta.emplace_back("achieved_launches_not_measured",
                      std::to_string(not_measured_.load(std::memory_order_relaxed)));
    meta.emplace_back("achieved_signatures_measured",
                      std::to_string(policy_.signatures_measured()));
    meta.emplace_back("achieved_signatures_seen", std::to_string(policy_.signatures_seen()));
    meta.emplace_back("achieved_signature_cap", std::to_string(config.max_signatures));
    meta.emplace_back("achieved_launches_over_signature_cap",
                      std::to_string(policy_.launches_over_signature_cap()));
    meta.emplace_back("achieved_samples_per_signature",
                      std::to_string(config.samples_per_signature));
    meta.emplace_back("achieved_sample_budget", std::to_string(config.budget_fraction));
    meta.emplace_back("achieved_budget_applies",
                      config.mode == AchievedMode::kSample ? "1" : "0");
    meta.emplace_back("achieved_profiling_ns", std::to_string(policy_.profiling_ns()));
    meta.emplace_back("achieved_setup_ns", std::to_string(setup_ns_.load()));
    meta.emplace_back("achieved_background_setup", config.background_setup ? "1" : "0");
    meta.emplace_back("achieved_background_setup_ns", std::to_string(background_setup_ns_.load()));
    meta.emplace_back("achieved_budget_pauses", std::to_string(policy_.budget_pauses()));
    meta.emplace_back("achieved_sample_burst_ms", std::to_string(config.burst_ns / 1'000'000));
    meta.emplace_back("achieved_idle_park_s",
                      std::to_string(static_cast<double>(config.idle_park_ns) / 1e9));
    meta.emplace_back("achieved_parks", std::to_string(parks_.load()));
    meta.emplace_back("achieved_unparks", std::to_string(unparks_.load()));
    meta.emplace_back("achieved_park_deinit", config.park_deinitializes ? "1" : "0");
    {
      static constexpr const char* kPhaseNames[kPhases] = {"start", "launch", "stop",
                                                           "decode", "evaluate", "reset"};
      std::string phases;
      for (int i = 0; i < kPhases; ++i) {
        char part[64];
        std::snprintf(part, sizeof(part), "%s%s=%.1f", i > 0 ? "," : "", kPhaseNames[i],
                      static_cast<double>(phase_ns_[static_cast<size_t>(i)].load()) / 1e6);
        phases += part;
      }
      meta.emplace_back("achieved_phase_ms", phases);
    }
    meta.emplace_back("achieved_profiler_session_ends", std::to_string(session_ends_.load()));
    meta.emplace_back("achieved_skipped_for_budget",
                      std::to_string(policy_.skipped_for_budget()));
    meta.emplace_back("achieved_context_wait_timeouts",
                      std::to_string(context_wait_timeouts_.load()));
    meta.emplace_back("achieved_busy_waits", std::to_string(busy_waits_.load()));
    return meta;
  }
};

}  // namespace

std::unique_ptr<AchievedProfiler> CreateAchievedProfiler(const AchievedConfig& settings, AchievedSink sink,
                                                         bool light_tracing) {
  AchievedConfig config = settings;
  config.light_tracing = light_tracing;
  // `pm` is PM sampling, never the range profiler (CreatePmCollector, pm_collector.h).
  if (config.mode == AchievedMode::kOff || config.mode == AchievedMode::kPm) return nullptr;
  return CreateRangeAchievedProfiler(std::move(sink), config, CreateCuptiProfilerDevice(!light_tracing, config.user_replay ? ProfilerReplay::kUser : ProfilerReplay::kKernel),
                                     BootTimeNs, ProcessStartBootTimeNs());
}

std::unique_ptr<AchievedProfiler> CreateRangeAchievedProfiler(
    AchievedSink sink, AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
    NanoClock clock, int64_t start_ns) {
  return std::make_unique<RangeAchievedProfiler>(std::move(sink), config, std::move(device),
                                                 std::move(clock), start_ns);
}

}  // namespace occ::inj
