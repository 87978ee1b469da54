// REGEXP for occ::sql (declared in sqlite_db.h). Takes glibc's POSIX regcomp/regexec and the
// SQLite C API; gives RegisterRegexp (a `regexp` SQL function over a connection) and
// ValidateRegex (a user's pattern checked up front). A file of its own so that libocctrace.so,
// which links the rest of the SQLite layer but never filters by name, links none of it.
#include <regex.h>

#include <memory>

#include "sqlite/sqlite_db.h"

namespace occ::sql {
namespace {

struct CompiledRegex {
  regex_t regex{};
  ~CompiledRegex() { regfree(&regex); }
};

// The one compile and the one match of every name filter, in SQL (REGEXP) or not (NameFilter).
int CompilePattern(const char* pattern, regex_t* regex) {
  return regcomp(regex, pattern, REG_EXTENDED | REG_NOSUB);
}
bool PatternMatches(const regex_t* regex, const char* text) {
  return regexec(regex, text, 0, nullptr, 0) == 0;
}

void DeleteCompiledRegex(void* p) { delete static_cast<CompiledRegex*>(p); }

std::string RegexError(int rc, const regex_t* regex) {
  char buffer[256];
  regerror(rc, regex, buffer, sizeof buffer);
  return buffer;
}

void RegexpFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 2) return;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  auto* compiled = static_cast<CompiledRegex*>(sqlite3_get_auxdata(ctx, 0));
  if (compiled == nullptr) {
    const char* pattern = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
    auto fresh = std::make_unique<CompiledRegex>();
    int rc = CompilePattern(pattern ? pattern : "", &fresh->regex);
    if (rc != 0) {
      std::string message = "invalid regular expression: " + RegexError(rc, &fresh->regex);
      sqlite3_result_error(ctx, message.c_str(), -1);
      return;
    }
    compiled = fresh.release();
    // SQLite owns it from here (and may delete it at once: re-read it after).
    sqlite3_set_auxdata(ctx, 0, compiled, DeleteCompiledRegex);
    compiled = static_cast<CompiledRegex*>(sqlite3_get_auxdata(ctx, 0));
    if (compiled == nullptr) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }
  const char* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
  sqlite3_result_int(ctx, PatternMatches(&compiled->regex, text ? text : "") ? 1 : 0);
}

}  // namespace

Status RegisterRegexp(const Db& db) {
  int rc = sqlite3_create_function_v2(db.get(), "regexp", 2,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                      nullptr, RegexpFunction, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return db.Error("cannot register REGEXP");
  return OkStatus();
}

Status ValidateRegex(const std::string& pattern) {
  CompiledRegex compiled;
  int rc = CompilePattern(pattern.c_str(), &compiled.regex);
  if (rc != 0) {
    std::string message = "--kernel '" + pattern + "': invalid regular expression: " +
                          RegexError(rc, &compiled.regex);
    return InvalidArgument(std::move(message));
  }
  return OkStatus();
}

struct NameFilter::Compiled : CompiledRegex {};

StatusOr<NameFilter> NameFilter::Compile(const std::string& pattern) {
  auto compiled = std::make_shared<Compiled>();
  if (CompilePattern(pattern.c_str(), &compiled->regex) != 0) {
    OCC_RETURN_IF_ERROR(ValidateRegex(pattern));  // the message naming regcomp's complaint
    return InvalidArgument("--kernel '" + pattern + "': invalid regular expression");
  }
  return NameFilter(std::move(compiled));
}

bool NameFilter::Matches(const std::string& text) const {
  return PatternMatches(&compiled_->regex, text.c_str());
}

}  // namespace occ::sql
