#include "injector/session/output_path.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace occ::inj {

PatternContext CurrentProcessContext() {
  PatternContext context;
  context.pid = static_cast<long>(getpid());
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) context.host = host;
  if (context.host.empty()) context.host = "localhost";
  context.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  return context;
}

bool ExpandOutputPattern(std::string_view pattern, const PatternContext& context, long sequence,
                         std::string* path, std::string* error) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) {
      *error = "output pattern '" + std::string(pattern) + "' ends with a lone '%'";
      return false;
    }
    char placeholder = pattern[++i];
    switch (placeholder) {
      case 'p': out += std::to_string(context.pid); break;
      case 'h': out += context.host; break;
      case 'n': out += std::to_string(sequence); break;
      case '%': out.push_back('%'); break;
      case 'q': {
        size_t close = pattern.find('}', i + 1);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string_view::npos ||
            close == i + 2) {
          *error = "output pattern '" + std::string(pattern) + "': %q must be followed by {VARIABLE}";
          return false;
        }
        std::string name(pattern.substr(i + 2, close - i - 2));
        const char* value = context.getenv ? context.getenv(name.c_str()) : nullptr;
        if (value != nullptr) out += value;
        i = close;
        break;
      }
      default:
        *error = "output pattern '" + std::string(pattern) + "' has unknown placeholder '%" +
                 std::string(1, placeholder) + "' (known: %p %h %q{VAR} %n %%)";
        return false;
    }
  }
  if (out.empty()) {
    *error = "output pattern '" + std::string(pattern) + "' expands to an empty file name";
    return false;
  }
  *path = std::move(out);
  return true;
}

namespace {
bool PatternHasSequence(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == 'n') return true;
    ++i;  // skip the placeholder character, so "%%n" is a literal "%n"
  }
  return false;
}

// The new file's descriptor, locked; otherwise -errno.
int CreateExclusive(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  // Nobody else can hold a lock on a file this call just created: a failure here is a file
  // system without flock, where --force then protects nothing; the claim still stands.
  flock(fd, LOCK_EX | LOCK_NB);
  return fd;
}

// Whether a live process holds the trace at `path` (its ClaimedOutput::lock_fd).
bool HeldByALiveProcess(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // also releases the lock if this call got it
  return held;
}
}  // namespace

ClaimedOutput ClaimOutputFile(std::string_view pattern, const PatternContext& context, bool force) {
  ClaimedOutput result;
  const bool sequenced = PatternHasSequence(pattern);
  constexpr long kMaxSequence = 100000;
  for (long sequence = 1; sequence <= (sequenced ? kMaxSequence : 1); ++sequence) {
    std::string path;
    if (!ExpandOutputPattern(pattern, context, sequence, &path, &result.error)) return result;
    int fd = CreateExclusive(path);
    if (fd == -EEXIST && sequenced) continue;
    if (fd == -EEXIST && force) {
      if (HeldByALiveProcess(path)) {
        result.error = "output file " + path +
                       " is being written by another traced process; not replacing it, even with --force "
                       "(put %p or %n in OCCTRACE_OUTPUT for one file per process)";
        return result;
      }
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
      fd = CreateExclusive(path);
    }
    if (fd == -EEXIST) {
      result.error = "output file " + path +
                     " already exists; not overwriting it (set OCCTRACE_FORCE=1 or use occtrace "
                     "--force, or put %p or %n in OCCTRACE_OUTPUT)";
      return result;
    }
    if (fd < 0) {
      result.error = "cannot create output file " + path + ": " + std::strerror(-fd);
      return result;
    }
    result.ok = true;
    result.path = std::move(path);
    result.lock_fd = fd;
    return result;
  }
  result.error = "no free sequence number for output pattern '" + std::string(pattern) + "'";
  return result;
}

}  // namespace occ::inj
