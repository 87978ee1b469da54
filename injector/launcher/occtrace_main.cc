// occtrace: runs a command with libocctrace.so injected, like `nsys profile`.
//   occtrace [-o FILE] [--force] [--achieved MODE] [--quiet] -- COMMAND ARGS...
// It only sets environment variables and exec's the command, so the traced process is the
// command itself (same pid, signals, exit status).
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "injector/launcher/launcher_cupti.h"

namespace {

bool IsFile(const std::string& path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// libocctrace.so next to the launcher (build tree) or in ../lib/occtrace (the installed layout of
// `cmake --install`, the tarball, the .deb and the wheel's package folder; lib/occtrace keeps it
// off the linker's path: it is loaded by CUDA_INJECTION64_PATH, never linked). Found from
// /proc/self/exe, so an installed tree can be moved anywhere.
std::string FindInjectionLibrary() {
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::vector<std::string> candidates;
  if (n > 0) {
    std::string dir = Dirname(std::string(self, static_cast<size_t>(n)));
    candidates.push_back(dir + "/libocctrace.so");
    candidates.push_back(dir + "/../lib/occtrace/libocctrace.so");
  }
  for (const std::string& candidate : candidates) {
    if (!IsFile(candidate)) continue;
    char resolved[PATH_MAX];
    return realpath(candidate.c_str(), resolved) != nullptr ? resolved : candidate;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"occtrace [OPTIONS] -- COMMAND ARGS...\n"
               "Runs COMMAND with every CUDA kernel launch recorded into an SQLite trace.",
               "occtrace"};
  std::string output;
  bool force = false;
  bool quiet = false;
  std::string achieved;
  std::string mode;
  app.add_option("-o,--output", output,
                 "trace file; placeholders %p pid, %h host, %q{VAR} environment variable, %n "
                 "sequence number, %% (default occtrace-%p.db)");
  app.add_flag("--force", force, "overwrite an existing trace file");
  app.add_option("--achieved", achieved, "achieved-occupancy measurement: pm (PM sampling, the default), sample or all (kernel replay), or off")
      ->check(CLI::IsMember({"pm", "sample", "all", "off"}));
  app.add_option("--mode", mode,
                 "full: every launch timed (CUPTI kernel records); light: every launch's "
                 "configuration from launch callbacks, GPU time sampled in windows")
      ->check(CLI::IsMember({"full", "light"}));
  bool light_detach = false;
  app.add_flag("--light-detach", light_detach,
               "light tracing with CUPTI attached only in its timing windows: the lowest cost; "
               "achieved occupancy is sampled while CUPTI is attached (implies --mode light)");
  app.add_flag("--quiet", quiet, "no summary line at exit");
  app.prefix_command();
  app.footer("Example: occtrace -o 'train-%q{RANK}.db' -- python train.py --epochs 1");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (light_detach && mode == "full") {
    std::fprintf(stderr, "occtrace: --light-detach is a light tracing mode; it cannot go with --mode full\n");
    return 2;
  }
  if (light_detach) mode = "light";
  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::fprintf(stderr, "occtrace: no command given (usage: occtrace [options] -- COMMAND ARGS...)\n");
    return 2;
  }
  const std::string library = FindInjectionLibrary();
  if (library.empty()) {
    std::fprintf(stderr,
                 "occtrace: libocctrace.so not found next to the occtrace executable or in "
                 "../lib/occtrace; reinstall occtrace or set CUDA_INJECTION64_PATH and run the command "
                 "directly\n");
    return 2;
  }
  occ::launcher::CuptiSearch search = occ::launcher::CuptiSearchFromEnvironment(command);
  occ::launcher::CuptiFound cupti;
  if (!occ::launcher::PickCupti(occ::launcher::CuptiPlaces(search), "", &cupti) &&
      !occ::launcher::PickCupti({}, occ::launcher::LdconfigCupti(), &cupti)) {
    std::fprintf(stderr, "%s\n", occ::launcher::CuptiNotFoundMessage(search).c_str());
    return 2;
  }
  if (!cupti.add_dir.empty()) {
    // Appended, so the user's own entries keep their precedence.
    const char* old = std::getenv("LD_LIBRARY_PATH");
    const std::string value = (old != nullptr && *old != '\0' ? std::string(old) + ":" : "") + cupti.add_dir;
    setenv("LD_LIBRARY_PATH", value.c_str(), 1);
  }
  setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
  if (!output.empty()) setenv("OCCTRACE_OUTPUT", output.c_str(), 1);
  if (force) setenv("OCCTRACE_FORCE", "1", 1);
  if (quiet) setenv("OCCTRACE_QUIET", "1", 1);
  if (!achieved.empty()) setenv("OCCTRACE_ACHIEVED", achieved.c_str(), 1);
  if (!mode.empty()) setenv("OCCTRACE_MODE", mode.c_str(), 1);
  if (light_detach) setenv("OCCTRACE_LIGHT_DETACH", "1", 1);

  std::vector<char*> args;
  for (std::string& arg : command) args.push_back(arg.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "occtrace: cannot run '%s': %s\n", args[0], std::strerror(errno));
  return 2;
}
