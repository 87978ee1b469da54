// achieved_launch_bench: CPU cost of the achieved profiler's launch callbacks in sample mode once
// sampling has nothing left to do (the steady state of a training loop).
//
// Drives the real RangeAchievedProfiler (injector/achieved/replay/achieved_profiler.cc) through
// AchievedProfiler::OnCallback with synthetic CUpti_CallbackData, as CUPTI delivers a
// cudaLaunchKernel: runtime ENTER, driver cuLaunchKernel ENTER, driver EXIT, runtime EXIT.
// The device side is tests/achieved/fake_device.h (no GPU here): only the profiler's own
// bookkeeping is timed, not CUPTI's or the driver's. 64 signatures (16 functions x 4 grids) are
// each measured once in a warm-up, so every timed launch finds its signature exhausted.
// Scenarios: the context parked (profiler disabled after idling) or not (enabled, stopped), 1
// or 4 threads, the 4 threads sharing one context or each with its own.
//
// Prints one line per scenario: median over the repetitions (scenarios interleaved within each
// repetition) of ns per launch as one thread sees it (wall time of the timed loop / launches per
// thread), and "RESULT <scenario> <ns>" lines that bench/injector/achieved_launch_compare.py
// reads to compare two builds (runs interleaved, medians).
//
//   achieved_launch_bench [launches_per_thread=200000] [repetitions=5]
//   achieved_launch_bench --memory [signatures=1048576]   (heap bytes per signature)
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/achieved/achieved_launch.h"
#include "injector/achieved/achieved_policy.h"
#include "injector/achieved/replay/achieved_profiler.h"
#include "tests/achieved/fake_device.h"

namespace {

using occ::inj::AchievedConfig;
using occ::inj::AchievedMode;
using occ::inj::AchievedProfiler;

constexpr int kFunctions = 16;
constexpr int kGrids = 4;

int64_t BootTimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Scenario {
  const char* name;
  bool parked;
  int threads;
  bool shared_context;
};

constexpr Scenario kScenarios[] = {
    {"parked/1-thread", true, 1, true},
    {"parked/4-threads-1-context", true, 4, true},
    {"parked/4-threads-4-contexts", true, 4, false},
    {"enabled/1-thread", false, 1, true},
    {"enabled/4-threads-1-context", false, 4, true},
    {"enabled/4-threads-4-contexts", false, 4, false},
};

CUcontext ContextHandle(int index) {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x1000 * (index + 1)));
}

// One application thread's launch stream: the four callbacks of a cudaLaunchKernel.
class Launcher {
 public:
  Launcher(AchievedProfiler* profiler, CUcontext context) : profiler_(profiler), context_(context) {
    params_.hStream = nullptr;
    params_.blockDimX = 256;
    params_.blockDimY = params_.blockDimZ = 1;
    params_.gridDimY = params_.gridDimZ = 1;
    params_.sharedMemBytes = 0;
    data_.context = context;
    data_.contextUid = 1;
    data_.functionParams = &params_;
    data_.functionReturnValue = &result_;
    data_.symbolName = "kernel";
  }

  void Launch(int signature) {
    params_.f = reinterpret_cast<CUfunction>(static_cast<uintptr_t>(0x100 + signature / kGrids));
    params_.gridDimX = static_cast<unsigned>(66 * (1 + signature % kGrids));
    ++correlation_;
    data_.correlationId = correlation_;
    Callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
             CUPTI_API_ENTER);
    data_.correlationId = correlation_ + 1'000'000'000u;  // the driver call's own id
    Callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER);
    Callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT);
    data_.correlationId = correlation_;
    Callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
             CUPTI_API_EXIT);
  }

 private:
  void Callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site) {
    data_.callbackSite = site;
    profiler_->OnCallback(domain, cbid, &data_);
  }

  AchievedProfiler* profiler_;
  CUcontext context_;
  cuLaunchKernel_params params_{};
  CUresult result_ = CUDA_SUCCESS;
  CUpti_CallbackData data_{};
  uint32_t correlation_ = 0;
};

// ns per launch as one thread sees it.
double RunScenario(const Scenario& scenario, int launches_per_thread) {
  AchievedConfig config;
  config.mode = AchievedMode::kSample;
  config.samples_per_signature = 1;
  config.budget_fraction = 1.0;
  // Parked: the first launch with nothing to measure parks the context. Enabled: never.
  config.idle_park_ns = scenario.parked ? 1 : int64_t{1} << 62;
  auto device_state = std::make_shared<occ::inj::testing::FakeDeviceState>();
  std::unique_ptr<AchievedProfiler> profiler = occ::inj::CreateRangeAchievedProfiler(
      [](occ::inj::AchievedSample&&) {}, config,
      std::make_unique<occ::inj::testing::FakeDevice>(device_state), BootTimeNs,
      BootTimeNs() - 1'000'000'000);

  const int contexts = scenario.shared_context ? 1 : scenario.threads;
  // Warm-up: every signature of every context measured once, then one more launch each so
  // that parking (or not) has happened before timing starts.
  for (int c = 0; c < contexts; ++c) {
    Launcher launcher(profiler.get(), ContextHandle(c));
    for (int round = 0; round < 2; ++round) {
      for (int s = 0; s < kFunctions * kGrids; ++s) launcher.Launch(s);
    }
  }

  std::latch ready(scenario.threads + 1);
  std::vector<double> elapsed_ns(static_cast<size_t>(scenario.threads));
  std::vector<std::thread> threads;
  for (int t = 0; t < scenario.threads; ++t) {
    threads.emplace_back([&, t] {
      Launcher launcher(profiler.get(), ContextHandle(scenario.shared_context ? 0 : t));
      launcher.Launch(0);  // this thread's first launch (thread-local set-up) is not timed
      ready.arrive_and_wait();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < launches_per_thread; ++i) launcher.Launch(i % (kFunctions * kGrids));
      elapsed_ns[static_cast<size_t>(t)] = static_cast<double>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                               start)
              .count());
    });
  }
  ready.arrive_and_wait();
  for (std::thread& thread : threads) thread.join();
  if (device_state->starts.load() != contexts * kFunctions * kGrids) {
    std::fprintf(stderr, "achieved_launch_bench: %s: %d ranges started, expected %d\n",
                 scenario.name, device_state->starts.load(), contexts * kFunctions * kGrids);
    std::exit(1);
  }
  profiler->Shutdown();
  const double slowest = *std::max_element(elapsed_ns.begin(), elapsed_ns.end());
  return slowest / launches_per_thread;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Heap bytes per signature the policy keeps (mallinfo2 before/after filling it).
int RunMemory(int64_t signatures) {
  AchievedConfig config;
  config.mode = AchievedMode::kSample;
  config.budget_fraction = 1.0;
  const size_t before = mallinfo2().uordblks;
  {
    auto policy = std::make_unique<occ::inj::AchievedPolicy>(config, BootTimeNs, BootTimeNs());
    occ::inj::LaunchSignature signature;
    signature.context = 0x1000;
    signature.function = 0x100;
    for (int64_t i = 0; i < signatures + 1000; ++i) {
      signature.grid_x = static_cast<uint32_t>(i);
      policy->Decide(signature);
    }
    const size_t after = mallinfo2().uordblks;
    const int64_t kept = policy->signatures_seen();
    std::printf("policy after %lld distinct signatures: %lld kept, %.1f MiB heap, %.0f B each\n",
                static_cast<long long>(signatures + 1000), static_cast<long long>(kept),
                static_cast<double>(after - before) / (1 << 20),
                static_cast<double>(after - before) / static_cast<double>(kept));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--memory") == 0) {
    return RunMemory(argc > 2 ? std::atoll(argv[2]) : int64_t{1} << 20);
  }
  const int launches = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  if (launches <= 0 || repetitions <= 0) {
    std::fprintf(stderr, "usage: achieved_launch_bench [launches_per_thread] [repetitions]\n");
    return 2;
  }
  std::vector<std::vector<double>> results(std::size(kScenarios));
  for (int r = 0; r < repetitions; ++r) {
    for (size_t s = 0; s < std::size(kScenarios); ++s) {
      results[s].push_back(RunScenario(kScenarios[s], launches));
    }
  }
  std::printf("achieved launch path, sample mode, signatures exhausted: ns per launch "
              "(runtime + driver ENTER/EXIT), median of %d, %u hardware threads\n",
              repetitions, std::thread::hardware_concurrency());
  for (size_t s = 0; s < std::size(kScenarios); ++s) {
    const auto [lo, hi] = std::minmax_element(results[s].begin(), results[s].end());
    std::printf("  %-30s %9.1f ns  (%.1f .. %.1f)\n", kScenarios[s].name, Median(results[s]), *lo,
                *hi);
  }
  for (size_t s = 0; s < std::size(kScenarios); ++s) {
    std::printf("RESULT %s %.2f\n", kScenarios[s].name, Median(results[s]));
  }
  return 0;
}
