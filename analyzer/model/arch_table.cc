#include "analyzer/model/arch_table.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kArchTableTextProto.h"
#include "schema/arch.pb.h"

namespace occ {
namespace {

struct Table {
  std::vector<ArchConstants> arch;
  std::vector<NamedGpu> gpus;
};

// The embedded table is part of the binary: if it does not parse, or contradicts itself, that is a
// build defect (unit tests parse it), so fail loudly instead of returning a Status from every lookup.
[[noreturn]] void TableDefect(const std::string& what) {
  std::fprintf(stderr, "occ-report: internal error: built-in architecture table: %s\n", what.c_str());
  std::abort();
}

ArchConstants FromProto(const occtrace::ArchConstants& p) {
  ArchConstants a;
  a.cc_major = p.cc_major();
  a.cc_minor = p.cc_minor();
  a.architecture = p.architecture();
  a.reference_gpu = p.reference_gpu();
  a.warp_size = p.warp_size();
  a.max_threads_per_block = p.max_threads_per_block();
  a.max_threads_per_sm = p.max_threads_per_sm();
  a.regs_per_block = p.regs_per_block();
  a.regs_per_sm = p.regs_per_sm();
  a.smem_per_block = p.smem_per_block();
  a.smem_per_block_optin = p.smem_per_block_optin();
  a.smem_per_sm = p.smem_per_sm();
  a.reserved_smem_per_block = p.reserved_smem_per_block();
  a.max_blocks_per_sm = p.max_blocks_per_sm();
  a.max_regs_per_thread = p.max_regs_per_thread();
  a.reg_alloc_unit_per_warp = p.reg_alloc_unit_per_warp();
  a.sub_partitions = p.sub_partitions();
  a.recheck_sub_partitions = p.recheck_sub_partitions();
  a.smem_alloc_granularity = p.smem_alloc_granularity();
  a.configurable_carveout = p.configurable_carveout();
  for (int kib : p.carveout_kib()) a.carveout_sizes.push_back(kib * 1024);
  a.barrier_limit_applies = p.barrier_limit_applies();
  a.barriers_per_block_slot = p.barriers_per_block_slot();
  a.virtual_resources_per_sm = p.virtual_resources_per_sm();
  a.partitioned_gc = p.partitioned_gc();
  a.sources.assign(p.sources().begin(), p.sources().end());
  a.unconfirmed.assign(p.unconfirmed().begin(), p.unconfirmed().end());
  return a;
}

void CheckEntry(const ArchConstants& a) {
  const std::string cc = std::to_string(a.cc_major) + "." + std::to_string(a.cc_minor);
  if (a.warp_size <= 0 || a.max_threads_per_block <= 0 || a.max_threads_per_sm <= 0 ||
      a.regs_per_block <= 0 || a.regs_per_sm <= 0 || a.smem_per_block <= 0 || a.smem_per_sm <= 0 ||
      a.max_blocks_per_sm <= 0 || a.max_regs_per_thread <= 0 || a.reg_alloc_unit_per_warp <= 0 ||
      a.sub_partitions <= 0 || a.smem_alloc_granularity <= 0 || a.barriers_per_block_slot <= 0) {
    TableDefect("entry " + cc + " has a zero or negative limit");
  }
  if (a.configurable_carveout == a.carveout_sizes.empty()) {
    TableDefect("entry " + cc + ": configurable_carveout and carveout_kib disagree");
  }
  if (!std::is_sorted(a.carveout_sizes.begin(), a.carveout_sizes.end())) {
    TableDefect("entry " + cc + ": carveout_kib not ascending");
  }
}

const Table& GetTable() {
  static const Table* table = [] {
    occtrace::ArchTable proto;
    if (!google::protobuf::TextFormat::ParseFromString(std::string(kArchTableTextProto), &proto)) {
      TableDefect("schema/arch_table.textproto does not parse");
    }
    auto* t = new Table;
    for (const auto& p : proto.arch()) {
      t->arch.push_back(FromProto(p));
      CheckEntry(t->arch.back());
    }
    for (const auto& p : proto.gpu()) {
      NamedGpu g;
      g.name = p.name();
      g.aliases.assign(p.aliases().begin(), p.aliases().end());
      g.cc_major = p.cc_major();
      g.cc_minor = p.cc_minor();
      g.num_sms = p.num_sms();
      g.num_sms_confirmed = !p.num_sms_unconfirmed();
      if (g.num_sms <= 0) TableDefect("GPU " + g.name + " has no SM count");
      t->gpus.push_back(std::move(g));
    }
    for (const auto& g : t->gpus) {
      bool known = std::any_of(t->arch.begin(), t->arch.end(), [&](const ArchConstants& a) {
        return a.cc_major == g.cc_major && a.cc_minor == g.cc_minor;
      });
      if (!known) TableDefect("GPU " + g.name + " has a compute capability not in the table");
    }
    return t;
  }();
  return *table;
}

// Case-insensitive, ignoring spaces, dashes and underscores: "H100-SXM" == "h100 sxm".
std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string StripPrefix(std::string s, std::string_view prefix) {
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  return s;
}

// Levenshtein distance, for "did you mean" lists.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// "sm_90", "sm90a", "compute_90", "9.0", "90", "12.1" -> (major, minor). False if not a CC form.
bool ParseCc(std::string_view text, int* major, int* minor) {
  std::string s = Normalize(text);
  s = StripPrefix(StripPrefix(s, "sm"), "compute");
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.pop_back();  // sm_90a, sm_100f
  if (s.empty()) return false;
  size_t dot = s.find('.');
  if (dot != std::string::npos) {
    return ParseInt(std::string_view(s).substr(0, dot), major) &&
           ParseInt(std::string_view(s).substr(dot + 1), minor) && *minor < 10;
  }
  int v = 0;
  if (!ParseInt(s, &v) || v < 10) return false;
  *major = v / 10;
  *minor = v % 10;
  return true;
}

std::string KnownCcList() {
  std::string list;
  for (const auto& a : GetTable().arch) {
    if (!list.empty()) list += ", ";
    list += std::to_string(a.cc_major) + "." + std::to_string(a.cc_minor);
  }
  return list;
}

}  // namespace

const std::vector<ArchConstants>& AllArchConstants() { return GetTable().arch; }
const std::vector<NamedGpu>& AllNamedGpus() { return GetTable().gpus; }

std::string CcLabel(int cc_major, int cc_minor) {
  std::string label = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  for (const auto& a : GetTable().arch) {
    if (a.cc_major == cc_major && a.cc_minor == cc_minor && !a.architecture.empty()) {
      return label + " (" + a.architecture + ")";
    }
  }
  return label;
}

StatusOr<const ArchConstants*> FindArchConstants(int cc_major, int cc_minor) {
  for (const auto& a : GetTable().arch) {
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  }
  return InvalidArgument("compute capability " + std::to_string(cc_major) + "." +
                         std::to_string(cc_minor) + " is not in the architecture table (known: " +
                         KnownCcList() + ")");
}

StatusOr<DeviceProps> DevicePropsForCc(int cc_major, int cc_minor, int num_sms) {
  OCC_ASSIGN_OR_RETURN(const ArchConstants* a, FindArchConstants(cc_major, cc_minor));
  DeviceProps d;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.warp_size = a->warp_size;
  d.max_threads_per_block = a->max_threads_per_block;
  d.max_threads_per_sm = a->max_threads_per_sm;
  d.regs_per_block = a->regs_per_block;
  d.regs_per_sm = a->regs_per_sm;
  d.smem_per_block = a->smem_per_block;
  d.smem_per_block_optin = a->smem_per_block_optin;
  d.smem_per_sm = a->smem_per_sm;
  d.reserved_smem_per_block = a->reserved_smem_per_block;
  std::string label = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  if (num_sms > 0) {
    d.num_sms = num_sms;
    d.name = label;
    return d;
  }
  for (const auto& g : GetTable().gpus) {
    if (g.name == a->reference_gpu) {
      d.num_sms = g.num_sms;
      d.name = label + " (SM count of " + g.name + ")";
      return d;
    }
  }
  return InvalidArgument(label + " has no reference GPU to take an SM count from; name a GPU or "
                         "give the SM count (occ-report calc --sms N)");
}

StatusOr<DeviceProps> LookupGpu(std::string_view name_or_cc, int num_sms_override) {
  const std::string key = Normalize(name_or_cc);
  if (key.empty()) return InvalidArgument("empty GPU name");
  const Table& t = GetTable();
  // Names first: "3090" is a GPU, not compute capability 309.0.
  for (const auto& g : t.gpus) {
    bool match = Normalize(g.name) == key || StripPrefix(Normalize(g.name), "nvidia") == key;
    for (const auto& alias : g.aliases) match = match || Normalize(alias) == key;
    if (!match) continue;
    OCC_ASSIGN_OR_RETURN(DeviceProps d, DevicePropsForCc(g.cc_major, g.cc_minor,
                                                         num_sms_override > 0 ? num_sms_override
                                                                              : g.num_sms));
    d.name = g.name;
    return d;
  }
  int major = 0, minor = 0;
  if (ParseCc(name_or_cc, &major, &minor)) {
    return DevicePropsForCc(major, minor, num_sms_override);
  }
  // Closest names: substring matches first, then small edit distances.
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& g : t.gpus) {
    size_t best = EditDistance(key, StripPrefix(Normalize(g.name), "nvidia"));
    for (const auto& alias : g.aliases) {
      std::string n = Normalize(alias);
      if (n.find(key) != std::string::npos || key.find(n) != std::string::npos) best = 0;
      best = std::min(best, EditDistance(key, n));
    }
    scored.emplace_back(best, g.name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string close;
  for (size_t i = 0; i < scored.size() && i < 5; ++i) {
    if (scored[i].first > std::max<size_t>(3, key.size() / 2)) break;
    close += (close.empty() ? "" : ", ") + scored[i].second;
  }
  std::string msg = "unknown GPU '" + std::string(name_or_cc) + "'";
  if (!close.empty()) {
    msg += "; did you mean: " + close;
  } else {
    msg += "; known: H100, H200, GH200, A100, A10, A40, L4, L40, L40S, RTX 4090, RTX 3090, B200, "
           "RTX 5090, V100, T4, P100, Orin, Thor, ... or a compute capability like sm_90";
  }
  return InvalidArgument(msg);
}

Status FillMissingDeviceFields(DeviceProps* device, std::vector<std::string>* defaulted) {
  OCC_ASSIGN_OR_RETURN(const ArchConstants* a, FindArchConstants(device->cc_major, device->cc_minor));
  auto fill = [&](int* field, int value, const char* name) {
    if (*field != 0) return;
    *field = value;
    if (defaulted != nullptr) defaulted->emplace_back(name);
  };
  fill(&device->warp_size, a->warp_size, "warp_size");
  fill(&device->max_threads_per_block, a->max_threads_per_block, "max_threads_per_block");
  fill(&device->max_threads_per_sm, a->max_threads_per_sm, "max_threads_per_sm");
  fill(&device->regs_per_block, a->regs_per_block, "regs_per_block");
  fill(&device->regs_per_sm, a->regs_per_sm, "regs_per_sm");
  fill(&device->smem_per_block, a->smem_per_block, "smem_per_block");
  fill(&device->smem_per_block_optin, a->smem_per_block_optin, "smem_per_block_optin");
  fill(&device->smem_per_sm, a->smem_per_sm, "smem_per_sm");
  fill(&device->reserved_smem_per_block, a->reserved_smem_per_block, "reserved_smem_per_block");
  return OkStatus();
}

}  // namespace occ
