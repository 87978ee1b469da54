// The devices of an input file, from the tables both formats share: TARGET_INFO_GPU and
// TARGET_INFO_CUDA_DEVICE (Nsight Systems' layout, which occtrace writes too), plus OCC_DEVICE
// in occtrace traces. Takes the open database; gives one TraceDevice per CUDA ordinal, with the
// fields the file lacks taken from the architecture table and named in defaulted_fields, or
// marked unknown with the reason (the occtrace reader then keeps the devices its kernels ran
// on: occtrace/occtrace_reader.cc).
#include <algorithm>
#include <climits>
#include <optional>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/message_text.h"
#include "analyzer/read/database_reader.h"
#include "analyzer/read/read_helpers.h"

namespace occ {
namespace {

// A recorded device field: positive and not absurd (nsys writes 0 or NULL when unknown).
int Field(const std::optional<int64_t>& v) {
  if (!v || *v <= 0 || *v > INT_MAX) return 0;
  return static_cast<int>(*v);
}

// The query over the device tables the file has: TARGET_INFO_GPU, with the CUDA ordinal and SM
// count from TARGET_INFO_CUDA_DEVICE and occtrace's fields from OCC_DEVICE where they exist.
std::string DeviceQuery(bool has_cuda, bool has_occ_device) {
  std::string query;
  if (has_cuda) {
    query = "SELECT g.*, c.cudaId AS occ_cuda_id, c.numMultiprocessors AS occ_cuda_sms";
  } else {
    query = "SELECT g.*, coalesce(g.cuDevice, g.id) AS occ_cuda_id, NULL AS occ_cuda_sms";
  }
  if (has_occ_device) {
    query += ", o.reservedSharedMemPerBlock AS occ_reserved, o.maxThreadsPerMultiprocessor AS "
             "occ_max_threads_sm";
  }
  query += has_cuda ? " FROM TARGET_INFO_CUDA_DEVICE c JOIN TARGET_INFO_GPU g ON g.id = c.gpuId"
                    : " FROM TARGET_INFO_GPU g";
  if (has_occ_device) query += " LEFT JOIN OCC_DEVICE o ON o.gpuId = g.id";
  query += " ORDER BY occ_cuda_id";
  return query;
}

// The device as the row records it. `reserved_recorded`: whether the row holds the per-block
// shared-memory reserve.
TraceDevice RecordedDevice(const NamedRow& r, int file_index, int device_id,
                           bool* reserved_recorded) {
  TraceDevice device;
  device.file_index = file_index;
  device.device_id = device_id;
  DeviceProps& p = device.props;
  p.name = r.Text("name");
  p.cc_major = Field(r.Int("computeMajor"));
  p.cc_minor = std::max<int>(0, static_cast<int>(r.Int("computeMinor").value_or(0) & 0xff));
  if (p.cc_major == 0) {
    p.cc_major = Field(r.Int("smMajor"));
    p.cc_minor = std::max<int>(0, static_cast<int>(r.Int("smMinor").value_or(0) & 0xff));
  }
  p.num_sms = Field(r.Int("occ_cuda_sms"));
  if (p.num_sms == 0) p.num_sms = Field(r.Int("smCount"));
  p.warp_size = Field(r.Int("threadsPerWarp"));
  p.max_threads_per_block = Field(r.Int("maxThreadsPerBlock"));
  p.max_threads_per_sm = Field(r.Int("occ_max_threads_sm"));
  int warps_per_sm = Field(r.Int("maxWarpsPerSm"));
  if (p.max_threads_per_sm == 0 && warps_per_sm > 0 && p.warp_size > 0) {
    p.max_threads_per_sm = warps_per_sm * p.warp_size;
  }
  p.regs_per_block = Field(r.Int("maxRegistersPerBlock"));
  p.regs_per_sm = Field(r.Int("maxRegistersPerSm"));
  p.smem_per_block = Field(r.Int("maxShmemPerBlock"));
  p.smem_per_block_optin = Field(r.Int("maxShmemPerBlockOptin"));
  p.smem_per_sm = Field(r.Int("maxShmemPerSm"));
  std::optional<int64_t> reserved = r.Int("occ_reserved");
  *reserved_recorded = reserved.has_value() && *reserved >= 0 && *reserved <= INT_MAX;
  if (*reserved_recorded) p.reserved_smem_per_block = static_cast<int>(*reserved);
  return device;
}

// The unknown GPU: neither a compute capability nor a name the table knows. A name the table
// knows gives the compute capability (and the SM count if missing); false, with the reason, when
// it gives none.
bool ResolveByName(TraceDevice* device) {
  DeviceProps& p = device->props;
  if (p.name.empty()) {
    device->unknown_reason = "device " + std::to_string(device->device_id) +
                             " has neither a compute capability nor a name";
    return false;
  }
  auto looked_up = LookupGpu(p.name);
  if (!looked_up.ok()) {
    device->unknown_reason = "device " + std::to_string(device->device_id) + " ('" +
                             AbbrevOneLine(p.name) +
                             "') has no compute capability and is not in the architecture table";
    return false;
  }
  p.cc_major = looked_up->cc_major;
  p.cc_minor = looked_up->cc_minor;
  if (p.num_sms == 0) {
    p.num_sms = looked_up->num_sms;
    device->defaulted_fields.push_back("num_sms");
  }
  device->defaulted_fields.push_back("compute_capability");
  return true;
}

// What the file did not record, from the architecture table and named in defaulted_fields; the
// device is known when its SM count is. The reason when the fields cannot be completed.
void CompleteFromArchTable(bool reserved_recorded, TraceDevice* device) {
  DeviceProps& p = device->props;
  if (p.num_sms == 0) {
    auto by_cc = DevicePropsForCc(p.cc_major, p.cc_minor, 0);
    if (by_cc.ok()) {
      p.num_sms = by_cc->num_sms;
      device->defaulted_fields.push_back("num_sms");
    }
  }
  // nsys exports lack the per-block reserve: for them it is the SM maximum less the opt-in
  // per-block maximum (233472 - 232448 = 1024 on H100), which the driver reports consistently.
  if (!reserved_recorded && p.smem_per_sm > 0 && p.smem_per_block_optin > 0 &&
      p.smem_per_sm >= p.smem_per_block_optin && p.smem_per_sm - p.smem_per_block_optin <= 4096) {
    p.reserved_smem_per_block = p.smem_per_sm - p.smem_per_block_optin;
    device->defaulted_fields.push_back("reserved_smem_per_block (derived: maxShmemPerSm - "
                                       "maxShmemPerBlockOptin)");
    reserved_recorded = true;
  }
  std::vector<std::string> filled;
  Status fill = FillMissingDeviceFields(&p, &filled);
  if (!fill.ok()) {
    device->unknown_reason = "device " + std::to_string(device->device_id) + ": " + fill.message();
    return;
  }
  if (!reserved_recorded && p.cc_major >= 8 &&
      std::find(filled.begin(), filled.end(), "reserved_smem_per_block") == filled.end()) {
    filled.push_back("reserved_smem_per_block");
  }
  for (auto& f : filled) device->defaulted_fields.push_back(std::move(f));
  auto arch = FindArchConstants(p.cc_major, p.cc_minor);
  if (arch.ok()) device->max_blocks_per_sm = (*arch)->max_blocks_per_sm;
  device->known = p.num_sms > 0;
  if (!device->known) {
    device->unknown_reason = "device " + std::to_string(device->device_id) + ": SM count unknown";
  }
  device->source = device->defaulted_fields.empty() ? occtrace::SOURCE_TRACE
                                                   : occtrace::SOURCE_ARCH_TABLE;
}

}  // namespace

Status DatabaseReader::ReadDevices() {
  OCC_ASSIGN_OR_RETURN(bool has_gpu, db_->HasTable("TARGET_INFO_GPU"));
  OCC_ASSIGN_OR_RETURN(bool has_cuda, db_->HasTable("TARGET_INFO_CUDA_DEVICE"));
  OCC_ASSIGN_OR_RETURN(bool has_occ_device, db_->HasTable("OCC_DEVICE"));
  if (!has_gpu) {
    AddWarning("no TARGET_INFO_GPU table: the GPU is unknown (use --gpu NAME to evaluate)");
    return OkStatus();
  }
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(DeviceQuery(has_cuda, has_occ_device)));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    NamedRow r(stmt);
    std::optional<int64_t> cuda_id = r.Int("occ_cuda_id");
    if (!cuda_id) continue;
    // nsys repeats a device per process: keep the first row of each ordinal.
    bool seen = std::any_of(devices_.begin(), devices_.end(),
                            [&](const TraceDevice& d) { return d.device_id == *cuda_id; });
    if (seen || *cuda_id < 0 || *cuda_id > INT_MAX) continue;
    bool reserved_recorded = false;
    TraceDevice device =
        RecordedDevice(r, file_index_, static_cast<int>(*cuda_id), &reserved_recorded);
    if (device.props.cc_major != 0 || ResolveByName(&device)) {
      CompleteFromArchTable(reserved_recorded, &device);
    }
    devices_.push_back(std::move(device));
  }
  return OkStatus();
}

}  // namespace occ
