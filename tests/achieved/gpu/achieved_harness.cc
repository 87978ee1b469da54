// A minimal CUPTI injection library that runs ONLY the achieved-occupancy side of occtrace
// (CreateAchievedProfiler + the real range-profiler code), playing the injector core's part of
// the contract in injector/achieved/achieved.h: one subscriber, every callback forwarded, Shutdown()
// before the final write, SessionMeta() written out. Used for the accuracy comparison against
// Nsight Compute (run_accuracy.sh) and for measuring the profiler's own cost.
//
//   CUDA_INJECTION64_PATH=libocc_achieved_harness.so OCCTRACE_ACHIEVED=all
//   OCC_HARNESS_CSV=out.csv ./program
//
// Writes one CSV row per AchievedSample (plus the launching kernel's mangled name) and the
// session meta as "# name=value" lines.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "injector/achieved/achieved.h"
#include "injector/tracer/settings.h"

namespace {

struct Row {
  occ::inj::AchievedSample sample;
  std::string kernel;
  std::string cluster;  // "XxYxZ"
};

std::mutex g_mutex;
std::vector<Row> g_rows;
std::unique_ptr<occ::inj::AchievedProfiler> g_profiler;
CUpti_SubscriberHandle g_subscriber = nullptr;
thread_local const char* t_symbol = nullptr;  // kernel of the launch in flight on this thread
// Cluster dimensions of that launch, from its own parameters (cuLaunchKernelEx's
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; 1x1x1 otherwise): lets check_features.py verify
// that a sample is attributed to the launch it measured.
thread_local unsigned t_cluster[3] = {1, 1, 1};

template <typename Params>
void NoteCluster(const Params* params) {
  t_cluster[0] = t_cluster[1] = t_cluster[2] = 1;
  const CUlaunchConfig* config = params != nullptr ? params->config : nullptr;
  if (config == nullptr || config->attrs == nullptr) return;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      t_cluster[0] = config->attrs[i].value.clusterDim.x;
      t_cluster[1] = config->attrs[i].value.clusterDim.y;
      t_cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  }
}

bool IsDriverKernelLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* cbdata) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && IsDriverKernelLaunch(cbid)) {
    const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
    if (data->callbackSite == CUPTI_API_ENTER) {
      t_symbol = data->symbolName;
      if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
        NoteCluster(static_cast<const cuLaunchKernelEx_params*>(data->functionParams));
      } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
        NoteCluster(static_cast<const cuLaunchKernelEx_ptsz_params*>(data->functionParams));
      } else {
        NoteCluster<cuLaunchKernelEx_params>(nullptr);
      }
    }
  }
  if (g_profiler) g_profiler->OnCallback(domain, cbid, cbdata);
}

void WriteCsv() {
  if (g_profiler) g_profiler->Shutdown();
  const char* path = std::getenv("OCC_HARNESS_CSV");
  FILE* out = path != nullptr ? std::fopen(path, "w") : stderr;
  if (out == nullptr) {
    std::fprintf(stderr, "occ_achieved_harness: cannot write %s\n", path);
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_profiler) {
    for (const auto& [name, value] : g_profiler->SessionMeta()) {
      std::fprintf(out, "# %s=%s\n", name.c_str(), value.c_str());
    }
  } else {
    std::fprintf(out, "# achieved_mode=off\n");
  }
  std::fprintf(out,
               "correlation_id,context_id,status,achieved_occupancy_pct,warps_active_per_cycle,"
               "sm_cycles_active,gpu_time_ns,policy,sample_index,cluster,kernel\n");
  for (const Row& row : g_rows) {
    const occ::inj::AchievedSample& s = row.sample;
    std::fprintf(out, "%u,%u,%s,%.4f,%.4f,%.1f,%.1f,%s,%d,%s,%s\n", s.correlation_id, s.context_id,
                 s.status.c_str(), s.achieved_occupancy_pct, s.warps_active_per_cycle,
                 s.sm_cycles_active, s.gpu_time_ns, s.policy.c_str(), s.sample_index,
                 row.cluster.c_str(), row.kernel.c_str());
  }
  if (out != stderr) std::fclose(out);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    // The OCCTRACE_* settings as libocctrace.so reads them (warnings printed).
    const occ::inj::Settings settings = occ::inj::ReadProcessSettings();
    g_profiler = occ::inj::CreateAchievedProfiler(settings.achieved, [](occ::inj::AchievedSample&& sample) {
      std::lock_guard<std::mutex> lock(g_mutex);
      const std::string cluster = std::to_string(t_cluster[0]) + "x" + std::to_string(t_cluster[1]) +
                                  "x" + std::to_string(t_cluster[2]);
      g_rows.push_back({std::move(sample), t_symbol != nullptr ? t_symbol : "", cluster});
    });
    if (cuptiSubscribe(&g_subscriber, OnCallback, nullptr) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "occ_achieved_harness: cuptiSubscribe failed\n");
      g_profiler.reset();
      return;
    }
    if (g_profiler) g_profiler->EnableCallbacks(g_subscriber);
    std::atexit(WriteCsv);
  });
  return 1;
}
