#include "injector/launcher/launcher_cupti.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

extern char** environ;

namespace occ::launcher {
namespace {

bool Readable(const std::string& path) { return !path.empty() && access(path.c_str(), R_OK) == 0; }

bool SameFolder(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> SplitPath(const char* value) {
  std::vector<std::string> parts;
  if (value == nullptr) return parts;
  std::stringstream in(value);
  std::string part;
  while (std::getline(in, part, ':')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// `name` as execvp would find it: itself when it has a slash, else the first executable on PATH.
std::string ResolveCommand(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  for (const std::string& dir : SplitPath(std::getenv("PATH"))) {
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool IsPythonName(const std::string& path) {
  static const std::regex kPython("python[0-9.]*");
  return std::regex_match(Basename(path), kPython);
}

// The interpreter of a script's "#!" line when it is a Python ("#!/usr/bin/env python3",
// "#!/venv/bin/python3.12"), else "".
std::string ShebangPython(const std::string& script) {
  std::ifstream in(script, std::ios::binary);
  std::array<char, 512> head{};
  in.read(head.data(), head.size() - 1);
  std::string line(head.data(), static_cast<size_t>(in.gcount()));
  if (!line.starts_with("#!")) return "";
  line = line.substr(2, line.find('\n') == std::string::npos ? std::string::npos : line.find('\n') - 2);
  std::stringstream words(line);
  std::string interpreter;
  words >> interpreter;
  if (Basename(interpreter) == "env") {
    std::string word;
    while (words >> word && word.starts_with("-")) {
    }
    interpreter = ResolveCommand(word);
  }
  return IsPythonName(interpreter) ? interpreter : "";
}

// Runs argv (no shell) with stdin and stderr on /dev/null and returns its stdout; "" when it
// cannot run or exits non-zero.
std::string Output(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (std::string& arg : copy) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (spawned == 0) {
    std::array<char, 4096> chunk{};
    ssize_t n = 0;
    while ((n = read(fds[0], chunk.data(), chunk.size())) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) out.append(chunk.data(), static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  if (spawned != 0) return "";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : separator) + part;
  return joined;
}

}  // namespace

std::vector<CuptiPlace> CuptiPlaces(const CuptiSearch& search) {
  std::vector<CuptiPlace> places;
  for (const std::string& dir : search.ld_library_path) places.push_back({dir, false});
  for (const std::string& dir : search.python_path) {
    places.push_back({dir + "/nvidia/cu13/lib", true});
    places.push_back({dir + "/nvidia/cuda_cupti/lib", true});
  }
  for (const std::string& root : search.cuda_roots) {
    places.push_back({root + "/extras/CUPTI/lib64", true});
    places.push_back({root + "/lib64", true});
  }
  if (!search.runpath_dir.empty()) places.push_back({search.runpath_dir, false});
  return places;
}

bool PickCupti(const std::vector<CuptiPlace>& places, const std::string& ldconfig_path,
               CuptiFound* found) {
  for (const CuptiPlace& place : places) {
    const std::string path = place.dir + "/" + kCuptiSoname;
    if (!Readable(path)) continue;
    // A folder the loader searches anyway under another name (CUDA's lib64 link to the
    // RUNPATH folder) needs no LD_LIBRARY_PATH entry.
    bool searched = !place.add;
    for (const CuptiPlace& other : places) {
      searched = searched || (!other.add && SameFolder(other.dir, place.dir));
    }
    *found = {path, searched ? "" : place.dir};
    return true;
  }
  if (Readable(ldconfig_path)) {
    *found = {ldconfig_path, ""};
    return true;
  }
  return false;
}

std::string CuptiNotFoundMessage(const CuptiSearch& search) {
  std::vector<std::string> looked;
  if (!search.ld_library_path.empty()) {
    looked.push_back("LD_LIBRARY_PATH (" + Join(search.ld_library_path, ":") + ")");
  }
  if (search.python.empty()) {
    looked.push_back("no Python (none on PATH)");
  } else {
    looked.push_back("nvidia/cu13/lib and nvidia/cuda_cupti/lib under the sys.path of " +
                     search.python + " (" + Join(search.python_path, ", ") + ")");
  }
  std::vector<std::string> cuda;
  for (const std::string& root : search.cuda_roots) cuda.push_back(root + "/{extras/CUPTI/lib64,lib64}");
  if (!search.runpath_dir.empty()) cuda.push_back(search.runpath_dir);
  looked.push_back(Join(cuda, ", "));
  looked.push_back("ldconfig -p");
  return std::string("occtrace: ") + kCuptiSoname + " not found; looked in " + Join(looked, "; ") +
         ". Install PyTorch's CUDA 13 wheels (nvidia-cuda-cupti) or the CUDA 13 toolkit, or put "
         "the folder holding " + kCuptiSoname + " on LD_LIBRARY_PATH";
}

std::string TracedPython(const std::vector<std::string>& command) {
  const std::string program = command.empty() ? "" : ResolveCommand(command.front());
  if (!program.empty() && IsPythonName(program)) return program;
  if (!program.empty()) {
    std::string interpreter = ShebangPython(program);
    if (!interpreter.empty()) return interpreter;
  }
  return ResolveCommand("python3");
}

CuptiSearch CuptiSearchFromEnvironment(const std::vector<std::string>& command) {
  CuptiSearch search;
  search.ld_library_path = SplitPath(std::getenv("LD_LIBRARY_PATH"));
  search.python = TracedPython(command);
  if (!search.python.empty()) {
    std::stringstream lines(Output({search.python, "-c", "import sys\nfor p in sys.path: print(p)"}));
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty()) search.python_path.push_back(line);
    }
  }
  const char* home = std::getenv("CUDA_HOME");
  const char* path = std::getenv("CUDA_PATH");
  for (const char* root : {home, path, "/usr/local/cuda"}) {
    if (root == nullptr || *root == '\0') continue;
    if (std::find(search.cuda_roots.begin(), search.cuda_roots.end(), root) == search.cuda_roots.end()) {
      search.cuda_roots.push_back(root);
    }
  }
#ifdef OCC_CUPTI_RUNPATH
  search.runpath_dir = OCC_CUPTI_RUNPATH;
#endif
  return search;
}

std::string LdconfigCupti() {
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    if (access(ldconfig, X_OK) != 0) continue;
    // Lines look like "\tlibcupti.so.13 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcupti.so.13".
    std::stringstream lines(Output({ldconfig, "-p"}));
    std::string line;
    const std::string name = std::string(kCuptiSoname) + " (";
    while (std::getline(lines, line)) {
      const size_t at = line.find(name);
      const size_t arrow = line.find(" => ");
      if (at != std::string::npos && arrow != std::string::npos && Readable(line.substr(arrow + 4))) {
        return line.substr(arrow + 4);
      }
    }
    return "";
  }
  return "";
}

}  // namespace occ::launcher
