#include "injector/writer/pm_sample_join.h"

#include <algorithm>

namespace occ::inj {
namespace {

// How long kernel records and sample spans are kept for a sample or a record that may still
// come, behind the newest record (when records' completeness is not known, as in light
// tracing) or behind where records are complete: images reach the writer within a few decode
// periods (tens of ms) of the GPU and records within ~0.75 s, so nothing comes for older time.
constexpr uint64_t kKeepNs = 2'000'000'000;
constexpr uint64_t kRunning = UINT64_MAX;  // a kernel's end when its record came without one
// Dropped images wait for records without holding a pool slot; beyond this many samples (16
// bytes each) the oldest are judged with what is known.
constexpr size_t kMostWaitingDroppedSamples = size_t{1} << 20;
// Spans kept per device when records' completeness never advances (light tracing).
constexpr size_t kMostSpans = size_t{1} << 16;

uint64_t Overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
  const uint64_t start = std::max(a_start, b_start), end = std::min(a_end, b_end);
  return end > start ? end - start : 0;
}

}  // namespace

void PmSampleJoin::Spans::Add(uint64_t start, uint64_t end) {
  if (!spans.empty() && start <= spans.back().end) {
    spans.back().end = std::max(spans.back().end, end);
    return;
  }
  spans.push_back({start, end});
  if (spans.size() > kMostSpans) spans.erase(spans.begin(), spans.begin() + kMostSpans / 2);
}

uint64_t PmSampleJoin::Spans::Overlap(uint64_t start, uint64_t end) const {
  auto it = std::upper_bound(spans.begin(), spans.end(), start, [](uint64_t t, const Span& s) { return t < s.end; });
  uint64_t total = 0;
  for (; it != spans.end() && it->start < end; ++it) total += occ::inj::Overlap(start, end, it->start, it->end);
  return total;
}

void PmSampleJoin::Spans::DropBefore(uint64_t time) {
  auto it = std::find_if(spans.begin(), spans.end(), [time](const Span& s) { return s.end > time; });
  spans.erase(spans.begin(), it);
}

PmSampleJoin::Device& PmSampleJoin::DeviceOf(uint32_t device_id) { return devices_[device_id]; }

PmSampleJoin::Config& PmSampleJoin::ConfigOf(int64_t config_id, uint32_t device_id) {
  const size_t index = config_id > 0 ? static_cast<size_t>(config_id) : 0;
  if (index >= configs_.size()) configs_.resize(index + 1);
  Config& config = configs_[index];
  config.device_id = device_id;
  return config;
}

void PmSampleJoin::AddKernel(uint32_t device_id, uint64_t start, uint64_t end, int64_t config_id) {
  if (start == 0) return;
  const uint64_t stop = end > start ? end : end == start ? start : kRunning;
  Device& device = DeviceOf(device_id);
  device.kernels.push_back({start, stop, config_id});
  device.newest_start = std::max(device.newest_start, start);
  Config& config = ConfigOf(config_id, device_id);
  config.last_end = std::max(config.last_end, stop == kRunning ? start : stop);
  // Samples stored before this record came: it is credited with them now (a running kernel's
  // extent is not known yet: RecordsThrough gives it one).
  if (stop != kRunning) config.sampled_ns += device.stored_ahead.Overlap(start, stop);
  if (device.idle.Overlap(start, stop) > 0) ++counts_.late_kernel_records;
  changed_ = true;
}

void PmSampleJoin::AddImage(PmImage&& image, int64_t now_ns) {
  if (image.spans.empty()) return;
  Device& device = DeviceOf(image.device_id);
  device.waiting.push_back({std::move(image), now_ns});
  counts_.most_images_held = std::max<uint64_t>(counts_.most_images_held, waiting_images());
}

void PmSampleJoin::RecordsThrough(uint64_t cupti_ns) {
  records_through_ = std::max(records_through_, cupti_ns);
  // A record that came without its end (a forced flush handed it back while the kernel ran)
  // never comes again: the kernel is taken to have run until this flush, not forever, so that
  // it neither makes every later sample busy nor is credited with them.
  for (auto& [id, device] : devices_) {
    const uint64_t until = records_through_ == UINT64_MAX ? device.newest_start : records_through_;
    for (Kernel& kernel : device.kernels) {
      if (kernel.end == kRunning) kernel.end = std::max(kernel.start, until);
    }
  }
}

size_t PmSampleJoin::waiting_images() const {
  size_t held = 0;
  for (const auto& [id, device] : devices_) {
    for (const auto& waiting : device.waiting) held += waiting.image.dropped ? 0 : 1;
  }
  return held;
}

size_t PmSampleJoin::waiting_samples() const {
  size_t samples = 0;
  for (const auto& [id, device] : devices_) {
    for (const auto& waiting : device.waiting) samples += waiting.image.spans.size();
  }
  return samples;
}

std::vector<std::pair<std::string, std::string>> PmSampleJoin::CoverageMeta() const {
  const uint64_t enough = kEnoughSampleIntervals * settings_.interval_ns;
  uint64_t seen = 0, sampled = 0, satisfied = 0;
  for (const Config& config : configs_) {
    if (config.last_end == 0) continue;
    ++seen;
    sampled += config.sampled_ns > 0 ? 1 : 0;
    satisfied += config.sampled_ns >= enough ? 1 : 0;
  }
  return {{"pm_configs_seen", std::to_string(seen)},
          {"pm_configs_sampled", std::to_string(sampled)},
          {"pm_configs_sampled_enough", std::to_string(satisfied)},
          {"pm_enough_sampled_us", std::to_string(enough / 1000)}};
}

uint64_t PmSampleJoin::sampled_ns(int64_t config_id) const {
  return config_id > 0 && static_cast<size_t>(config_id) < configs_.size() ? configs_[static_cast<size_t>(config_id)].sampled_ns : 0;
}

void PmSampleJoin::SortKernels(Device* device) {
  auto by_start = [](const Kernel& a, const Kernel& b) { return a.start < b.start; };
  std::vector<Kernel>& kernels = device->kernels;
  if (device->sorted == kernels.size()) return;
  std::sort(kernels.begin() + static_cast<ptrdiff_t>(device->sorted), kernels.end(), by_start);
  std::inplace_merge(kernels.begin(), kernels.begin() + static_cast<ptrdiff_t>(device->sorted), kernels.end(),
                     by_start);
  device->sorted = kernels.size();
}

bool PmSampleJoin::PickDue(bool all, int64_t now_ns, uint32_t* device_id) {
  // Over the hold: the image whose samples are oldest goes first, caught up or not.
  const bool over_hold = waiting_images() > settings_.max_held_images;
  size_t dropped_samples = 0;
  for (const auto& [id, device] : devices_) {
    for (const auto& waiting : device.waiting) dropped_samples += waiting.image.dropped ? waiting.image.spans.size() : 0;
  }
  const bool over_dropped = dropped_samples > kMostWaitingDroppedSamples;
  bool found = false;
  uint64_t oldest = UINT64_MAX;
  for (const auto& [id, device] : devices_) {
    if (device.waiting.empty()) continue;
    const PmImage& front = device.waiting.front().image;
    if (all || front.spans.back().end_ns <= records_through_ || now_ns - device.waiting.front().arrived_ns >= kMostImageWaitNs) {
      *device_id = id;
      return true;
    }
    const bool forced = front.dropped ? over_dropped : over_hold;
    if (forced && front.spans.front().start_ns < oldest) {
      oldest = front.spans.front().start_ns;
      *device_id = id;
      found = true;
    }
  }
  return found;
}

bool PmSampleJoin::NextJudged(bool all, int64_t now_ns, Judged* out) {
  uint32_t device_id = 0;
  while (PickDue(all, now_ns, &device_id)) {
    Device& device = devices_.at(device_id);
    PmImage image = std::move(device.waiting.front().image);
    device.waiting.pop_front();
    const bool dropped = image.dropped;
    Judge(&device, std::move(image), out);
    if (!dropped) return true;
  }
  return false;
}

void PmSampleJoin::Judge(Device* device, PmImage&& image, Judged* out) {
  *out = Judged{};
  out->records_through = records_through_;
  ++counts_.images_judged;
  if (image.spans.back().end_ns <= records_through_) ++counts_.images_judged_caught_up;
  SortKernels(device);
  const uint64_t longest = image.interval_ns > 0 ? kMaxSampleIntervals * image.interval_ns : UINT64_MAX;
  const std::vector<Kernel>& kernels = device->kernels;
  std::vector<size_t> active;  // kernels that started before the sample's end and may overlap it
  size_t next = 0;
  for (uint32_t i = 0; i < image.spans.size(); ++i) {
    const PmImage::Span& span = image.spans[i];
    device->judged_through = std::max(device->judged_through, span.end_ns);
    if (span.end_ns - span.start_ns > longest || span.end_ns < span.start_ns) {
      ++counts_.rejected_long;
      continue;
    }
    while (next < kernels.size() && kernels[next].start < span.end_ns) active.push_back(next++);
    std::erase_if(active, [&](size_t k) { return kernels[k].end <= span.start_ns; });
    const bool busy = !active.empty();
    const bool known_idle = !busy && span.end_ns <= records_through_;
    if (image.dropped) {
      ++(known_idle ? counts_.lost_idle : counts_.lost_busy);
      continue;
    }
    if (known_idle) {
      ++counts_.idle;
      device->idle.Add(span.start_ns, span.end_ns);
      continue;
    }
    if (span.end_ns > records_through_) ++counts_.ahead_of_records;
    out->first.push_back(static_cast<uint32_t>(out->overlaps.size()));
    out->evaluate.push_back(i);
    for (size_t k : active) {
      const uint64_t ns = Overlap(span.start_ns, span.end_ns, kernels[k].start, kernels[k].end);
      if (ns > 0) out->overlaps.emplace_back(kernels[k].config_id, ns);
    }
  }
  out->first.push_back(static_cast<uint32_t>(out->overlaps.size()));
  out->image = std::move(image);
}

void PmSampleJoin::Credit(const Judged& judged, const std::vector<uint8_t>& stored) {
  Device& device = DeviceOf(judged.image.device_id);
  for (size_t k = 0; k < judged.evaluate.size() && k < stored.size(); ++k) {
    if (stored[k] == 0) continue;
    for (uint32_t o = judged.first[k]; o < judged.first[k + 1]; ++o) {
      const auto& [config_id, ns] = judged.overlaps[o];
      if (config_id > 0 && static_cast<size_t>(config_id) < configs_.size()) configs_[static_cast<size_t>(config_id)].sampled_ns += ns;
    }
    const PmImage::Span& span = judged.image.spans[judged.evaluate[k]];
    // Its kernels may not all be known yet: those that come later are credited on arrival.
    if (span.end_ns > judged.records_through) device.stored_ahead.Add(span.start_ns, span.end_ns);
    changed_ = true;
  }
}

uint64_t PmSampleJoin::Reference(const Device& device) const {
  return std::max(records_through_ == UINT64_MAX ? device.newest_start : records_through_, device.newest_start);
}

void PmSampleJoin::CountBusy(Device* device, uint64_t through) {
  if (through <= device->busy_through) return;
  uint64_t cursor = device->busy_through;
  for (const Kernel& kernel : device->kernels) {  // sorted by start
    if (kernel.start >= through) break;
    const uint64_t start = std::max(kernel.start, cursor), end = std::min(kernel.end, through);
    if (end > start) {
      device->busy_ns += static_cast<int64_t>(end - start);
      cursor = end;
    }
  }
  device->busy_through = through;
  changed_ = true;
}

void PmSampleJoin::Trim() {
  for (auto& [id, device] : devices_) {
    SortKernels(&device);
    const uint64_t reference = Reference(device);
    const uint64_t stale = reference > kKeepNs ? reference - kKeepNs : 0;
    // GPU-busy time up to where every kernel is known.
    CountBusy(&device, std::max(std::min(records_through_, reference), stale));
    // Kernels no sample can need: they end before every sample still to be judged.
    const uint64_t needed_from = std::max(
        device.waiting.empty() ? device.judged_through : device.waiting.front().image.spans.front().start_ns, stale);
    const uint64_t forget_before = std::min(needed_from, device.busy_through);
    std::erase_if(device.kernels, [&](const Kernel& k) { return k.end <= forget_before; });
    device.sorted = device.kernels.size();
    const uint64_t complete = std::max(records_through_ == UINT64_MAX ? reference : records_through_, stale);
    device.stored_ahead.DropBefore(complete);
    device.idle.DropBefore(stale);
  }
}

bool PmSampleJoin::Report(PmWorkReport* report) {
  if (!changed_) return false;
  changed_ = false;
  std::map<uint32_t, PmWorkReport::Device> by_device;
  for (const auto& [id, device] : devices_) {
    PmWorkReport::Device& row = by_device[id];
    row.device_id = id;
    row.busy_ns = device.busy_ns;
  }
  const uint64_t enough = kEnoughSampleIntervals * settings_.interval_ns;
  for (size_t id = 1; id < configs_.size(); ++id) {
    const Config& config = configs_[id];
    if (config.last_end == 0) continue;  // an id no kernel record used
    PmWorkReport::Device& row = by_device[config.device_id];
    row.device_id = config.device_id;
    ++row.configs;
    if (config.sampled_ns >= enough) {
      ++row.satisfied;
      continue;
    }
    const uint64_t reference = Reference(DeviceOf(config.device_id));
    if (config.last_end + static_cast<uint64_t>(settings_.running_window_ns) >= reference) ++row.wanting;
  }
  report->devices.clear();
  for (const auto& [id, row] : by_device) report->devices.push_back(row);
  return true;
}

}  // namespace occ::inj
