#include "injector/common/env_settings.h"

#include <strings.h>

#include <charconv>
#include <cmath>
#include <optional>

namespace occ::inj {
namespace {

std::optional<bool> ParseSwitch(std::string_view text) {
  const std::string word(text);
  for (const char* on : {"1", "true", "yes", "on"}) {
    if (strcasecmp(word.c_str(), on) == 0) return true;
  }
  for (const char* off : {"0", "false", "no", "off"}) {
    if (strcasecmp(word.c_str(), off) == 0) return false;
  }
  return std::nullopt;
}

// The variable's value without blanks; nullopt when unset or blank.
std::optional<std::string> Lookup(const EnvLookup& env, const char* name, std::string* raw) {
  std::optional<std::string> value = env(name);
  if (!value) return std::nullopt;
  *raw = *value;
  std::string_view text = TrimBlanks(*value);
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

}  // namespace

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool SwitchSetting(const EnvLookup& env, const char* name, bool fallback,
                   std::vector<std::string>* warnings) {
  std::string raw;
  std::optional<std::string> text = Lookup(env, name, &raw);
  if (!text) return fallback;
  if (std::optional<bool> value = ParseSwitch(*text)) return *value;
  warnings->push_back(std::string(name) + "='" + raw + "' is not 0 or 1; using " + (fallback ? "1" : "0"));
  return fallback;
}

long IntegerSetting(const EnvLookup& env, const char* name, long fallback, long min, long max,
                    std::vector<std::string>* warnings) {
  std::string raw;
  std::optional<std::string> text = Lookup(env, name, &raw);
  if (!text) return fallback;
  long value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec == std::errc() && ptr == end && value >= min && value <= max) return value;
  warnings->push_back(std::string(name) + "='" + raw + "' is not an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]; using " + std::to_string(fallback));
  return fallback;
}

std::optional<double> ParseDouble(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> ParseBudgetFraction(std::string_view text) {
  text = TrimBlanks(text);
  bool percent = false;
  if (!text.empty() && text.back() == '%') {
    percent = true;
    text = TrimBlanks(text.substr(0, text.size() - 1));
  }
  std::optional<double> value = ParseDouble(text);
  if (!value) return std::nullopt;
  double fraction = percent ? *value / 100.0 : *value;
  if (!(fraction > 0.0) || fraction > 1.0) return std::nullopt;
  return fraction;
}

}  // namespace occ::inj
