// The CUPTI PM-sampling backend of pm_device.h. Every CUPTI result goes through CheckCupti
// (profiler_host.h), which names the failing call in a ProfilerError; the host object and the
// profiler's initialization are ProfilerHost's.
#include "injector/achieved/pm/pm_device.h"

#include <cupti_pmsampling.h>
#include <cupti_target.h>

#include <chrono>
#include <mutex>
#include <string_view>
#include <utility>

#include "injector/common/errors.h"

namespace occ::inj {
namespace {

// Every PM-sampling and host-object call of this file takes this lock: the decode thread's
// (decode, sample spans, stop, disable, set-up) and the writer thread's evaluation (once per
// image). Run
// concurrently on an H100 (CUDA 13.0, 2026-11-27), the exit's stop and disable beside the
// writer's evaluation corrupted the heap ("double free or corruption") or hung; the CUPTI
// samples and Kineto never call these from two threads at once either. A leaf lock.
std::timed_mutex& PmCuptiMutex() {
  static std::timed_mutex mutex;
  return mutex;
}

// The host object (chip + counter availability + metrics): what evaluation needs. Owned by the
// evaluator, which the writer may still use after the device's sampler is disabled.
class CuptiPmEvaluator final : public PmEvaluator {
 public:
  CuptiPmEvaluator(std::unique_ptr<ProfilerHost> host, std::vector<const char*> metrics)
      : host_(std::move(host)), metrics_(std::move(metrics)) {
    for (size_t i = 0; i < metrics_.size(); ++i) {
      const std::string_view name = metrics_[i];
      if (name == kPmCyclesActiveMetric) cycles_ = i;
      if (name == kPmWarpsActiveMetric) warps_ = i;
      if (name == kPmDramMetric) dram_ = i;
    }
  }
  ~CuptiPmEvaluator() override {
    // As in Evaluate: a host object left behind beats a traced program that hangs at exit.
    std::unique_lock lock(PmCuptiMutex(), std::defer_lock);
    if (!lock.try_lock_for(std::chrono::seconds(1))) {
      static_cast<void>(host_.release());
      return;
    }
    host_.reset();
  }
  CuptiPmEvaluator(const CuptiPmEvaluator&) = delete;
  CuptiPmEvaluator& operator=(const CuptiPmEvaluator&) = delete;

  void Evaluate(const std::vector<uint8_t>& image, const std::vector<uint32_t>& samples, std::vector<PmValues>* values,
                std::vector<uint8_t>* failed, std::string* error) override {
    values->assign(samples.size(), PmValues{});
    failed->assign(samples.size(), 1);
    // Timed, once per image: should the decode thread be stuck inside CUPTI with the lock held
    // (see PmCollector::Shutdown), the writer must still close the trace; after one such wait
    // the next images do not wait at all, so that a trace's last images cost 1 s, not 1 s each.
    std::unique_lock lock(PmCuptiMutex(), std::defer_lock);
    if (!lock.try_lock_for(lock_stuck_ ? std::chrono::milliseconds(0) : std::chrono::milliseconds(1000))) {
      lock_stuck_ = true;
      *error = "PM sampling's CUPTI lock not free within 1 s (the decode thread is stuck in CUPTI)";
      return;
    }
    lock_stuck_ = false;
    for (size_t k = 0; k < samples.size(); ++k) {
      std::string sample_error;
      if (EvaluateOne(image, samples[k], &(*values)[k], &sample_error)) {
        (*failed)[k] = 0;
      } else if (error->empty()) {
        *error = sample_error;
      }
    }
  }

  bool AnyActive(const std::vector<uint8_t>& image, const std::vector<uint32_t>& samples, bool* active) override {
    // A short wait: the writer holds the lock for a whole image (about 1 ms), and a spot check
    // missed costs nothing but a later stop.
    std::unique_lock lock(PmCuptiMutex(), std::defer_lock);
    if (!lock.try_lock_for(std::chrono::milliseconds(5))) return false;
    const char* cycles[1] = {metrics_[cycles_]};
    *active = false;
    for (const uint32_t sample : samples) {
      double value = -1;
      std::string error;
      // A subset CUPTI refuses: every configured metric at once, as in EvaluateOne.
      if (!(subsets_evaluate_ && EvaluateMetrics(image, sample, cycles, 1, &value, &error)) &&
          !EvaluateAll(image, sample, &value, &error)) {
        return false;
      }
      if (value > 0) {
        *active = true;
        return true;
      }
    }
    return true;
  }

 private:
  // PmCuptiMutex held. sm__cycles_active through every configured metric at once, for when CUPTI
  // refuses subsets.
  bool EvaluateAll(const std::vector<uint8_t>& image, size_t sample_index, double* cycles, std::string* error) {
    double all[3] = {-1, -1, -1};
    if (!EvaluateMetrics(image, sample_index, metrics_.data(), metrics_.size(), all, error)) return false;
    *cycles = all[cycles_];
    return true;
  }

  // PmCuptiMutex held.
  bool EvaluateOne(const std::vector<uint8_t>& image, size_t sample_index, PmValues* out, std::string* error) {
    // The two occupancy metrics first, and the DRAM metric only for a sample in which an SM
    // was active: most samples of a training loop are idle (73-80 % at 50 us in train_small.py
    // and ResNet-50, H100, 2026-11-28), and the DRAM ratio costs more than the other two
    // together (writer time 7.2 against 3.1 us per sample).
    const char* occupancy[2] = {metrics_[cycles_], metrics_[warps_]};
    double values[2] = {-1, -1};
    if (!subsets_evaluate_ || !EvaluateMetrics(image, sample_index, occupancy, 2, values, error)) {
      // Should CUPTI refuse a subset of the configured metrics, all of them at once, as before.
      subsets_evaluate_ = false;
      double all[3] = {-1, -1, -1};
      if (!EvaluateMetrics(image, sample_index, metrics_.data(), metrics_.size(), all, error)) return false;
      out->sm_cycles_active = all[cycles_];
      out->warps_active = all[warps_];
      out->dram_throughput_pct = dram_ < metrics_.size() ? all[dram_] : -1;
      return true;
    }
    out->sm_cycles_active = values[0];
    out->warps_active = values[1];
    out->dram_throughput_pct = -1;
    if (dram_ < metrics_.size() && values[0] > 0) {
      const char* dram[1] = {metrics_[dram_]};
      double dram_value = -1;
      if (!EvaluateMetrics(image, sample_index, dram, 1, &dram_value, error)) return false;
      out->dram_throughput_pct = dram_value;
    }
    return true;
  }

  // PmCuptiMutex held.
  bool EvaluateMetrics(const std::vector<uint8_t>& image, size_t sample_index, const char** names, size_t count,
                       double* values, std::string* error) {
    ProfilerError failure;
    if (!host_->Evaluate(image, sample_index, {names, count}, {values, count}, &failure)) {
      *error = failure.Message();
      return false;
    }
    return true;
  }

  std::unique_ptr<ProfilerHost> host_;
  std::vector<const char*> metrics_;  // at most 3
  size_t cycles_ = 0, warps_ = 0, dram_ = 99;
  bool subsets_evaluate_ = true;  // PmCuptiMutex held
  bool lock_stuck_ = false;       // writer thread only: the last wait for the lock timed out
};

class CuptiPmDeviceSampler final : public PmDeviceSampler {
 public:
  ~CuptiPmDeviceSampler() override { Disable(); }

  bool Setup(uint32_t device_index, const PmSettings& settings, ProfilerError* error) {
    std::lock_guard lock(PmCuptiMutex());
    if (!ProfilerHost::DeviceSupported(device_index, CUPTI_PROFILER_PM_SAMPLING, error)) return false;
    if (!ProfilerHost::ChipName(device_index, &chip_name_, error)) return false;

    CUpti_PmSampling_GetCounterAvailability_Params availability{};
    availability.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
    availability.deviceIndex = device_index;
    if (!CheckCupti(cuptiPmSamplingGetCounterAvailability(&availability), "cuptiPmSamplingGetCounterAvailability",
                    error)) {
      return false;
    }
    std::vector<uint8_t> availability_image(availability.counterAvailabilityImageSize);
    availability.pCounterAvailabilityImage = availability_image.data();
    if (!CheckCupti(cuptiPmSamplingGetCounterAvailability(&availability), "cuptiPmSamplingGetCounterAvailability",
                    error)) {
      return false;
    }
    std::unique_ptr<ProfilerHost> host;
    if (!BuildConfig(availability_image, settings.occupancy_only, &host, error)) return false;
    evaluator_ = std::make_shared<CuptiPmEvaluator>(std::move(host), metrics_);

    CUpti_PmSampling_Enable_Params enable{};
    enable.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
    enable.deviceIndex = device_index;
    if (!CheckCupti(cuptiPmSamplingEnable(&enable), "cuptiPmSamplingEnable", error)) return false;
    object_ = enable.pPmSamplingObject;

    CUpti_PmSampling_SetConfig_Params config{};
    config.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
    config.pPmSamplingObject = object_;
    config.configSize = config_image_.size();
    config.pConfig = config_image_.data();
    config.hardwareBufferSize = settings.hardware_buffer_bytes;
    config.samplingInterval = settings.interval_ns;
    config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    // KEEP_OLDEST: a full hardware buffer is reported as an overflow (counted, pm_overflows)
    // instead of old samples vanishing unnoticed.
    config.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    if (!CheckCupti(cuptiPmSamplingSetConfig(&config), "cuptiPmSamplingSetConfig", error)) return false;

    CUpti_PmSampling_GetCounterDataSize_Params size{};
    size.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
    size.pPmSamplingObject = object_;
    size.pMetricNames = metrics_.data();
    size.numMetrics = metrics_.size();
    size.maxSamples = settings.max_samples_per_image;
    if (!CheckCupti(cuptiPmSamplingGetCounterDataSize(&size), "cuptiPmSamplingGetCounterDataSize", error)) {
      return false;
    }
    image_bytes_ = size.counterDataSize;
    return true;
  }

  bool Start(ProfilerError* error) override {
    std::lock_guard lock(PmCuptiMutex());
    CUpti_PmSampling_Start_Params start{CUpti_PmSampling_Start_Params_STRUCT_SIZE, nullptr, object_};
    return CheckCupti(cuptiPmSamplingStart(&start), "cuptiPmSamplingStart", error);
  }

  bool Stop(ProfilerError* error) override {
    std::lock_guard lock(PmCuptiMutex());
    CUpti_PmSampling_Stop_Params stop{CUpti_PmSampling_Stop_Params_STRUCT_SIZE, nullptr, object_};
    return CheckCupti(cuptiPmSamplingStop(&stop), "cuptiPmSamplingStop", error);
  }

  bool NewImage(std::vector<uint8_t>* image, ProfilerError* error) override {
    // A pooled image is initialized again in place (no allocation, no clearing).
    if (image->size() != image_bytes_) image->assign(image_bytes_, 0);
    std::lock_guard lock(PmCuptiMutex());
    CUpti_PmSampling_CounterDataImage_Initialize_Params init{};
    init.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    init.pPmSamplingObject = object_;
    init.counterDataSize = image->size();
    init.pCounterData = image->data();
    return CheckCupti(cuptiPmSamplingCounterDataImageInitialize(&init), "cuptiPmSamplingCounterDataImageInitialize",
                      error);
  }

  bool Decode(std::vector<uint8_t>* image, std::vector<PmImage::Span>* spans, PmDecodeResult* result,
              ProfilerError* error) override {
    spans->clear();
    *result = PmDecodeResult{};
    std::lock_guard lock(PmCuptiMutex());
    CUpti_PmSampling_DecodeData_Params decode{};
    decode.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
    decode.pPmSamplingObject = object_;
    decode.pCounterDataImage = image->data();
    decode.counterDataImageSize = image->size();
    const CUptiResult decoded = cuptiPmSamplingDecodeData(&decode);
    // CUPTI documents OUT_OF_MEMORY for "record overflow in the hardware buffer": an overflow,
    // not a failure; what was decoded before it is still read below.
    if (decoded == CUPTI_ERROR_OUT_OF_MEMORY) {
      result->overflow = true;
    } else if (!CheckCupti(decoded, "cuptiPmSamplingDecodeData", error)) {
      return false;
    }
    result->overflow = result->overflow || decode.overflow != 0;
    result->image_full = decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;

    CUpti_PmSampling_GetCounterDataInfo_Params info{};
    info.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
    info.pCounterDataImage = image->data();
    info.counterDataImageSize = image->size();
    if (!CheckCupti(cuptiPmSamplingGetCounterDataInfo(&info), "cuptiPmSamplingGetCounterDataInfo", error)) return false;
    const auto spans_began = std::chrono::steady_clock::now();
    spans->reserve(info.numCompletedSamples);
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      CUpti_PmSampling_CounterData_GetSampleInfo_Params sample{};
      sample.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
      sample.pPmSamplingObject = object_;
      sample.pCounterDataImage = image->data();
      sample.counterDataImageSize = image->size();
      sample.sampleIndex = i;
      if (!CheckCupti(cuptiPmSamplingCounterDataGetSampleInfo(&sample), "cuptiPmSamplingCounterDataGetSampleInfo",
                      error)) {
        return false;
      }
      spans->push_back({sample.startTimestamp, sample.endTimestamp});
    }
    result->completed_samples = spans->size();
    result->sample_info_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - spans_began).count();
    return true;
  }

  void Disable() override {
    if (object_ == nullptr) return;
    std::lock_guard lock(PmCuptiMutex());
    CUpti_PmSampling_Disable_Params disable{CUpti_PmSampling_Disable_Params_STRUCT_SIZE, nullptr, object_};
    OCC_CUPTI_LOG(cuptiPmSamplingDisable(&disable));
    object_ = nullptr;
  }

  std::shared_ptr<PmEvaluator> evaluator() const override { return evaluator_; }
  const std::vector<const char*>& metrics() const override { return metrics_; }
  const std::string& chip_name() const override { return chip_name_; }

 private:
  // The three metrics if they fit one pass (PM sampling cannot replay: SetConfig refuses more),
  // else the two that occupancy needs.
  bool BuildConfig(const std::vector<uint8_t>& availability, bool occupancy_only,
                   std::unique_ptr<ProfilerHost>* host_out, ProfilerError* error) {
    const std::vector<std::vector<const char*>> candidates = {
        {kPmCyclesActiveMetric, kPmWarpsActiveMetric, kPmDramMetric}, {kPmCyclesActiveMetric, kPmWarpsActiveMetric}};
    size_t passes_needed = 0;
    for (size_t c = occupancy_only ? 1 : 0; c < candidates.size(); ++c) {
      const std::vector<const char*>& metrics = candidates[c];
      // Destroyed (cuptiProfilerHostDeinitialize) unless it is the one kept.
      std::unique_ptr<ProfilerHost> host =
          ProfilerHost::Create(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip_name_, availability, error);
      if (host == nullptr) return false;
      if (!host->AddMetrics(metrics, error)) {
        if (metrics.size() == 3) {  // the DRAM metric may be what the chip lacks: try without
          *error = ProfilerError{};
          continue;
        }
        return false;
      }
      if (!host->ConfigImage(&config_image_, &passes_needed, error)) return false;
      if (passes_needed == 1) {
        metrics_ = metrics;
        *host_out = std::move(host);
        return true;
      }
    }
    error->call = "cuptiProfilerHostGetNumOfPasses";
    error->result = CUPTI_ERROR_NOT_SUPPORTED;
    error->detail = std::string(kPmWarpsActiveMetric) + " and " + kPmCyclesActiveMetric + " need " +
                    std::to_string(passes_needed) + " passes on " + chip_name_;
    return false;
  }

  CUpti_PmSampling_Object* object_ = nullptr;
  std::string chip_name_;
  std::vector<const char*> metrics_;
  std::vector<uint8_t> config_image_;
  size_t image_bytes_ = 0;
  std::shared_ptr<CuptiPmEvaluator> evaluator_;
};

class CuptiPmBackend final : public PmBackend {
 public:
  bool DeviceOf(void* context, uint32_t* device_index) override {
    return cuptiGetDeviceId(static_cast<CUcontext>(context), device_index) == CUPTI_SUCCESS;
  }
  std::unique_ptr<PmDeviceSampler> Open(uint32_t device_index, const PmSettings& settings,
                                        ProfilerError* error) override {
    auto sampler = std::make_unique<CuptiPmDeviceSampler>();
    if (!sampler->Setup(device_index, settings, error)) return nullptr;  // its destructor disables
    return sampler;
  }
  bool Initialize(ProfilerError* error) override { return ProfilerHost::InitializeProfiler(error); }
  void Deinitialize() override { ProfilerHost::DeinitializeProfiler(); }
};

}  // namespace

std::unique_ptr<PmBackend> CreateCuptiPmBackend() { return std::make_unique<CuptiPmBackend>(); }

}  // namespace occ::inj
