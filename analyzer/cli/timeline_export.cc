#include "analyzer/cli/timeline_export.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "analyzer/analyze/judge.h"
#include "analyzer/analyze/kernel_origin.h"
#include "analyzer/cli/launch_occupancy.h"
#include "analyzer/model/limiter_words.h"
#include "sqlite/sqlite_db.h"
#include "analyzer/read/registry/input_formats.h"

namespace occ {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The output file: written to a sibling temporary through a 1 MiB buffer, then gzwrite (level
// 1: the export is CPU-bound on compression, and level 1 keeps most of the size gain of JSON's
// repetition) or fwrite, and renamed into place only when complete.
class Sink {
 public:
  static StatusOr<std::unique_ptr<Sink>> Open(const std::string& path) {
    std::unique_ptr<Sink> sink(new Sink());
    sink->path_ = path;
    sink->tmp_ = path + ".occ-report-tmp";
    sink->gzip_ = EndsWith(path, ".gz");
    if (sink->gzip_) {
      sink->gz_ = gzopen(sink->tmp_.c_str(), "wb1");
      if (sink->gz_ == nullptr) return IoError("-o " + path + ": cannot create " + sink->tmp_);
    } else {
      sink->file_ = std::fopen(sink->tmp_.c_str(), "wb");
      if (sink->file_ == nullptr) {
        return IoError("-o " + path + ": cannot create " + sink->tmp_ + ": " + std::strerror(errno));
      }
    }
    sink->buffer_.reserve(kBufferBytes + 4096);
    return sink;
  }
  ~Sink() {
    if (gz_ != nullptr) gzclose(gz_);
    if (file_ != nullptr) std::fclose(file_);
    if (!closed_) std::remove(tmp_.c_str());
  }
  void Write(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kBufferBytes) Flush();
  }
  void Write(char c) { buffer_.push_back(c); }
  Status Close() {
    Flush();
    bool ok = !failed_;
    if (gz_ != nullptr) {
      ok &= gzclose(gz_) == Z_OK;
      gz_ = nullptr;
    }
    if (file_ != nullptr) {
      ok &= std::fclose(file_) == 0;
      file_ = nullptr;
    }
    if (!ok) return IoError("-o " + path_ + ": write failed");
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      return IoError("-o " + path_ + ": cannot replace the file: " + std::strerror(errno));
    }
    closed_ = true;
    return OkStatus();
  }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  void Flush() {
    if (buffer_.empty() || failed_) {
      buffer_.clear();
      return;
    }
    if (gz_ != nullptr) {
      failed_ |= gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) !=
                 static_cast<int>(buffer_.size());
    } else {
      failed_ |= std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size();
    }
    buffer_.clear();
  }
  std::string path_, tmp_;
  bool gzip_ = false;
  gzFile gz_ = nullptr;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool failed_ = false;
  bool closed_ = false;
};

// Integers and microsecond times as JSON number text.
struct NumberText {
  char buf[40];
  std::string_view Int(int64_t v) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return {buf, static_cast<size_t>(end - buf)};
  }
  // ns -> "µs.nnn", as Kineto writes ts and dur: exact, no floating point.
  std::string_view Micros(int64_t ns) {
    char* p = buf;
    if (ns < 0) {
      *p++ = '-';
      ns = -ns;
    }
    auto [end, ec] = std::to_chars(p, buf + sizeof buf - 5, ns / 1000);
    const int64_t frac = ns % 1000;
    end[0] = '.';
    end[1] = static_cast<char>('0' + frac / 100);
    end[2] = static_cast<char>('0' + frac / 10 % 10);
    end[3] = static_cast<char>('0' + frac % 10);
    return {buf, static_cast<size_t>(end + 4 - buf)};
  }
  std::string_view Real(double v, int digits) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
    return {buf, static_cast<size_t>(end - buf)};
  }
};

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

std::string JsonString(const std::string& text) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return buffer.GetString();
}

// NCCL's operation from a kernel name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL" -> "AllReduce".
std::string NcclOperation(const std::string& name) {
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const size_t at = name.find(prefix);
    if (at == std::string::npos) continue;
    const size_t begin = at + std::strlen(prefix);
    size_t end = name.find_first_of("_(<", begin);
    if (end == std::string::npos) end = name.size();
    if (end > begin) return name.substr(begin, end - begin);
  }
  return "collective";
}

// What every launch of one configuration shares, as JSON text written once per configuration:
// `head` runs from the event's start to "pid":, `args` holds the configuration's args without
// braces. NCCL kernels also get a marker name.
struct ConfigText {
  std::string head;
  std::string args;
  std::string nccl_marker;  // "" unless an NCCL kernel: the instant event's name, JSON-quoted
};

// Kineto's occupancy args from blocks per SM (libkineto computeOccupancyMetrics), with the
// theoretical occupancy and limiter they come from.
void WriteOccupancyFigures(const ConfigStats& c, const DeviceProps& p, double grid_per_sm,
                           int active_blocks_per_sm, double theoretical_pct,
                           const std::string& limiter, JsonWriter* w) {
  const double effective = std::min<double>(active_blocks_per_sm, grid_per_sm);
  w->Key("est. achieved occupancy %");
  w->Int64(std::llround(100.0 * effective * static_cast<double>(BlockThreads(c)) / p.max_threads_per_sm));
  w->Key("theoretical occupancy %");
  w->Double(std::round(theoretical_pct * 100) / 100);
  w->Key("active blocks per SM");
  w->Int(active_blocks_per_sm);
  w->Key("limiter");
  w->String(limiter.c_str());
}

// Blocks and warps per SM on the device, then the report's occupancy figures for the
// configuration (`group`), or this model's where the report has none, or why none.
void WriteOccupancyArgs(const ConfigStats& c, const DeviceProps& p, const occtrace::KernelGroup* group,
                        JsonWriter* w) {
  const double grid_per_sm = static_cast<double>(GridBlocks(c)) / p.num_sms;
  w->Key("blocks per SM");
  w->Double(std::round(grid_per_sm * 1000) / 1000);
  w->Key("warps per SM");
  w->Double(std::round(grid_per_sm * static_cast<double>(BlockThreads(c)) / p.warp_size * 1000) / 1000);
  auto params = c.registers_known ? LaunchParamsFor(c, p) : StatusOr<LaunchParams>(BadInput("registers not recorded"));
  StatusOr<OccupancyResult> result = params.ok() ? ComputeOccupancy(p, *params)
                                                 : StatusOr<OccupancyResult>(params.status());
  if (group != nullptr && group->judged()) {
    // The report's figures for the configuration, as `occ-report launches` shows them.
    const occtrace::Occupancy& o = group->occupancy();
    WriteOccupancyFigures(c, p, grid_per_sm, o.active_blocks_per_sm(), o.theoretical_occupancy_pct(),
                          group->limiting_factor(), w);
  } else if (group != nullptr) {
    w->Key("limiter");
    const std::string why = "not modeled: " + group->not_judged_reason();
    w->String(why.c_str());
  } else if (result.ok()) {
    // Kineto's estimate, from this model's blocks per SM.
    WriteOccupancyFigures(c, p, grid_per_sm, result->active_blocks_per_sm,
                          result->theoretical_occupancy_pct, PrimaryLimiter(*result), w);
  } else {
    w->Key("limiter");
    const std::string why = "not modeled: " + result.status().message();
    w->String(why.c_str());
  }
}

// Who owns the kernel and, for Triton's, where it comes from (OCC_TRITON_SOURCE), as the
// reports write it beside the name. The owner rests on what the report's does (ClassifyOwners
// in measured_evidence.cc): the loading library first, then the name.
void WriteOwnerArgs(const ConfigStats& c, JsonWriter* w) {
  const std::string loader = LoaderLabel(c.loader);
  const std::string module_library = LoaderLabel(c.module_library);
  KernelFacts facts;
  facts.mangled = c.mangled_name;
  facts.demangled = c.name;
  facts.has_triton_metadata = c.triton_num_warps >= 0;
  facts.loader = loader;
  facts.module_library = module_library;
  const KernelOrigin origin = ClassifyKernel(facts);
  const std::string owner = OwnerName(origin);
  w->Key("owner");
  w->String(owner.c_str());
  w->Key("origin");
  w->String(std::string(OriginName(origin.kind)).c_str());
  w->Key("tunable");
  w->Bool(origin.tunable);
  if (!c.source_nodes.empty()) {
    w->Key("source nodes");
    w->String(c.source_nodes.c_str());
  }
  if (!c.original_aten.empty()) {
    w->Key("original aten");
    w->String(c.original_aten.c_str());
  }
  if (c.source_nodes.empty() && c.original_aten.empty() && !c.source_file.empty()) {
    // The file name only: never the tracing machine's folders.
    const std::string defined = c.source_file.substr(c.source_file.rfind('/') + 1) +
                                (c.source_line > 0 ? ":" + std::to_string(c.source_line) : "");
    w->Key("defined at");
    w->String(defined.c_str());
  }
}

// `group`: the report's configuration the launches are counted in (launch_occupancy.h), whose
// theoretical occupancy, blocks per SM and limiter the event shows; nullptr: computed here.
ConfigText MakeConfigText(const ConfigStats& c, const TraceDevice* device, const occtrace::KernelGroup* group) {
  ConfigText text;
  text.head = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":" + JsonString(c.name) + ",\"pid\":";
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("registers per thread");
  w.Int64(c.registers_per_thread);
  w.Key("shared memory");  // Kineto's field: static + dynamic
  w.Int64(c.static_smem + c.dynamic_smem);
  w.Key("static shared memory");
  w.Int64(c.static_smem);
  w.Key("dynamic shared memory");
  w.Int64(c.dynamic_smem);
  w.Key("grid");
  w.StartArray();
  for (int64_t v : c.grid) w.Int64(v);
  w.EndArray();
  w.Key("block");
  w.StartArray();
  for (int64_t v : c.block) w.Int64(v);
  w.EndArray();
  if (device != nullptr && device->known && device->props.num_sms > 0 &&
      device->props.max_threads_per_sm > 0) {
    WriteOccupancyArgs(c, device->props, group, &w);
  }
  WriteOwnerArgs(c, &w);
  if (IsCommunicationKernel(c.mangled_name, c.name)) {
    const std::string op = NcclOperation(c.name);
    w.Key("nccl");
    w.String(op.c_str());
    text.nccl_marker = JsonString("NCCL " + op);
  }
  w.EndObject();
  std::string args = buffer.GetString();
  text.args = args.substr(1, args.size() - 2);
  return text;
}

std::string DeviceLabel(const TraceDevice& d) {
  return "GPU " + std::to_string(d.device_id) + (d.props.name.empty() ? "" : ": " + d.props.name);
}

// deviceProperties as Kineto writes them (libkineto DeviceProperties.cpp).
std::string DevicePropertiesJson(const std::vector<TraceDevice>& devices) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartArray();
  for (const TraceDevice& d : devices) {
    const DeviceProps& p = d.props;
    w.StartObject();
    w.Key("id");
    w.Int(d.device_id);
    w.Key("name");
    w.String(p.name.c_str());
    const std::pair<const char*, int64_t> fields[] = {
        {"computeMajor", p.cc_major},
        {"computeMinor", p.cc_minor},
        {"maxThreadsPerBlock", p.max_threads_per_block},
        {"maxThreadsPerMultiprocessor", p.max_threads_per_sm},
        {"regsPerBlock", p.regs_per_block},
        {"warpSize", p.warp_size},
        {"sharedMemPerBlock", p.smem_per_block},
        {"numSms", p.num_sms},
        {"regsPerMultiprocessor", p.regs_per_sm},
        {"sharedMemPerBlockOptin", p.smem_per_block_optin},
        {"sharedMemPerMultiprocessor", p.smem_per_sm}};
    for (const auto& [key, value] : fields) {
      if (value <= 0 && std::strcmp(key, "computeMinor") != 0) continue;
      w.Key(key);
      w.Int64(value);
    }
    w.EndObject();
  }
  w.EndArray();
  return buffer.GetString();
}

// One timeline's JSON: the document around the events, and each event after its separator.
// A device's process and a stream's thread are named before their first event.
class TimelineWriter {
 public:
  TimelineWriter(Sink* sink, const std::vector<TraceDevice>& devices, int64_t base)
      : sink_(sink), devices_(devices), base_(base) {}

  // From the document's start to the open traceEvents array, with the devices' process names.
  void WriteHeader(const TraceInput& reader) {
    const occtrace::InputFile& info = reader.info();
    sink_->Write("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
    sink_->Write(DevicePropertiesJson(devices_));
    if (info.rank() >= 0) {
      // HTA finds a file's rank with the pattern "rank":\s+(\d+) (hta/common/trace_file.py),
      // so the space after the colon matters.
      // The backend only where the input says it (torch.profiler's distributedInfo): an occtrace
      // trace does not know it, and a guess would be wrong for gloo jobs.
      sink_->Write(",\n  \"distributedInfo\": {");
      if (const std::string backend = reader.DistributedBackend(); !backend.empty()) {
        sink_->Write("\"backend\": ");
        sink_->Write(JsonString(backend));
        sink_->Write(", ");
      }
      sink_->Write("\"rank\": ");
      sink_->Write(num_.Int(info.rank()));
      if (info.world_size() > 0) {
        sink_->Write(", \"world_size\": ");
        sink_->Write(num_.Int(info.world_size()));
      }
      sink_->Write("}");
    }
    sink_->Write(",\n  \"occtrace\": {\"source\": ");
    sink_->Write(JsonString(info.path()));
    sink_->Write(", \"format\": ");
    sink_->Write(JsonString(info.format()));
    sink_->Write("},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    sink_->Write(num_.Int(base_));
    sink_->Write(",\n  \"traceEvents\": [\n");
    // Process names for the devices the trace describes; threads (streams) as they appear.
    for (const TraceDevice& d : devices_) NameDevice(d.device_id);
  }

  // One launch's "X" slice, and for an NCCL kernel an instant marker at its start.
  void WriteLaunch(const LaunchRow& row, int64_t device_id, const ConfigText& text) {
    NameDevice(device_id);
    NameStream(device_id, row.stream_id);
    BeginEvent();
    sink_->Write(text.head);
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":");
    sink_->Write(num_.Int(row.stream_id));
    sink_->Write(",\"ts\":");
    sink_->Write(num_.Micros(row.start - base_));
    sink_->Write(",\"dur\":");
    sink_->Write(num_.Micros(row.duration));
    sink_->Write(",\"args\":{\"device\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"stream\":");
    sink_->Write(num_.Int(row.stream_id));
    sink_->Write(",\"correlation\":");
    sink_->Write(num_.Int(row.correlation_id));
    sink_->Write(',');
    sink_->Write(text.args);
    if (row.achieved_pct >= 0) {
      sink_->Write(",\"achieved occupancy %\":");
      sink_->Write(num_.Real(row.achieved_pct, 2));
    }
    sink_->Write("}}");
    if (text.nccl_marker.empty()) return;
    BeginEvent();
    sink_->Write("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nccl\",\"name\":");
    sink_->Write(text.nccl_marker);
    sink_->Write(",\"pid\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":");
    sink_->Write(num_.Int(row.stream_id));
    sink_->Write(",\"ts\":");
    sink_->Write(num_.Micros(row.start - base_));
    sink_->Write('}');
  }

  // One point of the device's "achieved occupancy %" counter track.
  void WriteCounter(int64_t device_id, int64_t start, double pct) {
    NameDevice(device_id);
    BeginEvent();
    sink_->Write("{\"ph\":\"C\",\"cat\":\"occupancy\",\"name\":\"achieved occupancy %\",\"pid\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":0,\"ts\":");
    sink_->Write(num_.Micros(start - base_));
    sink_->Write(",\"args\":{\"achieved occupancy %\":");
    sink_->Write(num_.Real(pct, 2));
    sink_->Write("}}");
  }

  // Closes the events array and the document.
  void WriteFooter(const std::string& path) {
    sink_->Write("\n  ],\n  \"traceName\": ");
    sink_->Write(JsonString(path));
    sink_->Write("\n}\n");
  }

 private:
  void BeginEvent() {
    if (!first_) sink_->Write(",\n");
    first_ = false;
  }

  void NameDevice(int64_t device_id) {
    if (!named_devices_.insert(device_id).second) return;
    const TraceDevice* d = FindDevice(devices_, device_id);
    const std::string label = d != nullptr ? DeviceLabel(*d) : "GPU " + std::to_string(device_id);
    BeginEvent();
    sink_->Write("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":0,\"args\":{\"name\":");
    sink_->Write(JsonString(label));
    sink_->Write("}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":0,\"args\":{\"sort_index\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write("}}");
  }

  void NameStream(int64_t device_id, int64_t stream_id) {
    if (!named_streams_.emplace(device_id, stream_id).second) return;
    BeginEvent();
    sink_->Write("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    sink_->Write(num_.Int(device_id));
    sink_->Write(",\"tid\":");
    sink_->Write(num_.Int(stream_id));
    sink_->Write(",\"args\":{\"name\":\"stream ");
    sink_->Write(num_.Int(stream_id));
    sink_->Write("\"}}");
  }

  Sink* sink_;
  const std::vector<TraceDevice>& devices_;
  const int64_t base_;
  NumberText num_;
  bool first_ = true;
  std::set<int64_t> named_devices_;
  std::set<std::pair<int64_t, int64_t>> named_streams_;
};

// Each configuration's ConfigText, made at its first launch. An nsys export's listing makes one
// ConfigStats per row, dropped after each row: those are looked up by what they hold, so memory
// stays per configuration; an occtrace listing's by their index.
class ConfigTexts {
 public:
  ConfigTexts(const TraceInput& reader, const LaunchOccupancy& model, bool one_config_per_row)
      : reader_(reader), model_(model), one_config_per_row_(one_config_per_row) {}

  const ConfigText& For(const std::vector<ConfigStats>& configs, size_t index) {
    const ConfigStats& c = configs[index];
    std::unique_ptr<ConfigText>* slot = nullptr;
    if (one_config_per_row_) {
      std::string key = KinetoKey(c.device_id, c.name, c.grid, c.block, c.registers_per_thread,
                                  c.dynamic_smem);
      for (int64_t v : {c.static_smem, c.smem_executed, c.smem_limit_config, c.carveout_pct,
                        c.cluster[0], c.cluster[1], c.cluster[2], c.local_mem_per_thread}) {
        key += '|' + std::to_string(v);
      }
      slot = &keyed_[key];
    } else {
      if (by_index_.size() < configs.size()) by_index_.resize(configs.size());
      slot = &by_index_[index];
    }
    std::unique_ptr<ConfigText>& text = *slot;
    if (!text) {
      text = std::make_unique<ConfigText>(MakeConfigText(
          c, FindDevice(reader_.devices(), c.device_id), model_.Find(c, reader_.devices())));
    }
    return *text;
  }

 private:
  const TraceInput& reader_;
  const LaunchOccupancy& model_;
  const bool one_config_per_row_;
  std::vector<std::unique_ptr<ConfigText>> by_index_;          // occtrace
  std::map<std::string, std::unique_ptr<ConfigText>> keyed_;  // nsys
};

// The achieved-occupancy counter track: each PM sample's device-wide warps over its active
// SM cycles (docs/achieved.md), at the sample's start.
Status WriteAchievedCounter(TraceInput& reader, TimelineWriter* timeline, TimelineExportStats* stats) {
  int64_t last_device = -1;
  double max_warps = 0;
  return reader.ForEachPmSample([&](const TraceInput::PmSampleRow& s) -> Status {
    if (s.device_id != last_device) {
      last_device = s.device_id;
      const TraceDevice* d = FindDevice(reader.devices(), s.device_id);
      max_warps = d != nullptr && d->known && d->props.warp_size > 0
                      ? static_cast<double>(d->props.max_threads_per_sm) / d->props.warp_size
                      : 0;
    }
    if (max_warps <= 0 || !(s.sm_cycles_active > 0) || !(s.warps_active >= 0) || s.end <= s.start) {
      return OkStatus();
    }
    const double pct = 100.0 * s.warps_active / (s.sm_cycles_active * max_warps);
    if (!(pct >= 0 && pct <= 100.5)) return OkStatus();
    timeline->WriteCounter(s.device_id, s.start, pct);
    ++stats->counter_events;
    return OkStatus();
  });
}

// One input's timeline into `path`.
Status ExportOne(TraceInput& reader, const std::string& path, const std::string& kernel_regex,
                 const LaunchOccupancy& model, TimelineExportStats* stats) {
  OCC_ASSIGN_OR_RETURN(int64_t base, reader.FirstLaunchStart());
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, Sink::Open(path));
  TimelineWriter timeline(sink.get(), reader.devices(), base);
  timeline.WriteHeader(reader);
  std::vector<ConfigStats> configs;
  const bool one_config_per_row = reader.one_config_per_launch();
  ConfigTexts texts(reader, model, one_config_per_row);
  Status status = reader.ForEachLaunch(
      kernel_regex, 0, &configs, [&](const LaunchRow& row) -> Status {
        if (row.start <= 0) {
          ++stats->skipped_untimed;
        } else {
          const ConfigText& text = texts.For(configs, row.config);
          timeline.WriteLaunch(row, configs[row.config].device_id, text);
          ++stats->slices;
        }
        if (one_config_per_row) configs.clear();
        return OkStatus();
      });
  OCC_RETURN_IF_ERROR(status);
  OCC_RETURN_IF_ERROR(WriteAchievedCounter(reader, &timeline, stats));
  timeline.WriteFooter(path);
  OCC_RETURN_IF_ERROR(sink->Close());
  ++stats->files;
  return OkStatus();
}

std::string BaseName(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* ext : {".json.gz", ".json", ".sqlite", ".db", ".sql", ".gz"}) {
    if (EndsWith(name, ext) && name.size() > std::strlen(ext)) {
      name.resize(name.size() - std::strlen(ext));
      break;
    }
  }
  return name;
}

}  // namespace

StatusOr<TimelineExportStats> ExportTimeline(const std::vector<std::string>& inputs,
                                             const std::string& output,
                                             const std::string& kernel_regex, bool force) {
  if (output.empty()) {
    return InvalidArgument("--format trace needs -o FILE (.json, or .json.gz for gzip)");
  }
  if (!kernel_regex.empty()) OCC_RETURN_IF_ERROR(sql::ValidateRegex(kernel_regex));
  std::vector<std::string> paths;
  if (inputs.size() == 1) {
    paths.push_back(output);
  } else {
    struct stat st {};
    if (stat(output.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      return InvalidArgument("-o " + output + ": with several inputs, -o names a directory "
                             "(one timeline per input), and this is a file");
    }
    if (stat(output.c_str(), &st) != 0 && mkdir(output.c_str(), 0777) != 0) {
      return IoError("-o " + output + ": cannot create the directory: " + std::strerror(errno));
    }
    std::set<std::string> names;
    for (const std::string& input : inputs) {
      const std::string name = BaseName(input) + ".json.gz";
      if (!names.insert(name).second) {
        return InvalidArgument("-o " + output + ": two inputs would both be written to " + name +
                               "; export them one at a time");
      }
      paths.push_back((output.back() == '/' ? output : output + "/") + name);
    }
  }
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return InvalidArgument("-o " + path + ": is a directory");
      if (!force) return InvalidArgument("-o " + path + ": file exists (use --force to replace it)");
    }
  }
  TimelineExportStats stats;
  std::vector<std::unique_ptr<AnalysisInput>> readers;
  std::vector<TraceInput*> reader_list;
  for (size_t i = 0; i < inputs.size(); ++i) {
    OCC_ASSIGN_OR_RETURN(std::unique_ptr<AnalysisInput> reader,
                         OpenInput(inputs[i], static_cast<int>(i)));
    // A summary keeps launches summed per configuration: no row per launch to draw.
    if (reader->AsTrace() == nullptr) {
      return BadInput(inputs[i] + ": a trace summary has no per-launch rows; export the trace it "
                      "summarizes");
    }
    reader_list.push_back(reader->AsTrace());
    readers.push_back(std::move(reader));
  }
  // Every kernel event carries the report's figures for its configuration (launch_occupancy.h).
  OCC_ASSIGN_OR_RETURN(LaunchOccupancy model, LaunchOccupancy::Build(reader_list));
  for (size_t i = 0; i < readers.size(); ++i) {
    OCC_RETURN_IF_ERROR(ExportOne(*reader_list[i], paths[i], kernel_regex, model, &stats));
  }
  return stats;
}

}  // namespace occ
