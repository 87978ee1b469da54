#include "analyzer/cli/launch_occupancy.h"

#include <utility>

#include "analyzer/analyze/judge.h"

namespace occ {

StatusOr<LaunchOccupancy> LaunchOccupancy::Build(const std::vector<TraceInput*>& readers,
                                                 std::optional<DeviceProps> what_if) {
  LaunchOccupancy out;
  out.what_if_ = what_if.has_value();
  std::vector<occtrace::InputFile> files;
  int64_t total_ns = 0;
  for (TraceInput* reader : readers) {
    OCC_ASSIGN_OR_RETURN(TraceScan scan, reader->Scan(/*kernel_regex=*/"", /*jobs=*/0));
    total_ns = SaturatingAdd(total_ns, scan.total_ns);
    out.first_starts_.push_back(scan.first_start);
    files.push_back(reader->info());
    AddToGroups(std::move(scan.configs), reader->devices(), out.what_if_, &out.groups_);
  }
  FoldProfiledLaunches(&out.groups_);
  JudgeContext ctx;
  ctx.what_if = what_if;
  ctx.files = &files;  // the report keeps these warnings; here they were said by the reader
  for (const auto& key : out.groups_.order) {
    Judged j = JudgeGroup(&ctx, out.groups_.by_key.at(key), total_ns);
    out.judged_.emplace(key, std::move(j.group));
  }
  return out;
}

const occtrace::KernelGroup* LaunchOccupancy::Find(const ConfigStats& config,
                                                   const std::vector<TraceDevice>& devices) const {
  auto it = judged_.find(groups_.Resolve(GroupKey(config, FindDevice(devices, config.device_id), what_if_)));
  return it == judged_.end() ? nullptr : &it->second;
}

}  // namespace occ
