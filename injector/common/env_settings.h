// How an OCCTRACE_* value is read: switches and integers, one way everywhere. settings.cc is
// their one caller in injector/ (it also owns the list of names and reads the environment).
//
// A bad value never stops the traced program and never silently changes behaviour: the
// setting keeps its default and one warning names the variable, the value and what was
// expected ("OCCTRACE_FLUSH_MS='fast' is not an integer in [10, 60000]; using 250"). Callers
// print the warnings with LogLine, which adds the "occtrace: " prefix.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace occ::inj {

// Returns the value of a setting, or nullopt when unset (settings.cc: from its map of the
// OCCTRACE_* variables).
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Without leading and trailing blanks (spaces, tabs).
std::string_view TrimBlanks(std::string_view text);

// A finite decimal number, the whole text; nullopt otherwise.
std::optional<double> ParseDouble(std::string_view text);

// Parses "0.05" or "5%" into a fraction in (0, 1]; nullopt if malformed or out of range.
std::optional<double> ParseBudgetFraction(std::string_view text);

// On/off settings: 1, true, yes, on / 0, false, no, off (any case). Unset or blank: fallback.
bool SwitchSetting(const EnvLookup& env, const char* name, bool fallback,
                   std::vector<std::string>* warnings);

// A decimal integer in [min, max]. Unset or blank: fallback.
long IntegerSetting(const EnvLookup& env, const char* name, long fallback, long min, long max,
                    std::vector<std::string>* warnings);

}  // namespace occ::inj
