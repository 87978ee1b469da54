#include "injector/writer/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>

namespace occ::inj {
namespace {
// Index of the bracket opening the group that closes at `close` (scanning backwards), or npos.
size_t MatchingOpen(std::string_view text, size_t close, char open_char, char close_char) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (text[i] == close_char) {
      ++depth;
    } else if (text[i] == open_char) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
}  // namespace

std::string ShortKernelName(std::string_view name) {
  std::string_view s = name;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  // Trailing cv/ref qualifiers of member functions.
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    if (EndsWith(s, q)) s.remove_suffix(q.size());
  }
  // Parameter list.
  if (!s.empty() && s.back() == ')') {
    size_t open = MatchingOpen(s, s.size() - 1, '(', ')');
    if (open != std::string_view::npos && open > 0) s = s.substr(0, open);
  }
  // Template arguments (but not "operator<" / "operator>>" style names).
  while (!s.empty() && s.back() == '>' && !EndsWith(s, "operator>") && !EndsWith(s, "operator>>")) {
    size_t open = MatchingOpen(s, s.size() - 1, '<', '>');
    if (open == std::string_view::npos || open == 0) break;
    s = s.substr(0, open);
  }
  // Namespace / class qualifiers and the return type: cut after the last top-level "::" or
  // space, skipping over bracketed groups such as "(anonymous namespace)".
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '<' || c == '[') {
      ++depth;
    } else if (c == ')' || c == '>' || c == ']') {
      --depth;
    } else if (depth == 0) {
      if (c == ' ' && s.substr(0, i).find("operator") == std::string_view::npos) start = i + 1;
      if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') start = i + 2;
    }
  }
  s = s.substr(start);
  if (s.empty()) return std::string(name);
  return std::string(s);
}

KernelNames MakeKernelNames(std::string_view mangled) {
  KernelNames names;
  names.mangled = std::string(mangled);
  int status = -1;
  // __cxa_demangle accepts only Itanium names; C names (extern "C" kernels) stay as they are.
  char* demangled = names.mangled.starts_with("_Z")
                        ? abi::__cxa_demangle(names.mangled.c_str(), nullptr, nullptr, &status)
                        : nullptr;
  if (status == 0 && demangled != nullptr) {
    names.demangled = demangled;
  } else {
    names.demangled = names.mangled;
  }
  std::free(demangled);
  names.short_name = ShortKernelName(names.demangled);
  return names;
}

}  // namespace occ::inj
