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
  const KernelOrigin origin = ClassifyKernel(c.mangled_name, c.name, c.triton_num_warps >= 0);
  const bool nccl = IsCommunicationKernel(c.mangled_name, c.name);
  if (device != nullptr && device->known && device->props.num_sms > 0 &&
      device->props.max_threads_per_sm > 0) {
    const DeviceProps& p = device->props;
    const double grid_per_sm = static_cast<double>(GridBlocks(c)) / p.num_sms;
    w.Key("blocks per SM");
    w.Double(std::round(grid_per_sm * 1000) / 1000);
    w.Key("warps per SM");
    w.Double(std::round(grid_per_sm * static_cast<double>(BlockThreads(c)) / p.warp_size * 1000) / 1000);
    auto params = c.registers_known ? LaunchParamsFor(c, p) : StatusOr<LaunchParams>(BadInput("registers not recorded"));
    StatusOr<OccupancyResult> result = params.ok() ? ComputeOccupancy(p, *params)
                                                   : StatusOr<OccupancyResult>(params.status());
    if (group != nullptr && group->judged()) {
      // The report's figures for the configuration, as `occ-report launches` shows them.
      const occtrace::Occupancy& o = group->occupancy();
      const double effective = std::min<double>(o.active_blocks_per_sm(), grid_per_sm);
      w.Key("est. achieved occupancy %");
      w.Int64(std::llround(100.0 * effective * static_cast<double>(BlockThreads(c)) / p.max_threads_per_sm));
      w.Key("theoretical occupancy %");
      w.Double(std::round(o.theoretical_occupancy_pct() * 100) / 100);
      w.Key("active blocks per SM");
      w.Int(o.active_blocks_per_sm());
      w.Key("limiter");
      w.String(group->limiting_factor().c_str());
    } else if (group != nullptr) {
      w.Key("limiter");
      const std::string why = "not modeled: " + group->not_judged_reason();
      w.String(why.c_str());
    } else if (result.ok()) {
      // Kineto's estimate, from this model's blocks per SM (libkineto computeOccupancyMetrics).
      const double effective = std::min<double>(result->active_blocks_per_sm, grid_per_sm);
      w.Key("est. achieved occupancy %");
      w.Int64(std::llround(100.0 * effective * static_cast<double>(BlockThreads(c)) / p.max_threads_per_sm));
      w.Key("theoretical occupancy %");
      w.Double(std::round(result->theoretical_occupancy_pct * 100) / 100);
      w.Key("active blocks per SM");
      w.Int(result->active_blocks_per_sm);
      const std::string limiter = PrimaryLimiter(*result);
      w.Key("limiter");
      w.String(limiter.c_str());
    } else {
      w.Key("limiter");
      const std::string why = "not modeled: " + result.status().message();
      w.String(why.c_str());
    }
  }
  const std::string owner = origin.library.empty() ? std::string(OriginName(origin.kind))
                                                   : origin.library;
  w.Key("owner");
  w.String(owner.c_str());
  w.Key("origin");
  w.String(std::string(OriginName(origin.kind)).c_str());
  w.Key("tunable");
  w.Bool(origin.tunable);
  // Where a Triton kernel comes from (OCC_TRITON_SOURCE), as the reports write it beside the name.
  if (!c.source_nodes.empty()) {
    w.Key("source nodes");
    w.String(c.source_nodes.c_str());
  }
  if (!c.original_aten.empty()) {
    w.Key("original aten");
    w.String(c.original_aten.c_str());
  }
  if (c.source_nodes.empty() && c.original_aten.empty() && !c.source_file.empty()) {
    // The file name only: never the tracing machine's folders.
    const std::string defined = c.source_file.substr(c.source_file.rfind('/') + 1) +
                                (c.source_line > 0 ? ":" + std::to_string(c.source_line) : "");
    w.Key("defined at");
    w.String(defined.c_str());
  }
  if (nccl) {
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

// One input's timeline into `path`.
Status ExportOne(TraceInput& reader, const std::string& path, const std::string& kernel_regex,
                 const LaunchOccupancy& model, TimelineExportStats* stats) {
  OCC_ASSIGN_OR_RETURN(int64_t base, reader.FirstLaunchStart());
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, Sink::Open(path));
  const occtrace::InputFile& info = reader.info();
  NumberText num;
  sink->Write("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
  sink->Write(DevicePropertiesJson(reader.devices()));
  if (info.rank() >= 0) {
    // HTA finds a file's rank with the pattern "rank":\s+(\d+) (hta/common/trace_file.py),
    // so the space after the colon matters.
    // The backend only where the input says it (torch.profiler's distributedInfo): an occtrace
    // trace does not know it, and a guess would be wrong for gloo jobs.
    sink->Write(",\n  \"distributedInfo\": {");
    if (const std::string backend = reader.DistributedBackend(); !backend.empty()) {
      sink->Write("\"backend\": ");
      sink->Write(JsonString(backend));
      sink->Write(", ");
    }
    sink->Write("\"rank\": ");
    sink->Write(num.Int(info.rank()));
    if (info.world_size() > 0) {
      sink->Write(", \"world_size\": ");
      sink->Write(num.Int(info.world_size()));
    }
    sink->Write("}");
  }
  sink->Write(",\n  \"occtrace\": {\"source\": ");
  sink->Write(JsonString(info.path()));
  sink->Write(", \"format\": ");
  sink->Write(JsonString(info.format()));
  sink->Write("},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
  sink->Write(num.Int(base));
  sink->Write(",\n  \"traceEvents\": [\n");

  bool first = true;
  auto begin_event = [&] {
    if (!first) sink->Write(",\n");
    first = false;
  };
  // Process names for the devices the trace describes; threads (streams) as they appear.
  std::set<int64_t> named_devices;
  auto name_device = [&](int64_t device_id) {
    if (!named_devices.insert(device_id).second) return;
    const TraceDevice* d = FindDevice(reader.devices(), device_id);
    const std::string label = d != nullptr ? DeviceLabel(*d) : "GPU " + std::to_string(device_id);
    begin_event();
    sink->Write("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    sink->Write(num.Int(device_id));
    sink->Write(",\"tid\":0,\"args\":{\"name\":");
    sink->Write(JsonString(label));
    sink->Write("}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
    sink->Write(num.Int(device_id));
    sink->Write(",\"tid\":0,\"args\":{\"sort_index\":");
    sink->Write(num.Int(device_id));
    sink->Write("}}");
  };
  for (const TraceDevice& d : reader.devices()) name_device(d.device_id);
  std::set<std::pair<int64_t, int64_t>> named_streams;

  std::vector<ConfigStats> configs;
  std::vector<std::unique_ptr<ConfigText>> texts;            // by config index (occtrace)
  std::map<std::string, std::unique_ptr<ConfigText>> keyed;  // by configuration (nsys)
  const bool one_config_per_row = reader.one_config_per_launch();
  Status status = reader.ForEachLaunch(
      kernel_regex, 0, &configs, [&](const LaunchRow& row) -> Status {
        if (row.start <= 0) {
          ++stats->skipped_untimed;
          if (one_config_per_row) configs.clear();
          return OkStatus();
        }
        const ConfigStats& c = configs[row.config];
        // An nsys export's listing makes one ConfigStats per row: those are looked up by what
        // they hold and dropped after each row (below), so memory stays per configuration.
        std::unique_ptr<ConfigText>* slot = nullptr;
        if (one_config_per_row) {
          std::string key = KinetoKey(c.device_id, c.name, c.grid, c.block, c.registers_per_thread,
                                      c.dynamic_smem);
          for (int64_t v : {c.static_smem, c.smem_executed, c.smem_limit_config, c.carveout_pct,
                            c.cluster[0], c.cluster[1], c.cluster[2], c.local_mem_per_thread}) {
            key += '|' + std::to_string(v);
          }
          slot = &keyed[key];
        } else {
          if (texts.size() < configs.size()) texts.resize(configs.size());
          slot = &texts[row.config];
        }
        std::unique_ptr<ConfigText>& text = *slot;
        if (!text) {
          text = std::make_unique<ConfigText>(
              MakeConfigText(c, FindDevice(reader.devices(), c.device_id), model.Find(c, reader.devices())));
        }
        if (!named_devices.count(c.device_id)) name_device(c.device_id);
        if (named_streams.emplace(c.device_id, row.stream_id).second) {
          begin_event();
          sink->Write("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
          sink->Write(num.Int(c.device_id));
          sink->Write(",\"tid\":");
          sink->Write(num.Int(row.stream_id));
          sink->Write(",\"args\":{\"name\":\"stream ");
          sink->Write(num.Int(row.stream_id));
          sink->Write("\"}}");
        }
        begin_event();
        sink->Write(text->head);
        sink->Write(num.Int(c.device_id));
        sink->Write(",\"tid\":");
        sink->Write(num.Int(row.stream_id));
        sink->Write(",\"ts\":");
        sink->Write(num.Micros(row.start - base));
        sink->Write(",\"dur\":");
        sink->Write(num.Micros(row.duration));
        sink->Write(",\"args\":{\"device\":");
        sink->Write(num.Int(c.device_id));
        sink->Write(",\"stream\":");
        sink->Write(num.Int(row.stream_id));
        sink->Write(",\"correlation\":");
        sink->Write(num.Int(row.correlation_id));
        sink->Write(',');
        sink->Write(text->args);
        if (row.achieved_pct >= 0) {
          sink->Write(",\"achieved occupancy %\":");
          sink->Write(num.Real(row.achieved_pct, 2));
        }
        sink->Write("}}");
        if (!text->nccl_marker.empty()) {
          begin_event();
          sink->Write("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nccl\",\"name\":");
          sink->Write(text->nccl_marker);
          sink->Write(",\"pid\":");
          sink->Write(num.Int(c.device_id));
          sink->Write(",\"tid\":");
          sink->Write(num.Int(row.stream_id));
          sink->Write(",\"ts\":");
          sink->Write(num.Micros(row.start - base));
          sink->Write('}');
        }
        ++stats->slices;
        if (one_config_per_row) configs.clear();
        return OkStatus();
      });
  OCC_RETURN_IF_ERROR(status);

  // The achieved-occupancy counter track: each PM sample's device-wide warps over its active
  // SM cycles (docs/achieved.md), at the sample's start.
  int64_t last_device = -1;
  double max_warps = 0;
  OCC_RETURN_IF_ERROR(reader.ForEachPmSample([&](const TraceInput::PmSampleRow& s) -> Status {
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
    name_device(s.device_id);
    begin_event();
    sink->Write("{\"ph\":\"C\",\"cat\":\"occupancy\",\"name\":\"achieved occupancy %\",\"pid\":");
    sink->Write(num.Int(s.device_id));
    sink->Write(",\"tid\":0,\"ts\":");
    sink->Write(num.Micros(s.start - base));
    sink->Write(",\"args\":{\"achieved occupancy %\":");
    sink->Write(num.Real(pct, 2));
    sink->Write("}}");
    ++stats->counter_events;
    return OkStatus();
  }));
  sink->Write("\n  ],\n  \"traceName\": ");
  sink->Write(JsonString(path));
  sink->Write("\n}\n");
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
