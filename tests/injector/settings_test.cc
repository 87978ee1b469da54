// The one parse of the OCCTRACE_* settings (settings.h): every known name read, a bad value
// kept at its default with one warning, an unknown OCCTRACE_* name named in one warning, and
// the mode the settings yield.
#include "injector/tracer/settings.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <vector>

namespace occ::inj {
namespace {

constexpr int64_t kMs = 1'000'000;

using Variables = std::map<std::string, std::string>;

// For the tests moved here from the per-part parsers: an environment given by its values.
struct FakeEnv {
  Variables values;
};

bool Contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

Settings Parse(const Variables& variables, std::vector<std::string>* warnings) {
  return ParseSettings(variables, warnings);
}

// One row per known name: a value that changes the setting (in `base`, the settings it needs
// to apply), what changed, and a value that cannot be read (nullptr: every value is readable).
struct Row {
  const char* name;
  const char* good;
  const char* bad;
  std::function<bool(const Settings&)> changed;
  Variables base = {};
};

std::vector<Row> Rows() {
  const Variables light = {{"OCCTRACE_MODE", "light"}};
  return {
      {"OCCTRACE_OUTPUT", "t-%p.db", nullptr, [](const Settings& s) { return s.output_pattern == "t-%p.db"; }},
      {"OCCTRACE_FORCE", "1", "2", [](const Settings& s) { return s.force; }},
      {"OCCTRACE_QUIET", "yes", "loud", [](const Settings& s) { return s.session.quiet; }},
      {"OCCTRACE_KEEP_EMPTY", "1", "x", [](const Settings& s) { return !s.session.remove_if_empty; }},
      {"OCCTRACE_MODE", " light ", "heavy", [](const Settings& s) { return s.session.light; }},
      {"OCCTRACE_LIGHT_DETACH", "1", "x", [](const Settings& s) { return s.light_detach; }, light},
      {"OCCTRACE_LIGHT_PERIOD_MS", "2000", "5", [](const Settings& s) { return s.session.windows.period_ns == 2000 * kMs; }},
      {"OCCTRACE_LIGHT_WINDOW_MS", "50", "0", [](const Settings& s) { return s.session.windows.window_ns == 50 * kMs; }},
      {"OCCTRACE_ACHIEVED", "off", "sometimes", [](const Settings& s) { return s.achieved.mode == AchievedMode::kOff; }},
      {"OCCTRACE_SAMPLES", "3", "0", [](const Settings& s) { return s.achieved.samples_per_signature == 3; }},
      {"OCCTRACE_SAMPLE_BUDGET", "10%", "200%", [](const Settings& s) { return s.achieved.budget_fraction == 0.1 && s.pm.policy.budget_fraction == 0.1; }},
      {"OCCTRACE_MAX_BUFFERS", "8", "1", [](const Settings& s) { return s.session.max_buffers == 8; }},
      {"OCCTRACE_FLUSH_MS", "100", "fast", [](const Settings& s) { return s.session.flush_period_ms == 100; }},
      {"OCCTRACE_MAX_RECORD_AGE_MS", "0", "-1", [](const Settings& s) { return s.session.max_record_age_ms == 0; }},
      {"OCCTRACE_BUFFER_MB", "8", "100000", [](const Settings& s) { return s.session.buffer_bytes == size_t{8} << 20; }},
      {"OCCTRACE_DEBUG_FLUSH", "1", "y", [](const Settings& s) { return s.session.debug_flush; }},
      {"OCCTRACE_TRITON_METADATA", "0", "x", [](const Settings& s) { return !s.triton_metadata; }},
      {"OCCTRACE_WATCH_SUBSCRIBERS", "0", "x", [](const Settings& s) { return !s.watch_subscribers; }},
      {"OCCTRACE_LIGHT_MAX_DUTY_PCT", "25", "101", [](const Settings& s) { return s.session.windows.max_duty == 0.25; }},
      {"OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS", "off", "maybe",
       [](const Settings& s) { return !s.session.windows.windows_for_new_configs; }},
      {"OCCTRACE_SAMPLE_BURST_MS", "0", "-1", [](const Settings& s) { return s.achieved.burst_ns == 0; }},
      {"OCCTRACE_ACHIEVED_IDLE", "2.5", "soon", [](const Settings& s) { return s.achieved.idle_park_ns == 2500 * kMs; }},
      {"OCCTRACE_ACHIEVED_PARK_DEINIT", "0", "x", [](const Settings& s) { return !s.achieved.park_deinitializes; }},
      {"OCCTRACE_ACHIEVED_BACKGROUND_SETUP", "0", "maybe", [](const Settings& s) { return !s.achieved.background_setup; }},
      {"OCCTRACE_ACHIEVED_MAX_SIGNATURES", "500", "many", [](const Settings& s) { return s.achieved.max_signatures == 500; }},
      {"OCCTRACE_ACHIEVED_REPLAY", "user", "application", [](const Settings& s) { return s.achieved.user_replay; }},
      {"OCCTRACE_PM_INTERVAL_US", "20", "fast", [](const Settings& s) { return s.pm.device.interval_ns == 20'000; }},
      {"OCCTRACE_PM_IMAGE_SAMPLES", "100", "5", [](const Settings& s) { return s.pm.device.max_samples_per_image == 100; }},
      {"OCCTRACE_PM_DECODE_MS", "10", "0", [](const Settings& s) { return s.pm.decode_period_ns == 10 * kMs; }},
      {"OCCTRACE_PM_BUFFER_MB", "16", "0", [](const Settings& s) { return s.pm.device.hardware_buffer_bytes == size_t{16} << 20; }},
      {"OCCTRACE_PM_NO_DRAM", "1", "x", [](const Settings& s) { return s.pm.device.occupancy_only; }},
  };
}

TEST(Settings, TheRowsCoverEveryKnownNameOnce) {
  std::set<std::string> known;
  for (const KnownSetting& setting : KnownSettings()) {
    EXPECT_TRUE(setting.name.starts_with("OCCTRACE_")) << setting.name;
    EXPECT_TRUE(known.insert(std::string(setting.name)).second) << "listed twice: " << setting.name;
  }
  std::set<std::string> rows;
  for (const Row& row : Rows()) rows.insert(row.name);
  EXPECT_EQ(rows, known);
}

TEST(Settings, AtMostTwelveUserSettings) {
  int users = 0;
  for (const KnownSetting& setting : KnownSettings()) users += setting.audience == SettingAudience::kUser ? 1 : 0;
  EXPECT_LE(users, 12);
}

// docs/tracing.md lists each user setting in its first table and each developer setting in
// its "Developer settings" section, so that the documented list is the read one.
TEST(Settings, TheDocsListEverySettingForItsAudience) {
  std::ifstream file(OCC_TRACING_DOC);
  ASSERT_TRUE(file) << OCC_TRACING_DOC;
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const size_t user_end = doc.find("## Light tracing");
  const size_t developer_begin = doc.find("## Developer settings");
  const size_t developer_end = doc.find("\nRemoved (", developer_begin);
  ASSERT_NE(user_end, std::string::npos);
  ASSERT_NE(developer_begin, std::string::npos);
  ASSERT_NE(developer_end, std::string::npos);
  const std::string user_part = doc.substr(0, user_end);
  const std::string developer_part = doc.substr(developer_begin, developer_end - developer_begin);
  for (const KnownSetting& setting : KnownSettings()) {
    const std::string quoted = "`" + std::string(setting.name) + "`";
    if (setting.audience == SettingAudience::kUser) {
      EXPECT_NE(user_part.find(quoted), std::string::npos) << setting.name << " is not in the user settings";
      EXPECT_EQ(developer_part.find(quoted), std::string::npos) << setting.name << " is a user setting";
    } else {
      EXPECT_NE(developer_part.find(quoted), std::string::npos) << setting.name << " is not in Developer settings";
    }
  }
}

TEST(Settings, EveryKnownNameIsRead) {
  for (const Row& row : Rows()) {
    std::vector<std::string> warnings;
    EXPECT_FALSE(row.changed(Parse(row.base, &warnings))) << row.name << ": the default already";
    warnings.clear();  // OCCTRACE_ACHIEVED=pm alone is refused with one
    Variables variables = row.base;
    variables[row.name] = row.good;
    EXPECT_TRUE(row.changed(Parse(variables, &warnings))) << row.name << "=" << row.good;
    EXPECT_TRUE(warnings.empty()) << row.name << ": " << (warnings.empty() ? "" : warnings.front());
  }
}

TEST(Settings, AnUnreadableValueKeepsTheDefaultWithOneWarning) {
  for (const Row& row : Rows()) {
    if (row.bad == nullptr) continue;
    std::vector<std::string> warnings;
    Variables variables = row.base;
    variables[row.name] = row.bad;
    EXPECT_FALSE(row.changed(Parse(variables, &warnings))) << row.name << "=" << row.bad;
    ASSERT_EQ(warnings.size(), 1u) << row.name << "=" << row.bad;
    EXPECT_EQ(warnings[0].rfind(std::string(row.name) + "='" + row.bad + "'", 0), 0u) << warnings[0];
    EXPECT_EQ(warnings[0].find('\n'), std::string::npos) << warnings[0];
  }
}

TEST(Settings, AnUnknownOcctraceNameGetsOneWarning) {
  std::vector<std::string> warnings;
  const Settings settings = Parse({{"OCCTRACE_SAMPLE", "3"}, {"OCCTRACE_SAMPLES", "2"}, {"CUDA_VISIBLE_DEVICES", "1"},
                                   {"OCCTRACE", "1"}},
                                  &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "OCCTRACE_SAMPLE is not an occtrace setting (docs/tracing.md lists them); ignored");
  EXPECT_EQ(settings.achieved.samples_per_signature, 2);
}

TEST(Settings, Modes) {
  std::vector<std::string> warnings;
  auto mode = [&](const Variables& variables) { return Parse(variables, &warnings).mode(); };
  EXPECT_EQ(mode({}), Mode::kFull) << "the default: PM sampling, CUPTI attached for the whole run";
  EXPECT_EQ(mode({{"OCCTRACE_ACHIEVED", "sample"}}), Mode::kFull) << "replay: CUPTI attached for the whole run";
  EXPECT_EQ(mode({{"OCCTRACE_ACHIEVED", "all"}}), Mode::kFull);
  EXPECT_EQ(mode({{"OCCTRACE_ACHIEVED", "off"}}), Mode::kFull);
  EXPECT_EQ(mode({{"OCCTRACE_ACHIEVED", "pm"}}), Mode::kFull);
  EXPECT_EQ(mode({{"OCCTRACE_MODE", "light"}}), Mode::kLight);
  EXPECT_EQ(mode({{"OCCTRACE_MODE", "light"}, {"OCCTRACE_ACHIEVED", "off"}}), Mode::kLight);
  EXPECT_EQ(mode({{"OCCTRACE_MODE", "light"}, {"OCCTRACE_LIGHT_DETACH", "1"}}), Mode::kLightDetached);
  EXPECT_TRUE(warnings.empty()) << warnings.front();

  // Light tracing's own setting outside it: ignored, with one line.
  const Settings full = Parse({{"OCCTRACE_LIGHT_DETACH", "1"}}, &warnings);
  EXPECT_EQ(full.mode(), Mode::kFull);
  EXPECT_FALSE(full.light_detach);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "OCCTRACE_LIGHT_DETACH=1 applies to light tracing only (OCCTRACE_MODE=light); ignored");

  // A removed experiment switch is an unknown name now: one line, nothing else changes.
  for (const char* removed_name : {"OCCTRACE_LIGHT_HOOK", "OCCTRACE_ACHIEVED_REATTACH", "OCCTRACE_ACHIEVED_QUIET_PARK"}) {
    warnings.clear();
    const Settings removed = Parse({{"OCCTRACE_MODE", "light"}, {removed_name, "1"}}, &warnings);
    EXPECT_EQ(removed.mode(), Mode::kLight);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], std::string(removed_name) + " is not an occtrace setting (docs/tracing.md lists them); ignored");
  }
}

TEST(Settings, WhatTheModeImplies) {
  std::vector<std::string> warnings;
  const Settings standard = Parse({}, &warnings);
  EXPECT_TRUE(standard.session.pm_samples) << "the default samples PM counters";
  EXPECT_EQ(standard.pm.device.interval_ns, 50'000u);
  const Settings replay = Parse({{"OCCTRACE_ACHIEVED", "sample"}}, &warnings);
  EXPECT_FALSE(replay.session.pm_samples);
  EXPECT_TRUE(warnings.empty());
  const Settings detached = Parse({{"OCCTRACE_MODE", "light"}, {"OCCTRACE_LIGHT_DETACH", "1"}}, &warnings);
  EXPECT_TRUE(detached.session.light);
  EXPECT_EQ(detached.achieved.mode, AchievedMode::kOff) << "achieved occupancy needs CUPTI attached";
  EXPECT_FALSE(detached.session.pm_samples);
  EXPECT_TRUE(warnings.empty()) << "nothing asked for, nothing to say";
  for (const char* asked : {"sample", "pm", "all"}) {
    warnings.clear();
    const Settings detached_asked =
        Parse({{"OCCTRACE_MODE", "light"}, {"OCCTRACE_LIGHT_DETACH", "1"}, {"OCCTRACE_ACHIEVED", asked}}, &warnings);
    EXPECT_EQ(detached_asked.achieved.mode, AchievedMode::kOff) << asked;
    EXPECT_FALSE(detached_asked.session.pm_samples);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], std::string("OCCTRACE_ACHIEVED=") + asked +
                               " does not apply to light tracing with detach (CUPTI is gone between windows); "
                               "achieved occupancy is not measured");
  }
  warnings.clear();
  const Settings light = Parse({{"OCCTRACE_MODE", "light"}}, &warnings);
  EXPECT_EQ(light.achieved.mode, AchievedMode::kPm);
  EXPECT_TRUE(warnings.empty());
}

TEST(Settings, OutputPattern) {
  std::vector<std::string> warnings;
  EXPECT_EQ(Parse({}, &warnings).output_pattern, "occtrace-%p.db");
  EXPECT_EQ(Parse({{"OCCTRACE_OUTPUT", ""}}, &warnings).output_pattern, "occtrace-%p.db") << "blank: the default";
  EXPECT_EQ(Parse({{"OCCTRACE_OUTPUT", "trace-%q{RANK}.db"}}, &warnings).output_pattern, "trace-%q{RANK}.db");
  EXPECT_TRUE(warnings.empty());
}

TEST(Settings, ProcessVariablesAreTheOcctraceOnes) {
  setenv("OCCTRACE_SAMPLES", "4", 1);
  setenv("OCCTRACE_SETTINGS_TEST_EMPTY", "", 1);
  setenv("NOT_OCCTRACE_SAMPLES", "9", 1);
  const Variables variables = ProcessOcctraceVariables();
  unsetenv("OCCTRACE_SAMPLES");
  unsetenv("OCCTRACE_SETTINGS_TEST_EMPTY");
  unsetenv("NOT_OCCTRACE_SAMPLES");
  ASSERT_TRUE(variables.contains("OCCTRACE_SAMPLES"));
  EXPECT_EQ(variables.at("OCCTRACE_SAMPLES"), "4");
  ASSERT_TRUE(variables.contains("OCCTRACE_SETTINGS_TEST_EMPTY"));
  EXPECT_EQ(variables.at("OCCTRACE_SETTINGS_TEST_EMPTY"), "");
  EXPECT_FALSE(variables.contains("NOT_OCCTRACE_SAMPLES"));
}

// Moved from the per-part parsers' tests (env_settings_test.cc, trace_session_light_test.cc,
// achieved_policy_test.cc, pm_collector_test.cc) when the parse became one.

TEST(Settings, SessionOptionsFromTheEnvironment) {
  std::vector<std::string> warnings;
  const SessionOptions options = Parse({{"OCCTRACE_QUIET", "yes"}, {"OCCTRACE_MAX_BUFFERS", "8"}}, &warnings).session;
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(options.quiet);
  EXPECT_EQ(options.max_buffers, 8u);

  const SessionOptions defaults = Parse({}, &warnings).session;
  EXPECT_FALSE(defaults.quiet);
  EXPECT_EQ(defaults.max_buffers, 64u);
  EXPECT_TRUE(defaults.remove_if_empty) << "from the environment, an empty trace is removed";
  EXPECT_TRUE(warnings.empty());
}

TEST(Settings, LightModeAndWindowSettings) {
  std::vector<std::string> warnings;
  const SessionOptions defaults = Parse({}, &warnings).session;
  EXPECT_TRUE(warnings.empty());
  EXPECT_FALSE(defaults.light);
  EXPECT_EQ(defaults.windows.period_ns, 5'000'000'000);
  EXPECT_EQ(defaults.windows.window_ns, 200'000'000);
  EXPECT_DOUBLE_EQ(defaults.windows.max_duty, 0.10) << "the default survives the round trip through percent";
  EXPECT_TRUE(defaults.windows.windows_for_new_configs);

  SessionOptions light = Parse({{"OCCTRACE_MODE", " light "},
                           {"OCCTRACE_LIGHT_PERIOD_MS", "2000"},
                           {"OCCTRACE_LIGHT_WINDOW_MS", "50"},
                           {"OCCTRACE_LIGHT_MAX_DUTY_PCT", "25"},
                           {"OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS", "off"}},
                               &warnings).session;
  EXPECT_TRUE(warnings.empty()) << (warnings.empty() ? "" : warnings.front());
  EXPECT_TRUE(light.light);
  EXPECT_EQ(light.windows.period_ns, 2'000'000'000);
  EXPECT_EQ(light.windows.window_ns, 50'000'000);
  EXPECT_DOUBLE_EQ(light.windows.max_duty, 0.25);
  EXPECT_FALSE(light.windows.windows_for_new_configs);

  // full (or blank) is full; a bad mode keeps the default and says so.
  EXPECT_FALSE(Parse({{"OCCTRACE_MODE", "heavy"}}, &warnings).session.light);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "OCCTRACE_MODE='heavy' is not full or light; using full");
  EXPECT_FALSE(Parse({{"OCCTRACE_MODE", "full"}}, &warnings).session.light);
  EXPECT_FALSE(Parse({{"OCCTRACE_MODE", ""}}, &warnings).session.light);
  EXPECT_EQ(warnings.size(), 1u);

  warnings.clear();
  const SessionOptions bad = Parse({{"OCCTRACE_LIGHT_PERIOD_MS", "5"},
                           {"OCCTRACE_LIGHT_WINDOW_MS", "0"},
                           {"OCCTRACE_LIGHT_MAX_DUTY_PCT", "101"},
                           {"OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS", "maybe"}},
                                   &warnings).session;
  EXPECT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(Contains(warnings, "OCCTRACE_LIGHT_PERIOD_MS='5' is not an integer in [10, 3600000]; using 5000"));
  EXPECT_TRUE(Contains(warnings, "OCCTRACE_LIGHT_WINDOW_MS='0' is not an integer in [1, 3600000]; using 200"));
  EXPECT_TRUE(Contains(warnings, "OCCTRACE_LIGHT_MAX_DUTY_PCT='101' is not an integer in [0, 100]; using 10"));
  EXPECT_TRUE(Contains(warnings, "OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS='maybe'"));
  EXPECT_EQ(bad.windows.period_ns, 5'000'000'000);
  EXPECT_EQ(bad.windows.window_ns, 200'000'000);
  EXPECT_DOUBLE_EQ(bad.windows.max_duty, 0.10);
  EXPECT_TRUE(bad.windows.windows_for_new_configs);
}

TEST(SettingsAchieved, DefaultsWhenUnset) {
  FakeEnv env;
  std::vector<std::string> warnings;
  AchievedConfig config = ParseSettings(env.values, &warnings).achieved;
  EXPECT_EQ(config.mode, AchievedMode::kPm);
  EXPECT_EQ(config.samples_per_signature, 1);
  EXPECT_DOUBLE_EQ(config.budget_fraction, 0.05);
  EXPECT_TRUE(warnings.empty());
}

TEST(SettingsAchieved, ReadsEveryVariable) {
  FakeEnv env{{{"OCCTRACE_ACHIEVED", "all"}, {"OCCTRACE_SAMPLES", "3"},
               {"OCCTRACE_SAMPLE_BUDGET", "0.2"}}};
  std::vector<std::string> warnings;
  AchievedConfig config = ParseSettings(env.values, &warnings).achieved;
  EXPECT_EQ(config.mode, AchievedMode::kAll);
  EXPECT_EQ(config.samples_per_signature, 3);
  EXPECT_DOUBLE_EQ(config.budget_fraction, 0.2);
  EXPECT_TRUE(warnings.empty());

  env.values["OCCTRACE_ACHIEVED"] = "off";
  EXPECT_EQ(ParseSettings(env.values, &warnings).achieved.mode, AchievedMode::kOff);
  EXPECT_TRUE(warnings.empty());
}

TEST(SettingsAchieved, EachModeByName) {
  std::vector<std::string> warnings;
  for (const auto& [name, mode] : std::vector<std::pair<std::string, AchievedMode>>{
           {"pm", AchievedMode::kPm}, {" pm ", AchievedMode::kPm}, {"", AchievedMode::kPm},
           {"sample", AchievedMode::kSample}, {"all", AchievedMode::kAll}, {"off", AchievedMode::kOff},
           {"0", AchievedMode::kOff}, {"none", AchievedMode::kOff}}) {
    FakeEnv env{{{"OCCTRACE_ACHIEVED", name}}};
    EXPECT_EQ(ParseSettings(env.values, &warnings).achieved.mode, mode) << "'" << name << "'";
  }
  EXPECT_TRUE(warnings.empty());
  // The developer switch of the time PM sampling was refused is an unknown name now.
  FakeEnv env{{{"OCCTRACE_PM_UNSAFE", "1"}}};
  ParseSettings(env.values, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("OCCTRACE_PM_UNSAFE is not an occtrace setting"), std::string::npos) << warnings[0];
}

TEST(SettingsAchieved, BadValuesWarnOnceEachAndKeepDefaults) {
  FakeEnv env{{{"OCCTRACE_ACHIEVED", "sometimes"}, {"OCCTRACE_SAMPLES", "0"},
               {"OCCTRACE_SAMPLE_BUDGET", "200%"}}};
  std::vector<std::string> warnings;
  AchievedConfig config = ParseSettings(env.values, &warnings).achieved;
  EXPECT_EQ(config.mode, AchievedMode::kPm);
  EXPECT_EQ(config.samples_per_signature, 1);
  EXPECT_DOUBLE_EQ(config.budget_fraction, 0.05);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("OCCTRACE_ACHIEVED='sometimes'"), std::string::npos);
  EXPECT_NE(warnings[1].find("OCCTRACE_SAMPLES='0'"), std::string::npos);
  EXPECT_NE(warnings[2].find("OCCTRACE_SAMPLE_BUDGET='200%'"), std::string::npos);
  for (const std::string& w : warnings) EXPECT_EQ(w.find('\n'), std::string::npos) << w;

  for (const char* bad : {"-2", "2.5", "3x", "", "99999999999"}) {
    warnings.clear();
    FakeEnv samples{{{"OCCTRACE_SAMPLES", bad}}};
    EXPECT_EQ(ParseSettings(samples.values, &warnings).achieved.samples_per_signature, 1) << bad;
    EXPECT_EQ(warnings.size(), 1u) << bad;
  }
}

TEST(SettingsAchieved, IdleSeconds) {
  std::vector<std::string> warnings;
  FakeEnv unset;
  EXPECT_EQ(ParseSettings(unset.values, &warnings).achieved.idle_park_ns, 200 * kMs);
  FakeEnv env{{{"OCCTRACE_ACHIEVED_IDLE", "2.5"}}};
  EXPECT_EQ(ParseSettings(env.values, &warnings).achieved.idle_park_ns, 2500 * kMs);
  EXPECT_TRUE(warnings.empty());
  for (const char* bad : {"0", "-1", "soon", "1e9"}) {
    warnings.clear();
    FakeEnv b{{{"OCCTRACE_ACHIEVED_IDLE", bad}}};
    EXPECT_EQ(ParseSettings(b.values, &warnings).achieved.idle_park_ns, 200 * kMs) << bad;
    ASSERT_EQ(warnings.size(), 1u) << bad;
    EXPECT_NE(warnings[0].find("OCCTRACE_ACHIEVED_IDLE"), std::string::npos);
  }
}

// A signature cap below the built-in one; 0 sets the profiler up without measuring anything.
TEST(SettingsAchieved, MaxSignatures) {
  std::vector<std::string> warnings;
  FakeEnv unset;
  const int64_t built_in = ParseSettings(unset.values, &warnings).achieved.max_signatures;
  EXPECT_EQ(built_in, int64_t{1} << 20);
  FakeEnv zero{{{"OCCTRACE_ACHIEVED_MAX_SIGNATURES", "0"}}};
  EXPECT_EQ(ParseSettings(zero.values, &warnings).achieved.max_signatures, 0);
  FakeEnv some{{{"OCCTRACE_ACHIEVED_MAX_SIGNATURES", "500"}}};
  EXPECT_EQ(ParseSettings(some.values, &warnings).achieved.max_signatures, 500);
  EXPECT_TRUE(warnings.empty());
  for (const char* bad : {"-1", "many", "99999999999"}) {
    warnings.clear();
    FakeEnv b{{{"OCCTRACE_ACHIEVED_MAX_SIGNATURES", bad}}};
    EXPECT_EQ(ParseSettings(b.values, &warnings).achieved.max_signatures, built_in) << bad;
    ASSERT_EQ(warnings.size(), 1u) << bad;
    EXPECT_NE(warnings[0].find("OCCTRACE_ACHIEVED_MAX_SIGNATURES"), std::string::npos);
  }
}

TEST(SettingsAchieved, Replay) {
  std::vector<std::string> warnings;
  FakeEnv unset;
  EXPECT_FALSE(ParseSettings(unset.values, &warnings).achieved.user_replay);
  FakeEnv user{{{"OCCTRACE_ACHIEVED_REPLAY", "user"}}};
  EXPECT_TRUE(ParseSettings(user.values, &warnings).achieved.user_replay);
  FakeEnv kernel{{{"OCCTRACE_ACHIEVED_REPLAY", " kernel "}}};
  EXPECT_FALSE(ParseSettings(kernel.values, &warnings).achieved.user_replay);
  EXPECT_TRUE(warnings.empty());
  FakeEnv bad{{{"OCCTRACE_ACHIEVED_REPLAY", "application"}}};
  EXPECT_FALSE(ParseSettings(bad.values, &warnings).achieved.user_replay);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("OCCTRACE_ACHIEVED_REPLAY"), std::string::npos);
}

TEST(SettingsAchieved, Switches) {
  std::vector<std::string> warnings;
  FakeEnv unset;
  const AchievedConfig defaults = ParseSettings(unset.values, &warnings).achieved;
  EXPECT_TRUE(defaults.background_setup);
  EXPECT_TRUE(defaults.park_deinitializes);
  FakeEnv flipped{{{"OCCTRACE_ACHIEVED_BACKGROUND_SETUP", "0"},
                   {"OCCTRACE_ACHIEVED_PARK_DEINIT", " 0 "}}};
  const AchievedConfig config = ParseSettings(flipped.values, &warnings).achieved;
  EXPECT_FALSE(config.background_setup);
  EXPECT_FALSE(config.park_deinitializes);
  EXPECT_TRUE(warnings.empty());
  FakeEnv bad{{{"OCCTRACE_ACHIEVED_BACKGROUND_SETUP", "maybe"}}};
  EXPECT_TRUE(ParseSettings(bad.values, &warnings).achieved.background_setup);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "OCCTRACE_ACHIEVED_BACKGROUND_SETUP='maybe' is not 0 or 1; using 1");
}

TEST(Settings, PmIntervalWithAWarningForBadValues) {
  std::vector<std::string> warnings;
  EXPECT_EQ(Parse({}, &warnings).pm.device.interval_ns, 50'000u);
  EXPECT_EQ(Parse({{"OCCTRACE_PM_INTERVAL_US", "20"}}, &warnings).pm.device.interval_ns, 20'000u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(Parse({{"OCCTRACE_PM_INTERVAL_US", "fast"}}, &warnings).pm.device.interval_ns, 50'000u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("OCCTRACE_PM_INTERVAL_US='fast'"), std::string::npos);
  // An image holds two decode periods of samples, at least 256: 2 x 5 ms / 50 us = 200 -> 256;
  // at 20 us, 500.
  const PmCollectorSettings s = Parse({}, &warnings).pm;
  EXPECT_EQ(s.decode_period_ns, 5'000'000);
  EXPECT_EQ(s.device.max_samples_per_image, 256u);
  EXPECT_EQ(Parse({{"OCCTRACE_PM_INTERVAL_US", "20"}}, &warnings).pm.device.max_samples_per_image, 500u);
  // One default: a collector made in code samples at the interval the parser and the docs
  // (docs/achieved.md: 50 us) give, and so does the writer's join judge samples against it.
  EXPECT_EQ(PmSettings{}.interval_ns, 50'000u);
  EXPECT_EQ(PmJoinSettings{}.interval_ns, 50'000u);
  EXPECT_EQ(Parse({{"OCCTRACE_PM_INTERVAL_US", "20"}}, &warnings).session.pm_join.interval_ns, 20'000u);
}

// PM sampling follows kernel records, which come up to the record age + one flush period late:
// its new-code and running windows outlast that (settings.cc, FollowRecordLag).
TEST(Settings, PmWindowsOutlastTheRecordLag) {
  std::vector<std::string> warnings;
  const Settings standard = Parse({}, &warnings);
  EXPECT_EQ(standard.pm.policy.new_code_ns, (500 + 250 + 250) * kMs);
  EXPECT_EQ(standard.session.pm_join.running_window_ns, (500 + 250 + 250) * kMs);
  EXPECT_EQ(standard.session.pm_join.max_held_images, standard.pm.max_images / 2);
  const Settings slow = Parse({{"OCCTRACE_MAX_RECORD_AGE_MS", "3000"}, {"OCCTRACE_FLUSH_MS", "1000"}}, &warnings);
  EXPECT_EQ(slow.pm.policy.new_code_ns, (3000 + 1000 + 250) * kMs);
  EXPECT_EQ(Parse({{"OCCTRACE_MAX_RECORD_AGE_MS", "0"}}, &warnings).pm.policy.new_code_ns, (2000 + 250 + 250) * kMs);
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace occ::inj
