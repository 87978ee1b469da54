// The one parse of the OCCTRACE_* settings (settings.h).
#include "injector/tracer/settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "injector/common/errors.h"

extern char** environ;

namespace occ::inj {
namespace {

constexpr std::string_view kPrefix = "OCCTRACE_";

constexpr SettingAudience kUser = SettingAudience::kUser;
constexpr SettingAudience kDeveloper = SettingAudience::kDeveloper;

// Every name occtrace reads; docs/tracing.md lists the same ones (user settings, then the
// developer section). Adding a setting: add it here, parse it below, document it there.
constexpr KnownSetting kKnownSettings[] = {
    {"OCCTRACE_OUTPUT", kUser},
    {"OCCTRACE_FORCE", kUser},
    {"OCCTRACE_QUIET", kUser},
    {"OCCTRACE_KEEP_EMPTY", kUser},
    {"OCCTRACE_MODE", kUser},
    {"OCCTRACE_LIGHT_DETACH", kUser},
    {"OCCTRACE_LIGHT_PERIOD_MS", kUser},
    {"OCCTRACE_LIGHT_WINDOW_MS", kUser},
    {"OCCTRACE_ACHIEVED", kUser},
    {"OCCTRACE_PM_INTERVAL_US", kUser},
    {"OCCTRACE_SAMPLE_BUDGET", kUser},
    {"OCCTRACE_MAX_BUFFERS", kUser},
    // Developers: measuring or diagnosing occtrace itself.
    {"OCCTRACE_FLUSH_MS", kDeveloper},
    {"OCCTRACE_MAX_RECORD_AGE_MS", kDeveloper},
    {"OCCTRACE_BUFFER_MB", kDeveloper},
    {"OCCTRACE_DEBUG_FLUSH", kDeveloper},
    {"OCCTRACE_TRITON_METADATA", kDeveloper},
    {"OCCTRACE_WATCH_SUBSCRIBERS", kDeveloper},
    {"OCCTRACE_LIGHT_MAX_DUTY_PCT", kDeveloper},
    {"OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS", kDeveloper},
    {"OCCTRACE_SAMPLE_BURST_MS", kDeveloper},
    {"OCCTRACE_ACHIEVED_IDLE", kDeveloper},
    {"OCCTRACE_ACHIEVED_PARK_DEINIT", kDeveloper},
    {"OCCTRACE_ACHIEVED_BACKGROUND_SETUP", kDeveloper},
    {"OCCTRACE_ACHIEVED_MAX_SIGNATURES", kDeveloper},
    {"OCCTRACE_ACHIEVED_REPLAY", kDeveloper},
    {"OCCTRACE_SAMPLES", kDeveloper},
    {"OCCTRACE_PM_IMAGE_SAMPLES", kDeveloper},
    {"OCCTRACE_PM_DECODE_MS", kDeveloper},
    {"OCCTRACE_PM_BUFFER_MB", kDeveloper},
    {"OCCTRACE_PM_NO_DRAM", kDeveloper},
};

bool IsKnown(std::string_view name) {
  return std::any_of(std::begin(kKnownSettings), std::end(kKnownSettings),
                     [&](const KnownSetting& known) { return known.name == name; });
}

// Where the trace goes, and what the writer and CUPTI's buffers do (SessionOptions).
void ParseSession(const EnvLookup& env, SessionOptions* options, std::vector<std::string>* warnings) {
  auto integer = [&](const char* name, long fallback, long min, long max) {
    return IntegerSetting(env, name, fallback, min, max, warnings);
  };
  options->flush_period_ms = static_cast<int>(integer("OCCTRACE_FLUSH_MS", options->flush_period_ms, 10, 60000));
  options->buffer_bytes =
      static_cast<size_t>(integer("OCCTRACE_BUFFER_MB", static_cast<long>(options->buffer_bytes >> 20), 1, 256)) << 20;
  options->max_buffers =
      static_cast<size_t>(integer("OCCTRACE_MAX_BUFFERS", static_cast<long>(options->max_buffers), 2, 65536));
  options->max_record_age_ms =
      static_cast<int>(integer("OCCTRACE_MAX_RECORD_AGE_MS", options->max_record_age_ms, 0, 3600000));
  options->debug_flush = SwitchSetting(env, "OCCTRACE_DEBUG_FLUSH", options->debug_flush, warnings);
  options->quiet = SwitchSetting(env, "OCCTRACE_QUIET", options->quiet, warnings);
  options->remove_if_empty = !SwitchSetting(env, "OCCTRACE_KEEP_EMPTY", false, warnings);
}

// OCCTRACE_MODE and light tracing's timing windows.
void ParseLight(const EnvLookup& env, Settings* settings, std::vector<std::string>* warnings) {
  SessionOptions& options = settings->session;
  if (std::optional<std::string> mode = env("OCCTRACE_MODE")) {
    const std::string_view value = TrimBlanks(*mode);
    if (value == "light") {
      options.light = true;
    } else if (value == "full" || value.empty()) {
      options.light = false;
    } else {
      warnings->push_back("OCCTRACE_MODE='" + *mode + "' is not full or light; using " +
                          (options.light ? "light" : "full"));
    }
  }
  auto integer = [&](const char* name, long fallback, long min, long max) {
    return IntegerSetting(env, name, fallback, min, max, warnings);
  };
  KernelWindowSettings& windows = options.windows;
  windows.period_ns = integer("OCCTRACE_LIGHT_PERIOD_MS", static_cast<long>(windows.period_ns / 1'000'000), 10, 3'600'000) * 1'000'000L;
  windows.window_ns = integer("OCCTRACE_LIGHT_WINDOW_MS", static_cast<long>(windows.window_ns / 1'000'000), 1, 3'600'000) * 1'000'000L;
  windows.max_duty = static_cast<double>(integer("OCCTRACE_LIGHT_MAX_DUTY_PCT", static_cast<long>(windows.max_duty * 100 + 0.5), 0, 100)) / 100.0;
  windows.windows_for_new_configs =
      SwitchSetting(env, "OCCTRACE_LIGHT_NEW_CONFIG_WINDOWS", windows.windows_for_new_configs, warnings);

  // Light tracing's own setting: read in every mode (a bad value is reported either way),
  // ignored with one line outside it.
  const bool detach = SwitchSetting(env, "OCCTRACE_LIGHT_DETACH", false, warnings);
  if (!options.light && detach) {
    warnings->push_back("OCCTRACE_LIGHT_DETACH=1 applies to light tracing only (OCCTRACE_MODE=light); ignored");
  }
  settings->light_detach = options.light && detach;
}

// OCCTRACE_ACHIEVED: pm (the default), sample, all or off.
void ParseAchievedMode(const EnvLookup& env, AchievedConfig* config, std::vector<std::string>* warnings) {
  std::optional<std::string> mode = env("OCCTRACE_ACHIEVED");
  if (!mode) return;
  const std::string_view text = TrimBlanks(*mode);
  if (text == "off" || text == "0" || text == "none") {
    config->mode = AchievedMode::kOff;
  } else if (text == "pm" || text.empty()) {
    config->mode = AchievedMode::kPm;
  } else if (text == "sample") {
    config->mode = AchievedMode::kSample;
  } else if (text == "all") {
    config->mode = AchievedMode::kAll;
  } else {
    warnings->push_back("OCCTRACE_ACHIEVED='" + *mode + "' is not pm|sample|all|off; using 'pm'");
  }
}

// How many launches are measured, and the budget of time they may take.
void ParseSampling(const EnvLookup& env, AchievedConfig* config, std::vector<std::string>* warnings) {
  if (std::optional<std::string> samples = env("OCCTRACE_SAMPLES")) {
    std::string_view text = TrimBlanks(*samples);
    int32_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size() && value >= 1) {
      config->samples_per_signature = value;
    } else {
      warnings->push_back("OCCTRACE_SAMPLES='" + *samples + "' is not an integer >= 1; using 1");
    }
  }
  if (std::optional<std::string> budget = env("OCCTRACE_SAMPLE_BUDGET")) {
    if (std::optional<double> fraction = ParseBudgetFraction(*budget)) {
      config->budget_fraction = *fraction;
    } else {
      warnings->push_back("OCCTRACE_SAMPLE_BUDGET='" + *budget +
                          "' is not a fraction in (0, 1] such as 0.05 or 5%; using 5%");
    }
  }
  if (std::optional<std::string> idle = env("OCCTRACE_ACHIEVED_IDLE")) {
    std::optional<double> seconds = ParseDouble(TrimBlanks(*idle));
    if (seconds && *seconds > 0 && *seconds <= 1e6) {
      config->idle_park_ns = static_cast<int64_t>(*seconds * 1e9);
    } else {
      warnings->push_back("OCCTRACE_ACHIEVED_IDLE='" + *idle + "' is not a number of seconds > 0; using 0.2");
    }
  }
  config->burst_ns =
      IntegerSetting(env, "OCCTRACE_SAMPLE_BURST_MS", config->burst_ns / 1'000'000, 0, 600'000, warnings) * 1'000'000;
  config->max_signatures = IntegerSetting(env, "OCCTRACE_ACHIEVED_MAX_SIGNATURES", static_cast<long>(config->max_signatures),
                                          0, static_cast<long>(config->max_signatures), warnings);
}

// How the range profiler is run and parked.
void ParseProfiler(const EnvLookup& env, AchievedConfig* config, std::vector<std::string>* warnings) {
  config->park_deinitializes =
      SwitchSetting(env, "OCCTRACE_ACHIEVED_PARK_DEINIT", config->park_deinitializes, warnings);
  config->background_setup =
      SwitchSetting(env, "OCCTRACE_ACHIEVED_BACKGROUND_SETUP", config->background_setup, warnings);
  if (std::optional<std::string> replay = env("OCCTRACE_ACHIEVED_REPLAY")) {
    const std::string_view value = TrimBlanks(*replay);
    if (value == "user" || value == "kernel") {
      config->user_replay = value == "user";
    } else {
      warnings->push_back("OCCTRACE_ACHIEVED_REPLAY='" + *replay + "' is not kernel or user; using kernel");
    }
  }
}

// OCCTRACE_PM_INTERVAL_US (default kDefaultPmIntervalNs, pm_device.h says why); the others
// measure the collector only.
PmCollectorSettings ParsePm(const EnvLookup& env, std::vector<std::string>* warnings) {
  PmCollectorSettings settings;
  const long interval_us = IntegerSetting(env, "OCCTRACE_PM_INTERVAL_US", static_cast<long>(kDefaultPmIntervalNs / 1000),
                                          1, 1'000'000, warnings);
  settings.device.interval_ns = static_cast<uint64_t>(interval_us) * 1000;
  // Room for two decode periods of samples per image (about 14 KB each on an H100): a decode
  // that falls late still fits one image, and an image full of samples (COUNTER_DATA_FULL) is
  // followed by another decode at once.
  const uint64_t per_period = static_cast<uint64_t>(settings.decode_period_ns) / settings.device.interval_ns;
  settings.device.max_samples_per_image = static_cast<uint32_t>(std::clamp<uint64_t>(2 * per_period, 256, 4000));
  settings.device.max_samples_per_image = static_cast<uint32_t>(IntegerSetting(
      env, "OCCTRACE_PM_IMAGE_SAMPLES", settings.device.max_samples_per_image, 16, 100'000, warnings));
  settings.decode_period_ns =
      IntegerSetting(env, "OCCTRACE_PM_DECODE_MS", settings.decode_period_ns / 1'000'000, 1, 1000, warnings) * 1'000'000;
  settings.device.hardware_buffer_bytes = static_cast<size_t>(IntegerSetting(
      env, "OCCTRACE_PM_BUFFER_MB", static_cast<long>(settings.device.hardware_buffer_bytes >> 20), 1, 4096, warnings)) << 20;
  settings.device.occupancy_only = SwitchSetting(env, "OCCTRACE_PM_NO_DRAM", false, warnings);
  return settings;
}

// PM sampling follows kernel records (pm_sampling_policy.h, pm_sample_join.h), which reach the
// writer up to the record age + one flush period late (trace_session.h); the new-code window
// and the running window must outlast that, or sampling would stop between two batches of
// records. Without a record age (0: never forced) records come when a buffer completes, and 2 s
// stands in. The writer holds at most half the collector's images waiting for records, so that
// the decode thread always finds one.
void FollowRecordLag(Settings* settings) {
  const SessionOptions& session = settings->session;
  const int64_t age_ms = session.max_record_age_ms > 0 ? session.max_record_age_ms : 2000;
  const int64_t lag_ns = (age_ms + session.flush_period_ms + 250) * 1'000'000;
  settings->pm.policy.new_code_ns = lag_ns;
  settings->session.pm_join.running_window_ns = lag_ns;
  settings->session.pm_join.interval_ns = settings->pm.device.interval_ns;
  settings->session.pm_join.max_held_images = std::max<size_t>(1, settings->pm.max_images / 2);
}

}  // namespace

std::span<const KnownSetting> KnownSettings() { return kKnownSettings; }

Mode Settings::mode() const {
  if (session.light) return light_detach ? Mode::kLightDetached : Mode::kLight;
  return Mode::kFull;
}

std::map<std::string, std::string> ProcessOcctraceVariables() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!text.starts_with(kPrefix)) continue;
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return variables;
}

Settings ParseSettings(const std::map<std::string, std::string>& variables, std::vector<std::string>* warnings) {
  for (const auto& [name, value] : variables) {
    if (std::string_view(name).starts_with(kPrefix) && !IsKnown(name)) {
      warnings->push_back(name + " is not an occtrace setting (docs/tracing.md lists them); ignored");
    }
  }
  const EnvLookup env = [&variables](const char* name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
  Settings settings;
  if (std::optional<std::string> pattern = env("OCCTRACE_OUTPUT"); pattern && !pattern->empty()) {
    settings.output_pattern = *pattern;
  }
  settings.force = SwitchSetting(env, "OCCTRACE_FORCE", false, warnings);
  ParseSession(env, &settings.session, warnings);
  ParseLight(env, &settings, warnings);
  ParseAchievedMode(env, &settings.achieved, warnings);
  ParseSampling(env, &settings.achieved, warnings);
  ParseProfiler(env, &settings.achieved, warnings);
  // Light tracing with detach exists to cost the least, and achieved occupancy needs CUPTI
  // attached (cuptiFinalize ends PM sampling and the range profiler alike): it measures none.
  if (settings.light_detach && settings.achieved.mode != AchievedMode::kOff) {
    if (env("OCCTRACE_ACHIEVED")) {
      warnings->push_back("OCCTRACE_ACHIEVED=" + *env("OCCTRACE_ACHIEVED") +
                          " does not apply to light tracing with detach (CUPTI is gone between windows); "
                          "achieved occupancy is not measured");
    }
    settings.achieved.mode = AchievedMode::kOff;
  }
  settings.pm = ParsePm(env, warnings);
  // One share for measurement, however it is measured (time_budget.h).
  settings.pm.policy.budget_fraction = settings.achieved.budget_fraction;
  FollowRecordLag(&settings);
  settings.triton_metadata = SwitchSetting(env, "OCCTRACE_TRITON_METADATA", true, warnings);
  settings.watch_subscribers = SwitchSetting(env, "OCCTRACE_WATCH_SUBSCRIBERS", true, warnings);
  settings.session.pm_samples = settings.achieved.mode == AchievedMode::kPm;
  return settings;
}

Settings ReadProcessSettings() {
  std::vector<std::string> warnings;
  Settings settings = ParseSettings(ProcessOcctraceVariables(), &warnings);
  for (const std::string& warning : warnings) LogLine("%s", warning.c_str());
  return settings;
}

}  // namespace occ::inj
