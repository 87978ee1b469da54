// Every OCCTRACE_* setting, parsed once into one immutable Settings, which yields the run's Mode.
//
// This file and settings.cc are the only place in injector/ that reads an OCCTRACE_* variable
// (the launcher, occtrace_main.cc, only sets them). kKnownSettings is the one list of names:
//   - a bad value keeps the default, with one warning naming the variable, the value and what
//     was expected (env_settings.h);
//   - an OCCTRACE_* name not in the list gets one warning, so that a misspelling is visible;
//   - a setting that does not apply to the chosen mode gets one warning and is ignored.
// Warnings come back as lines (without the "occtrace: " prefix); ReadProcessSettings prints them.
// User settings and developer settings are documented in docs/tracing.md.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "injector/achieved/achieved_policy.h"
#include "injector/session/output_path.h"
#include "injector/achieved/pm/pm_settings.h"
#include "injector/session/trace_session.h"

namespace occ::inj {

// Who a setting is for: users (docs/tracing.md, "Settings") or developers measuring occtrace
// itself (docs/tracing.md, "Developer settings"; not kept stable).
enum class SettingAudience { kUser, kDeveloper };

struct KnownSetting {
  std::string_view name;
  SettingAudience audience;
};

// Every OCCTRACE_* name occtrace reads.
std::span<const KnownSetting> KnownSettings();

// How launches are recorded and whether CUPTI stays attached. InitializeTracing switches on it.
enum class Mode {
  // The default: every launch from CUPTI's kernel records; CUPTI attached for the whole run,
  // whatever OCCTRACE_ACHIEVED says (pm, the default; sample or all; off).
  kFull,
  // OCCTRACE_MODE=light: every launch from CUPTI's launch callbacks, GPU time in windows.
  kLight,
  // OCCTRACE_MODE=light with OCCTRACE_LIGHT_DETACH=1: CUPTI attached only in timing windows,
  // launches recorded by the launch hook in between (cupti_controller.h); no achieved
  // occupancy, which needs CUPTI attached.
  kLightDetached,
};

struct Settings {
  std::string output_pattern{kDefaultOutputPattern};  // OCCTRACE_OUTPUT (unset or blank: default)
  bool force = false;                                   // OCCTRACE_FORCE
  // OCCTRACE_QUIET, _KEEP_EMPTY, _MODE, _FLUSH_MS, _BUFFER_MB, _MAX_BUFFERS, _MAX_RECORD_AGE_MS,
  // _DEBUG_FLUSH, _LIGHT_PERIOD_MS, _LIGHT_WINDOW_MS, _LIGHT_MAX_DUTY_PCT,
  // _LIGHT_NEW_CONFIG_WINDOWS; pm_samples follows from the mode. `path` and
  // `triton_cache_roots` are left for InitializeTracing.
  SessionOptions session;
  bool light_detach = false;     // OCCTRACE_LIGHT_DETACH (light tracing only)
  AchievedConfig achieved;       // OCCTRACE_ACHIEVED, _SAMPLES, _SAMPLE_BUDGET, ... (achieved_policy.h)
  PmCollectorSettings pm;        // OCCTRACE_PM_* (OCCTRACE_ACHIEVED=pm only)
  bool triton_metadata = true;   // OCCTRACE_TRITON_METADATA
  bool watch_subscribers = true; // OCCTRACE_WATCH_SUBSCRIBERS

  Mode mode() const;
};

// The OCCTRACE_* variables of the process environment (name -> value).
std::map<std::string, std::string> ProcessOcctraceVariables();

// Parses `variables` (OCCTRACE_* name -> value; other names are ignored). Never fails: what
// cannot be used is a warning line in *warnings and the default.
Settings ParseSettings(const std::map<std::string, std::string>& variables, std::vector<std::string>* warnings);

// ParseSettings(ProcessOcctraceVariables()) with its warnings printed (LogLine), once per call:
// InitializeTracing calls it once per process.
Settings ReadProcessSettings();

}  // namespace occ::inj
