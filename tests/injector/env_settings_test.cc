// The value parsers of the OCCTRACE_* settings (settings.h uses them): what they accept, and
// that a bad value keeps the default with a warning that names variable, value and default.
#include "injector/common/env_settings.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace occ::inj {
namespace {

EnvLookup MapEnv(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(EnvSettings, SwitchWords) {
  std::vector<std::string> warnings;
  for (const char* on : {"1", "true", "YES", " On "}) {
    EXPECT_TRUE(SwitchSetting(MapEnv({{"X", on}}), "X", false, &warnings)) << on;
  }
  for (const char* off : {"0", "False", "no", "\toff"}) {
    EXPECT_FALSE(SwitchSetting(MapEnv({{"X", off}}), "X", true, &warnings)) << off;
  }
  EXPECT_TRUE(warnings.empty());
  // Unset or blank: the fallback, silently.
  EXPECT_TRUE(SwitchSetting(MapEnv({}), "X", true, &warnings));
  EXPECT_FALSE(SwitchSetting(MapEnv({{"X", "  "}}), "X", false, &warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(EnvSettings, BadSwitchKeepsFallbackAndSaysSo) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(SwitchSetting(MapEnv({{"OCCTRACE_X", "2"}}), "OCCTRACE_X", true, &warnings));
  EXPECT_FALSE(SwitchSetting(MapEnv({{"OCCTRACE_Y", "enable"}}), "OCCTRACE_Y", false, &warnings));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "OCCTRACE_X='2' is not 0 or 1; using 1");
  EXPECT_EQ(warnings[1], "OCCTRACE_Y='enable' is not 0 or 1; using 0");
}

TEST(EnvSettings, IntegerRange) {
  std::vector<std::string> warnings;
  EXPECT_EQ(IntegerSetting(MapEnv({{"N", " 42 "}}), "N", 7, 1, 100, &warnings), 42);
  EXPECT_EQ(IntegerSetting(MapEnv({}), "N", 7, 1, 100, &warnings), 7);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(IntegerSetting(MapEnv({{"N", "101"}}), "N", 7, 1, 100, &warnings), 7);
  EXPECT_EQ(IntegerSetting(MapEnv({{"N", "4k"}}), "N", 7, 1, 100, &warnings), 7);
  EXPECT_EQ(IntegerSetting(MapEnv({{"N", "99999999999999999999999"}}), "N", 7, 1, 100, &warnings), 7);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0], "N='101' is not an integer in [1, 100]; using 7");
  EXPECT_EQ(warnings[1], "N='4k' is not an integer in [1, 100]; using 7");
}

}  // namespace
}  // namespace occ::inj
