// Timing of subprocess runs for the analyzer benchmarks: wall time and peak RSS of one child,
// and the median of a series of them.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace occ::bench {

struct Sample {
  double wall_s = 0;
  long max_rss_kb = 0;
  int exit_code = -1;
};

// Runs argv with stdout to /dev/null; wall time and peak RSS of the child.
inline Sample RunChild(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    FILE* devnull = std::fopen("/dev/null", "w");
    if (devnull) dup2(fileno(devnull), STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  Sample s;
  int status = 0;
  struct rusage usage {};
  if (pid > 0 && wait4(pid, &status, 0, &usage) == pid) {
    s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s.max_rss_kb = usage.ru_maxrss;
    s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return s;
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

struct Series {
  std::vector<double> wall;
  long max_rss_kb = 0;
  bool failed = false;
  void Add(const Sample& s) {
    wall.push_back(s.wall_s);
    max_rss_kb = std::max(max_rss_kb, s.max_rss_kb);
    failed |= s.exit_code != 0;
  }
};

}  // namespace occ::bench
