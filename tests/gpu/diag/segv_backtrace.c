// LD_PRELOAD'ed into a traced program on the GPU machine (which has no gdb; cuda-gdb would take
// CUPTI's one subscriber from occtrace): on SIGSEGV, SIGBUS or SIGABRT, prints the crashing
// thread's name and backtrace to stderr, then re-raises with the default action.
//   gcc -shared -fPIC -O1 -g -o segv_backtrace.so segv_backtrace.c
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_fatal(int sig) {
  char name[32] = "?";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  char line[128];
  int n = 0;
  const char* what = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "SIGABRT";
  n = (int)strlen(what);
  memcpy(line, what, (size_t)n);
  const char* in = " in thread ";
  memcpy(line + n, in, strlen(in));
  n += (int)strlen(in);
  size_t len = strnlen(name, sizeof(name));
  memcpy(line + n, name, len);
  n += (int)len;
  line[n++] = '\n';
  write(2, "segv_backtrace: ", 16);
  write(2, line, (size_t)n);
  void* frames[64];
  int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc_s now, not inside the handler
  signal(SIGSEGV, on_fatal);
  signal(SIGBUS, on_fatal);
  signal(SIGABRT, on_fatal);
}
