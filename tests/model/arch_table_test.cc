// The built-in architecture table: coverage, lookups, and values from independent sources (the
// CUDA guide / measured H100 values and published SM counts quoted in the notes and the issue).
#include <gtest/gtest.h>

#include <set>

#include "analyzer/model/arch_table.h"

namespace occ {
namespace {

TEST(ArchTable, HasEveryComputeCapability) {
  std::set<std::pair<int, int>> have;
  for (const auto& a : AllArchConstants()) have.insert({a.cc_major, a.cc_minor});
  const std::pair<int, int> want[] = {{5, 0},  {5, 2},  {5, 3},  {6, 0},  {6, 1},  {6, 2},  {7, 0},
                                      {7, 2},  {7, 5},  {8, 0},  {8, 6},  {8, 7},  {8, 8},  {8, 9},
                                      {9, 0},  {10, 0}, {10, 1}, {10, 3}, {11, 0}, {12, 0}, {12, 1}};
  for (const auto& cc : want) {
    EXPECT_TRUE(have.count(cc)) << cc.first << "." << cc.second;
  }
}

TEST(ArchTable, UnconfirmedEntriesAreMarked) {
  for (auto [major, minor] : {std::pair{7, 2}, std::pair{8, 8}, std::pair{10, 1}}) {
    auto a = FindArchConstants(major, minor);
    ASSERT_TRUE(a.ok());
    EXPECT_FALSE((*a)->unconfirmed.empty()) << major << "." << minor;
  }
  EXPECT_TRUE(FindArchConstants(9, 0).value()->unconfirmed.empty());
}

// H100 values measured with the runtime (occupancy-model.md §2.1, §4).
TEST(ArchTable, H100DeviceValues) {
  const DeviceProps d = LookupGpu("H100").value();
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.num_sms, 132);
  EXPECT_EQ(d.smem_per_sm, 233472);
  EXPECT_EQ(d.smem_per_block_optin, 232448);
  EXPECT_EQ(d.smem_per_block, 49152);
  EXPECT_EQ(d.reserved_smem_per_block, 1024);
  EXPECT_EQ(d.max_threads_per_sm, 2048);
  EXPECT_EQ(d.regs_per_sm, 65536);
}

// SM counts as published (the list).
TEST(ArchTable, NamedGpuSmCounts) {
  const std::pair<const char*, int> gpus[] = {
      {"H100 SXM", 132}, {"H100 PCIe", 114}, {"H200", 132},    {"GH200", 132},
      {"A100", 108},     {"A10", 72},        {"L4", 58},        {"L40S", 142},
      {"RTX 4090", 128}, {"B200", 148},      {"RTX 5090", 170}, {"V100", 80},
      {"T4", 40}};
  for (const auto& [name, sms] : gpus) {
    auto d = LookupGpu(name);
    ASSERT_TRUE(d.ok()) << name << ": " << d.status().message();
    EXPECT_EQ(d->num_sms, sms) << name;
  }
}

TEST(ArchTable, AliasesAreCaseAndPunctuationInsensitive) {
  for (const char* name : {"h100", "H100-SXM", "h100_sxm", "NVIDIA H100 80GB HBM3", "nvidia h100 sxm"}) {
    auto d = LookupGpu(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(d->name, "NVIDIA H100 SXM") << name;
  }
  EXPECT_EQ(LookupGpu("rtx4090").value().cc_minor, 9);
  EXPECT_EQ(LookupGpu("3090").value().num_sms, 82);  // a name, not compute capability 309.0
}

TEST(ArchTable, ComputeCapabilityForms) {
  for (const char* cc : {"sm_90", "9.0", "90", "sm90a", "SM_90", "compute_90"}) {
    auto d = LookupGpu(cc);
    ASSERT_TRUE(d.ok()) << cc << ": " << d.status().message();
    EXPECT_EQ(d->cc_major, 9) << cc;
    EXPECT_EQ(d->cc_minor, 0) << cc;
    EXPECT_EQ(d->num_sms, 132) << cc;  // the reference GPU's
  }
  auto spark = LookupGpu("sm_121");
  ASSERT_TRUE(spark.ok());
  EXPECT_EQ(spark->cc_major, 12);
  EXPECT_EQ(spark->cc_minor, 1);
  EXPECT_EQ(LookupGpu("sm_88", 30).value().num_sms, 30);
  EXPECT_EQ(LookupGpu("H100", 66).value().num_sms, 66);
}

TEST(ArchTable, UnknownNamesListCloseMatches) {
  auto d = LookupGpu("H1000");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("H1000"), std::string::npos);
  EXPECT_NE(d.status().message().find("H100"), std::string::npos);
  auto cc = LookupGpu("sm_42");
  ASSERT_FALSE(cc.ok());
  EXPECT_NE(cc.status().message().find("4.2"), std::string::npos);
  EXPECT_NE(cc.status().message().find("9.0"), std::string::npos);  // lists known CCs
  EXPECT_FALSE(LookupGpu("").ok());
  EXPECT_FALSE(LookupGpu("sm_88").ok());  // no reference GPU, no SM count given
}

TEST(ArchTable, FillMissingDeviceFields) {
  DeviceProps d;
  d.cc_major = 8;
  d.cc_minor = 6;
  d.num_sms = 84;
  d.max_threads_per_sm = 1536;
  d.smem_per_sm = 0;
  std::vector<std::string> filled;
  ASSERT_TRUE(FillMissingDeviceFields(&d, &filled).ok());
  EXPECT_EQ(d.smem_per_sm, 100 * 1024);      // guide: 100 KB per SM on 8.6
  EXPECT_EQ(d.smem_per_block_optin, 99 * 1024);
  EXPECT_EQ(d.reserved_smem_per_block, 1024);
  EXPECT_EQ(d.max_threads_per_sm, 1536);
  EXPECT_NE(std::find(filled.begin(), filled.end(), "smem_per_sm"), filled.end());
  EXPECT_EQ(std::find(filled.begin(), filled.end(), "max_threads_per_sm"), filled.end());
  DeviceProps unknown;
  unknown.cc_major = 4;
  EXPECT_FALSE(FillMissingDeviceFields(&unknown, nullptr).ok());
}

TEST(ArchTable, EveryGpuResolves) {
  for (const auto& g : AllNamedGpus()) {
    auto d = LookupGpu(g.name);
    ASSERT_TRUE(d.ok()) << g.name;
    EXPECT_EQ(d->num_sms, g.num_sms);
    for (const auto& alias : g.aliases) {
      auto a = LookupGpu(alias);
      ASSERT_TRUE(a.ok()) << alias;
      EXPECT_EQ(a->name, g.name) << alias << " is ambiguous";
    }
  }
}

}  // namespace
}  // namespace occ
