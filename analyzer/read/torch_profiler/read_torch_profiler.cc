// torch.profiler's Chrome-trace JSON (`prof.export_chrome_trace()`, `tensorboard_trace_handler`),
// plain or gzip-compressed. Takes a path; gives an in-memory database in occtrace's trace schema
// (schema/trace_schema.sql), which the occtrace reader then reads like a recorded trace:
//   "deviceProperties"            -> TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE, OCC_DEVICE
//   "distributedInfo"             -> OCC_META rank, world_size (rank_source "torch.profiler")
//   "traceEvents", "cat":"kernel" -> OCC_KERNEL_CONFIG (one row per configuration), OCC_LAUNCH
// Kineto's kernel events (libkineto CuptiActivity.h, visitTypedMetadata) carry in "args":
// device, stream, correlation, "registers per thread", "shared memory" (static + dynamic
// summed), grid, block, "est. achieved occupancy %" and, in newer versions, an "occupancy"
// dict (activeBlocksPerMultiprocessor, limitingFactors); ts and dur are microseconds with
// nanosecond decimals, ts relative to "baseTimeNanoseconds" where the file has it.
//
// Parsed with RapidJSON's SAX reader in iterative mode (no recursion, so deep nesting cannot
// exhaust the stack) straight from zlib's gzread (which reads uncompressed files unchanged):
// the trace is never held in memory as text or as a tree. Numbers are taken as text and
// converted here, exactly (ts "1234.567" -> 1234567 ns) and with range checks.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "kTraceSchemaSql.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/torch_profiler/torch_profiler_reader.h"
#include "schema/meta_keys.h"

namespace occ {
namespace {

// A RapidJSON input stream over gzread (Peek/Take/Tell are all the reader uses).
class GzStream {
 public:
  using Ch = char;
  explicit GzStream(gzFile file) : file_(file) { Fill(); }
  Ch Peek() const { return pos_ < end_ ? buffer_[pos_] : '\0'; }
  Ch Take() {
    if (pos_ >= end_) return '\0';
    const Ch c = buffer_[pos_++];
    if (pos_ == end_) Fill();
    return c;
  }
  size_t Tell() const { return consumed_ + pos_; }
  // Unused by the reader; required by the concept.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }
  // gzread's error, if reading stopped on one (a truncated or corrupt .gz).
  std::string error() const { return error_; }

 private:
  void Fill() {
    consumed_ += end_;
    pos_ = 0;
    end_ = 0;
    const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      error_ = message != nullptr ? message : "read error";
      return;
    }
    end_ = static_cast<size_t>(n);
  }
  gzFile file_;
  std::array<char, 1 << 16> buffer_{};
  size_t pos_ = 0, end_ = 0, consumed_ = 0;
  std::string error_;
};

// A JSON number as text -> nanoseconds from microseconds ("12.345" -> 12345), exactly; nullopt
// for what is not a plain decimal in range (exponents, NaN-like text, > 2^62).
std::optional<int64_t> MicrosToNanos(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 15) return std::nullopt;
  int64_t us = 0;
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), us);
  if (ec != std::errc() || end != whole.data() + whole.size()) return std::nullopt;
  int64_t ns = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    if (frac[i] < '0' || frac[i] > '9') return std::nullopt;  // an exponent or junk
    if (i < 3) ns = ns * 10 + (frac[i] - '0');
  }
  for (size_t i = frac.size(); i < 3; ++i) ns *= 10;
  const int64_t total = us * 1000 + ns;
  return negative ? -total : total;
}

// An integer JSON number as text; nullopt for fractions, exponents and out-of-range values.
std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A number as text -> double when finite and plain (Kineto writes "blocks per SM": 0.5).
std::optional<double> ParseReal(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > -1e300 && value < 1e300)) {
    return std::nullopt;
  }
  return value;
}

// A scalar as the handler saw it.
struct Scalar {
  enum Kind { kNone, kNumber, kString, kOther } kind = kNone;
  std::string text;
};

// One event of "traceEvents", with the fields a kernel needs; wrong types are kept as found and
// judged only if the event turns out to be a kernel (other events may hold anything).
struct Event {
  Scalar ph, cat, name, pid, tid, ts, dur;
  Scalar device, stream, correlation, registers, shared_memory, est_occupancy, context;
  // occ-report's own export (timeline_export.h) keeps the two apart; Kineto sums them.
  Scalar static_smem, dynamic_smem;
  std::vector<Scalar> grid, block;
  bool grid_not_array = false, block_not_array = false;
  Scalar active_blocks, limiting_factors;
  void Clear() { *this = Event(); }
};

struct DeviceRow {
  std::map<std::string, Scalar> fields;
};

enum class Ctx : uint8_t {
  kSkip,      // inside something this reader does not read
  kRoot,      // the top-level object
  kEvents,    // "traceEvents" array
  kEvent,     // one event object
  kArgs,      // its "args"
  kGrid,      // args.grid
  kBlock,     // args.block
  kOccupancy, // args.occupancy (Kineto's occupancy dict)
  kDevices,   // "deviceProperties" array
  kDevice,    // one device object
  kDist,      // "distributedInfo"
};

// SAX handler: tracks where it is with a stack of contexts and hands each complete event and
// device to the loader. Returns false (stopping the parse) only through `failure`.
class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  std::function<bool(const Event&, int64_t index)> on_event;
  std::vector<DeviceRow> devices;
  std::map<std::string, Scalar> distributed;
  Scalar base_time_ns;
  bool saw_root_object = false;
  bool saw_trace_events = false;
  std::string failure;  // set by on_event when it stops the parse

  bool Null() { return Value({Scalar::kOther, "null"}); }
  bool Bool(bool b) { return Value({Scalar::kOther, b ? "true" : "false"}); }
  bool Int(int) { return true; }  // numbers arrive as RawNumber (kParseNumbersAsStringsFlag)
  bool RawNumber(const char* str, rapidjson::SizeType length, bool) {
    return Value({Scalar::kNumber, std::string(str, length)});
  }
  bool String(const char* str, rapidjson::SizeType length, bool) {
    return Value({Scalar::kString, std::string(str, length)});
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    key_.assign(str, length);
    return true;
  }
  bool StartObject() { return Start(true); }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool StartArray() { return Start(false); }
  bool EndArray(rapidjson::SizeType) { return End(); }

 private:
  Ctx Top() const { return stack_.empty() ? Ctx::kSkip : stack_.back(); }

  bool Start(bool object) {
    Ctx child = Ctx::kSkip;
    const Ctx parent = Top();
    if (stack_.empty()) {
      child = object ? Ctx::kRoot : Ctx::kSkip;
      saw_root_object = object;
      if (!object) {
        failure = "the top level is an array, not a torch.profiler trace object";
        return false;
      }
    } else if (parent == Ctx::kRoot) {
      if (key_ == "traceEvents" && !object) {
        child = Ctx::kEvents;
        saw_trace_events = true;
      } else if (key_ == "deviceProperties" && !object) {
        child = Ctx::kDevices;
      } else if (key_ == "distributedInfo" && object) {
        child = Ctx::kDist;
      }
    } else if (parent == Ctx::kEvents) {
      if (object) {
        child = Ctx::kEvent;
        event_.Clear();
      }
    } else if (parent == Ctx::kEvent) {
      if (key_ == "args" && object) child = Ctx::kArgs;
      MarkWrongType();
    } else if (parent == Ctx::kArgs) {
      if (key_ == "grid") {
        child = object ? Ctx::kSkip : Ctx::kGrid;
        event_.grid_not_array = object;
      } else if (key_ == "block") {
        child = object ? Ctx::kSkip : Ctx::kBlock;
        event_.block_not_array = object;
      } else if (key_ == "occupancy" && object) {
        child = Ctx::kOccupancy;
      } else {
        MarkWrongType();
      }
    } else if (parent == Ctx::kDevices) {
      if (object) {
        child = Ctx::kDevice;
        devices.emplace_back();
      }
    } else if (parent == Ctx::kGrid || parent == Ctx::kBlock) {
      (parent == Ctx::kGrid ? event_.grid : event_.block).push_back({Scalar::kOther, "nested"});
    }
    stack_.push_back(child);
    return true;
  }

  bool End() {
    const Ctx ended = Top();
    if (!stack_.empty()) stack_.pop_back();
    if (ended == Ctx::kEvent) {
      if (!on_event(event_, events_++)) return false;
    }
    return true;
  }

  // An object or array where an event field or kernel arg holds a scalar.
  void MarkWrongType() {
    if (Scalar* field = Field()) *field = {Scalar::kOther, "an object or array"};
  }

  // The event or args field the current key names, if the reader reads it.
  Scalar* Field() {
    const Ctx ctx = Top();
    if (ctx == Ctx::kEvent) {
      static const std::pair<const char*, Scalar Event::*> kFields[] = {
          {"ph", &Event::ph},   {"cat", &Event::cat}, {"name", &Event::name}, {"pid", &Event::pid},
          {"tid", &Event::tid}, {"ts", &Event::ts},   {"dur", &Event::dur}};
      for (const auto& [name, member] : kFields) {
        if (key_ == name) return &(event_.*member);
      }
    } else if (ctx == Ctx::kArgs) {
      static const std::pair<const char*, Scalar Event::*> kArgs[] = {
          {"device", &Event::device},
          {"stream", &Event::stream},
          {"correlation", &Event::correlation},
          {"registers per thread", &Event::registers},
          {"shared memory", &Event::shared_memory},
          {"est. achieved occupancy %", &Event::est_occupancy},
          {"context", &Event::context},
          {"static shared memory", &Event::static_smem},
          {"dynamic shared memory", &Event::dynamic_smem}};
      for (const auto& [name, member] : kArgs) {
        if (key_ == name) return &(event_.*member);
      }
    } else if (ctx == Ctx::kOccupancy) {
      if (key_ == "activeBlocksPerMultiprocessor") return &event_.active_blocks;
      if (key_ == "limitingFactors") return &event_.limiting_factors;
    }
    return nullptr;
  }

  bool Value(Scalar value) {
    switch (Top()) {
      case Ctx::kRoot:
        if (key_ == "baseTimeNanoseconds") base_time_ns = std::move(value);
        break;
      case Ctx::kGrid:
        event_.grid.push_back(std::move(value));
        break;
      case Ctx::kBlock:
        event_.block.push_back(std::move(value));
        break;
      case Ctx::kDevice:
        devices.back().fields[key_] = std::move(value);
        break;
      case Ctx::kDist:
        distributed[key_] = std::move(value);
        break;
      default:
        if (Scalar* field = Field()) *field = std::move(value);
        break;
    }
    return true;
  }

  std::vector<Ctx> stack_;
  std::string key_;
  Event event_;
  int64_t events_ = 0;
};

bool IsKernelEvent(const Event& e) {
  if (e.ph.kind != Scalar::kString || e.ph.text != "X" || e.cat.kind != Scalar::kString) {
    return false;
  }
  // Kineto writes "kernel"; PyTorch before 1.9 wrote "Kernel".
  return e.cat.text == "kernel" || e.cat.text == "Kernel";
}

// A configuration's identity: what the occupancy model and the report group on.
using ConfigKey = std::tuple<int64_t, std::string, std::array<int64_t, 3>, std::array<int64_t, 3>,
                             int64_t, int64_t, int64_t>;

struct LoadState {
  std::string path;
  sql::Db* db = nullptr;
  std::optional<sql::Stmt> insert_launch, insert_config, insert_string;
  std::map<ConfigKey, int64_t> configs;
  std::map<std::string, int64_t> strings;
  int64_t base_ns = 0;
  int64_t summed_smem = 0;  // kernels with only Kineto's summed "shared memory"
  std::map<std::string, KinetoEstimate>* estimates = nullptr;
};

StatusOr<int64_t> StringId(LoadState* s, const std::string& text) {
  auto it = s->strings.find(text);
  if (it != s->strings.end()) return it->second;
  const int64_t id = static_cast<int64_t>(s->strings.size()) + 1;
  OCC_RETURN_IF_ERROR(s->insert_string->Reset());
  OCC_RETURN_IF_ERROR(s->insert_string->BindInt64(1, id));
  OCC_RETURN_IF_ERROR(s->insert_string->BindText(2, text));
  OCC_RETURN_IF_ERROR(s->insert_string->Step().status());
  s->strings.emplace(text, id);
  return id;
}

// An integer field of a kernel event, in [min, max]; `fallback` when absent and not required.
// BadInput naming the event (`where`) and the field.
StatusOr<int64_t> IntegerField(const std::string& where, const Scalar& v, const char* field,
                               bool required, int64_t fallback, int64_t min, int64_t max) {
  if (v.kind == Scalar::kNone && !required) return fallback;
  if (v.kind == Scalar::kNone) return BadInput(where + ": no " + field);
  std::optional<int64_t> value;
  if (v.kind == Scalar::kNumber) value = ParseInteger(v.text);
  if (!value) {
    return BadInput(where + ": " + field + " is not an integer (" + AbbrevOneLine(v.text, 40) + ")");
  }
  if (*value < min || *value > max) {
    return BadInput(where + ": " + field + " " + std::to_string(*value) + " is out of range");
  }
  return *value;
}

// args.grid or args.block: an array of 3 non-negative integers.
StatusOr<std::array<int64_t, 3>> DimsField(const std::string& where, const std::vector<Scalar>& values,
                                           bool not_array, const char* field) {
  if (not_array || values.size() != 3) {
    return BadInput(where + ": args." + field + " is not an array of 3 integers");
  }
  std::array<int64_t, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    OCC_ASSIGN_OR_RETURN(out[i], IntegerField(where, values[i], field, true, 0, 0, INT32_MAX));
  }
  return out;
}

// What a kernel event records, checked.
struct KernelFields {
  int64_t ts = 0, dur = 0;  // ns from the trace's origin
  int64_t device = 0, stream = 0, correlation = 0, context = 0, registers = 0;
  int64_t static_smem = 0, dynamic_smem = 0;
  std::array<int64_t, 3> grid{}, block{};
};

StatusOr<KernelFields> ParseKernel(LoadState* s, const Event& e, const std::string& where) {
  if (e.name.kind != Scalar::kString) return BadInput(where + ": name is not a string");
  if (e.ts.kind != Scalar::kNumber || e.dur.kind != Scalar::kNumber) {
    return BadInput(where + ": ts or dur is missing or not a number");
  }
  const std::optional<int64_t> ts = MicrosToNanos(e.ts.text);
  const std::optional<int64_t> dur = MicrosToNanos(e.dur.text);
  // ~1.1 years of microseconds past an epoch-based base: beyond that a value is not a time.
  constexpr int64_t kMaxNs = int64_t{1} << 62;
  if (!ts || *ts < -kMaxNs || *ts > kMaxNs) {
    return BadInput(where + ": ts " + AbbrevOneLine(e.ts.text, 40) + " is not a time in microseconds");
  }
  if (!dur || *dur < 0 || *dur > int64_t{1'000'000'000'000'000}) {
    return BadInput(where + ": dur " + AbbrevOneLine(e.dur.text, 40) + " is not a duration in microseconds");
  }
  KernelFields k;
  k.ts = *ts;
  k.dur = *dur;
  auto integer = [&](const Scalar& v, const char* field, bool required, int64_t fallback,
                     int64_t min, int64_t max) {
    return IntegerField(where, v, field, required, fallback, min, max);
  };
  OCC_ASSIGN_OR_RETURN(k.device, integer(e.device, "args.device", true, 0, 0, INT32_MAX));
  OCC_ASSIGN_OR_RETURN(k.stream, integer(e.stream, "args.stream", false, 0, INT64_MIN, INT64_MAX));
  OCC_ASSIGN_OR_RETURN(k.correlation,
                       integer(e.correlation, "args.correlation", false, 0, INT64_MIN, INT64_MAX));
  OCC_ASSIGN_OR_RETURN(k.context, integer(e.context, "args.context", false, 0, INT64_MIN, INT64_MAX));
  OCC_ASSIGN_OR_RETURN(k.registers,
                       integer(e.registers, "args.\"registers per thread\"", true, 0, 0, 65536));
  OCC_ASSIGN_OR_RETURN(int64_t smem,
                       integer(e.shared_memory, "args.\"shared memory\"", true, 0, 0, INT32_MAX));
  k.dynamic_smem = smem;
  if (e.static_smem.kind == Scalar::kNone || e.dynamic_smem.kind == Scalar::kNone) {
    ++s->summed_smem;
  } else {
    OCC_ASSIGN_OR_RETURN(k.static_smem,
                         integer(e.static_smem, "args.\"static shared memory\"", true, 0, 0, INT32_MAX));
    OCC_ASSIGN_OR_RETURN(k.dynamic_smem,
                         integer(e.dynamic_smem, "args.\"dynamic shared memory\"", true, 0, 0, INT32_MAX));
  }
  OCC_ASSIGN_OR_RETURN(k.grid, DimsField(where, e.grid, e.grid_not_array, "grid"));
  OCC_ASSIGN_OR_RETURN(k.block, DimsField(where, e.block, e.block_not_array, "block"));
  return k;
}

// Kineto's own estimate, kept to compare with the model's (the first launch's: it depends only
// on the configuration and the device).
void KeepKinetoEstimate(LoadState* s, const Event& e, const KernelFields& k) {
  KinetoEstimate estimate;
  if (e.est_occupancy.kind == Scalar::kNumber) {
    if (auto v = ParseReal(e.est_occupancy.text); v && *v >= 0 && *v <= 1000) estimate.est_pct = *v;
  }
  if (e.active_blocks.kind == Scalar::kNumber) {
    if (auto v = ParseInteger(e.active_blocks.text); v && *v >= 0 && *v <= 4096) {
      estimate.active_blocks = static_cast<int>(*v);
    }
  }
  if (e.limiting_factors.kind == Scalar::kString) {
    estimate.limiting_factors = AbbrevOneLine(e.limiting_factors.text, 40);
  }
  if (estimate.est_pct >= 0) {
    (*s->estimates)[KinetoKey(k.device, e.name.text, k.grid.data(), k.block.data(), k.registers,
                              k.dynamic_smem)] = estimate;
  }
}

// The configuration row of the kernel's launch, inserted at its first launch.
StatusOr<int64_t> ConfigId(LoadState* s, const Event& e, const KernelFields& k) {
  const ConfigKey key{k.device, e.name.text, k.grid, k.block, k.registers, k.static_smem, k.dynamic_smem};
  auto found = s->configs.find(key);
  if (found != s->configs.end()) return found->second;
  const int64_t config_id = static_cast<int64_t>(s->configs.size()) + 1;
  OCC_ASSIGN_OR_RETURN(int64_t name_id, StringId(s, e.name.text));
  OCC_ASSIGN_OR_RETURN(int64_t empty_id, StringId(s, ""));
  sql::Stmt& c = *s->insert_config;
  OCC_RETURN_IF_ERROR(c.Reset());
  int col = 1;
  for (int64_t v : {config_id, k.device, k.context, name_id, name_id, empty_id, k.registers, k.grid[0],
                    k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.static_smem, k.dynamic_smem,
                    // Kineto sums static and dynamic shared memory; a kernel can only have
                    // launched above the default 48 KiB per block by opting in, so such a
                    // launch is read as an opted-in one.
                    int64_t{k.static_smem + k.dynamic_smem > 48 * 1024 ? 1 : 0}}) {
    OCC_RETURN_IF_ERROR(c.BindInt64(col++, v));
  }
  OCC_RETURN_IF_ERROR(c.Step().status());
  s->configs.emplace(key, config_id);
  KeepKinetoEstimate(s, e, k);
  return config_id;
}

// Kernel event `index` into the database; BadInput naming the event and field when it is not
// a kernel record this reader can use.
Status AddKernel(LoadState* s, const Event& e, int64_t index) {
  const std::string where = s->path + ": traceEvents[" + std::to_string(index) + "] (kernel '" +
                            AbbrevOneLine(e.name.text, 60) + "')";
  OCC_ASSIGN_OR_RETURN(const KernelFields k, ParseKernel(s, e, where));
  OCC_ASSIGN_OR_RETURN(const int64_t config_id, ConfigId(s, e, k));
  int64_t start = 0;
  if (__builtin_add_overflow(s->base_ns, k.ts, &start) || start < 0) {
    return BadInput(where + ": ts " + AbbrevOneLine(e.ts.text, 40) +
                    " lies before the trace's time origin");
  }
  sql::Stmt& l = *s->insert_launch;
  OCC_RETURN_IF_ERROR(l.Reset());
  OCC_RETURN_IF_ERROR(l.BindInt64(1, start));
  OCC_RETURN_IF_ERROR(l.BindInt64(2, k.dur));
  OCC_RETURN_IF_ERROR(l.BindInt64(3, config_id));
  OCC_RETURN_IF_ERROR(l.BindInt64(4, k.stream));
  OCC_RETURN_IF_ERROR(l.BindInt64(5, k.correlation));
  OCC_RETURN_IF_ERROR(l.Step().status());
  return OkStatus();
}

// deviceProperties[] -> the device tables, named as Nsight Systems names them.
Status AddDevices(LoadState* s, const std::vector<DeviceRow>& devices) {
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt gpu,
      s->db->Prepare("INSERT INTO TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, "
                     "maxRegistersPerBlock, maxRegistersPerSm, threadsPerWarp, maxThreadsPerBlock, "
                     "maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, totalMemory, cuDevice) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?1)"));
  OCC_ASSIGN_OR_RETURN(sql::Stmt cuda, s->db->Prepare(
      "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, numMultiprocessors) VALUES (?1, ?1, ?2)"));
  OCC_ASSIGN_OR_RETURN(sql::Stmt occ, s->db->Prepare(
      "INSERT INTO OCC_DEVICE (gpuId, maxThreadsPerMultiprocessor) VALUES (?1, ?2)"));
  std::set<int64_t> seen;
  for (size_t n = 0; n < devices.size(); ++n) {
    const auto& f = devices[n].fields;
    // A field the file lacks, or holds as something other than a sane integer, is NULL: the
    // device reader then takes it from the architecture table and says so.
    auto get = [&](const char* name) -> std::optional<int64_t> {
      auto it = f.find(name);
      if (it == f.end() || it->second.kind != Scalar::kNumber) return std::nullopt;
      auto v = ParseInteger(it->second.text);
      if (!v || *v < 0) return std::nullopt;
      return v;
    };
    const std::optional<int64_t> id = get("id");
    if (!id || *id > INT32_MAX || !seen.insert(*id).second) continue;
    auto bind = [](sql::Stmt& stmt, int col, std::optional<int64_t> v) {
      return v ? stmt.BindInt64(col, *v) : stmt.BindNull(col);
    };
    OCC_RETURN_IF_ERROR(gpu.Reset());
    OCC_RETURN_IF_ERROR(gpu.BindInt64(1, *id));
    auto name = f.find("name");
    if (name != f.end() && name->second.kind == Scalar::kString) {
      OCC_RETURN_IF_ERROR(gpu.BindText(2, name->second.text));
    } else {
      OCC_RETURN_IF_ERROR(gpu.BindNull(2));
    }
    int col = 3;
    for (const char* field : {"numSms", "computeMajor", "computeMinor", "regsPerBlock",
                              "regsPerMultiprocessor", "warpSize", "maxThreadsPerBlock",
                              "sharedMemPerBlock", "sharedMemPerBlockOptin",
                              "sharedMemPerMultiprocessor", "totalGlobalMem"}) {
      OCC_RETURN_IF_ERROR(bind(gpu, col++, get(field)));
    }
    OCC_RETURN_IF_ERROR(gpu.Step().status());
    OCC_RETURN_IF_ERROR(cuda.Reset());
    OCC_RETURN_IF_ERROR(cuda.BindInt64(1, *id));
    OCC_RETURN_IF_ERROR(bind(cuda, 2, get("numSms")));
    OCC_RETURN_IF_ERROR(cuda.Step().status());
    OCC_RETURN_IF_ERROR(occ.Reset());
    OCC_RETURN_IF_ERROR(occ.BindInt64(1, *id));
    OCC_RETURN_IF_ERROR(bind(occ, 2, get("maxThreadsPerMultiprocessor")));
    OCC_RETURN_IF_ERROR(occ.Step().status());
  }
  return OkStatus();
}

// `name` must be declared in schema/meta_keys.h as written by the torch.profiler import, or this
// does not compile.
Status AddMeta(sql::Db& db, meta::CheckedMetaKey<meta::kTorchImport> name, const std::string& value) {
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db.Prepare("INSERT OR REPLACE INTO OCC_META VALUES (?1, ?2)"));
  OCC_RETURN_IF_ERROR(stmt.BindText(1, name.name));
  OCC_RETURN_IF_ERROR(stmt.BindText(2, value));
  return stmt.Step().status();
}

// The statements the import inserts with, prepared once.
Status PrepareInserts(sql::Db& db, LoadState* state) {
  OCC_ASSIGN_OR_RETURN(state->insert_launch, db.Prepare(
      "INSERT INTO OCC_LAUNCH (start, duration, configId, streamId, correlationId) "
      "VALUES (?1, ?2, ?3, ?4, ?5)"));
  OCC_ASSIGN_OR_RETURN(state->insert_string, db.Prepare("INSERT INTO StringIds VALUES (?1, ?2)"));
  // Columns Kineto does not record are 0 as the schema documents them (not reported / none):
  // no executed carveout, no carveout request, no cluster, no graph.
  OCC_ASSIGN_OR_RETURN(state->insert_config, db.Prepare(
      "INSERT INTO OCC_KERNEL_CONFIG (id, deviceId, contextId, demangledName, shortName, "
      "mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
      "staticSharedMemory, dynamicSharedMemory, sharedMemoryLimitConfig, launchType, cacheConfig, "
      "localMemoryPerThread, sharedMemoryExecuted, sharedMemoryRequestedPercentage, graphId, "
      "graphNodeId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, "
      "maxPotentialClusterSize, maxActiveClusters, isDeviceLaunched) VALUES (?1, ?2, ?3, ?4, ?5, "
      "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 0, 0, 0, 0, NULL, 0, 0, 1, 1, 1, 0, 0, "
      "0, 0)"));
  return OkStatus();
}

// Parses the file, each kernel event into the database as it is read. BadInput for a file that
// is not a readable torch.profiler trace, naming where it fails.
Status ParseTrace(const std::string& path, Handler* handler, LoadState* state) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return BadInput(path + ": cannot open for reading: " + std::strerror(errno));
  gzbuffer(file, 1 << 17);
  Status event_status = OkStatus();
  handler->on_event = [&](const Event& e, int64_t index) {
    if (!IsKernelEvent(e)) return true;
    event_status = AddKernel(state, e, index);
    return event_status.ok();
  };
  // The base time must be known before the first kernel: Kineto writes it before traceEvents.
  // A file that gives it later has relative times read as absolute, which changes no duration.
  bool base_checked = false;
  auto check_base = [&]() -> Status {
    if (base_checked || handler->base_time_ns.kind == Scalar::kNone) return OkStatus();
    base_checked = true;
    auto v = handler->base_time_ns.kind == Scalar::kNumber ? ParseInteger(handler->base_time_ns.text)
                                                           : std::nullopt;
    if (!v || *v < 0 || *v > (int64_t{1} << 62)) {
      return BadInput(path + ": baseTimeNanoseconds is not a time in nanoseconds (" +
                      AbbrevOneLine(handler->base_time_ns.text, 40) + ")");
    }
    state->base_ns = *v;
    return OkStatus();
  };
  auto wrapped = handler->on_event;
  handler->on_event = [&](const Event& e, int64_t index) {
    event_status = check_base();
    if (!event_status.ok()) return false;
    return wrapped(e, index);
  };
  GzStream stream(file);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseValidateEncodingFlag;
  const rapidjson::ParseResult parsed = reader.Parse<kFlags>(stream, *handler);
  const std::string gz_error = stream.error();
  gzclose(file);
  if (!event_status.ok()) return event_status;
  if (!handler->failure.empty()) return BadInput(path + ": " + handler->failure);
  if (!gz_error.empty()) return BadInput(path + ": cannot decompress: " + gz_error);
  if (parsed.IsError()) {
    const bool at_end = parsed.Code() == rapidjson::kParseErrorDocumentEmpty ||
                        stream.Peek() == '\0';
    return BadInput(path + ": " + (at_end && parsed.Offset() > 0 ? "truncated JSON" : "not valid JSON") +
                    " at byte " + std::to_string(parsed.Offset()) + ": " +
                    rapidjson::GetParseError_En(parsed.Code()));
  }
  OCC_RETURN_IF_ERROR(check_base());
  if (!handler->saw_trace_events) {
    return BadInput(path + ": JSON without a \"traceEvents\" array: not a torch.profiler trace");
  }
  return OkStatus();
}

// OCC_META: what the import knows of the run, and the rank and backend distributedInfo names.
Status AddImportMeta(sql::Db& db, const Handler& handler, int64_t summed_smem) {
  OCC_RETURN_IF_ERROR(AddMeta(db, "schema_version", std::to_string(kSupportedTraceSchemaVersion)));
  OCC_RETURN_IF_ERROR(AddMeta(db, "trace_mode", "full"));
  OCC_RETURN_IF_ERROR(AddMeta(db, "torch_summed_shared_memory", std::to_string(summed_smem)));
  // Kineto records no hardware counters: the report says why achieved occupancy is absent.
  OCC_RETURN_IF_ERROR(AddMeta(db, "achieved_status",
                              "Kineto records no hardware counters in torch.profiler traces"));
  auto dist_int = [&](const char* name) -> std::optional<int64_t> {
    auto it = handler.distributed.find(name);
    if (it == handler.distributed.end() || it->second.kind != Scalar::kNumber) return std::nullopt;
    auto v = ParseInteger(it->second.text);
    if (!v || *v < 0 || *v > INT32_MAX) return std::nullopt;
    return v;
  };
  if (auto rank = dist_int("rank")) {
    OCC_RETURN_IF_ERROR(AddMeta(db, "rank", std::to_string(*rank)));
    OCC_RETURN_IF_ERROR(AddMeta(db, "rank_source", "torch.profiler distributedInfo"));
    if (auto world = dist_int("world_size")) {
      OCC_RETURN_IF_ERROR(AddMeta(db, "world_size", std::to_string(*world)));
    }
  }
  // The process group's backend ("nccl", "gloo", ...), for the timeline export to pass on.
  if (auto backend = handler.distributed.find("backend");
      backend != handler.distributed.end() && backend->second.kind == Scalar::kString &&
      !backend->second.text.empty() && backend->second.text.size() <= 32 &&
      std::all_of(backend->second.text.begin(), backend->second.text.end(),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == ','; })) {
    OCC_RETURN_IF_ERROR(AddMeta(db, "distributed_backend", backend->second.text));
  }
  return OkStatus();
}

}  // namespace

StatusOr<sql::Db> LoadTorchProfiler(const std::string& path,
                                    std::map<std::string, KinetoEstimate>* estimates) {
  OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::OpenMemory(path));
  OCC_RETURN_IF_ERROR(db.Exec(kTraceSchemaSql));
  OCC_RETURN_IF_ERROR(db.Exec("BEGIN"));
  LoadState state;
  state.path = path;
  state.db = &db;
  state.estimates = estimates;
  OCC_RETURN_IF_ERROR(PrepareInserts(db, &state));
  Handler handler;
  OCC_RETURN_IF_ERROR(ParseTrace(path, &handler, &state));
  OCC_RETURN_IF_ERROR(AddDevices(&state, handler.devices));
  OCC_RETURN_IF_ERROR(AddImportMeta(db, handler, state.summed_smem));
  state.insert_launch.reset();
  state.insert_config.reset();
  state.insert_string.reset();
  OCC_RETURN_IF_ERROR(db.Exec("COMMIT"));
  return db;
}

}  // namespace occ
