// Output file naming: OCCTRACE_OUTPUT patterns and claiming the file without overwriting.
//   %p  process id          %h  host name        %q{VAR}  value of environment variable VAR
//   %n  smallest free sequence number (1, 2, ...) %%  a literal '%'
// Default pattern "occtrace-%p.db": every process of a multi-process job gets its own file.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace occ::inj {

inline constexpr std::string_view kDefaultOutputPattern = "occtrace-%p.db";

struct PatternContext {
  long pid = 0;
  std::string host;
  // Returns the variable's value or nullptr when unset (an unset %q{VAR} expands to "").
  std::function<const char*(const char*)> getenv;
};

// The pid, host name and environment of this process.
PatternContext CurrentProcessContext();

// Expands every placeholder; %n becomes `sequence`. False + *error on a malformed pattern
// (unknown placeholder, unterminated %q{, empty result).
bool ExpandOutputPattern(std::string_view pattern, const PatternContext& context, long sequence,
                         std::string* path, std::string* error);

struct ClaimedOutput {
  bool ok = false;
  std::string path;   // the file created (empty, ready for SQLite)
  std::string error;  // one line for the user when !ok
  // An open descriptor of the file holding flock(LOCK_EX): "a live process writes this trace".
  // Kept open for the rest of the process (the kernel releases it at exit, however the process
  // ends); -1 when !ok.
  int lock_fd = -1;
};

// Creates the output file exclusively (O_EXCL), so neither an earlier trace nor a concurrent
// process is ever overwritten, and locks it (flock) for as long as the process lives. An existing
// file is an error unless `force`, which removes it and its -wal/-shm/-journal companions first,
// but never a file another live process holds: with a fixed name and --force, a job's helper
// processes (torch.compile's compile workers, a launcher) would otherwise unlink the trace the
// main process is writing, and remove the new file at exit for having launched nothing. With %n,
// the smallest free number is taken.
ClaimedOutput ClaimOutputFile(std::string_view pattern, const PatternContext& context, bool force);

}  // namespace occ::inj
