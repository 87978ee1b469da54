#include "injector/session/trace_session_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <mutex>

namespace occ::inj {
namespace {

constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumHandledSignals = static_cast<int>(std::size(kHandledSignals));
struct sigaction g_previous_actions[kNumHandledSignals];
std::atomic<bool> g_installed[kNumHandledSignals];
std::atomic<int> g_pending_signal{0};   // default-disposition signal to finish with
std::atomic<int> g_commit_request{0};   // a chained signal: commit now
std::atomic<int> g_signal_wake_fd{-1};
std::atomic<pid_t> g_signal_owner_pid{0};
std::atomic<int> g_live_sessions{0};
std::atomic<void (*)()> g_mark_forked_child{nullptr};  // set once, before the hook is installed

int SignalIndex(int signal_number) {
  for (int i = 0; i < kNumHandledSignals; ++i) {
    if (kHandledSignals[i] == signal_number) return i;
  }
  return -1;
}

bool IsFunction(const struct sigaction& action) {
  if ((action.sa_flags & SA_SIGINFO) != 0) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void CallPrevious(const struct sigaction& previous, int signal_number, siginfo_t* info,
                  void* context) {
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(signal_number, info, context);
  } else {
    previous.sa_handler(signal_number);
  }
}

void WakeFromSignal() {
  int fd = g_signal_wake_fd.load();
  if (fd < 0) return;
  uint64_t one = 1;
  ssize_t ignored = write(fd, &one, sizeof(one));
  static_cast<void>(ignored);
}

// Async-signal-safe: atomics, getpid, write, sigaction, raise only.
void OnSignal(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const int index = SignalIndex(signal_number);
  if (index < 0) return;
  const struct sigaction& previous = g_previous_actions[index];
  if (getpid() != g_signal_owner_pid.load()) {
    // A forked child: behave as if occtrace had never installed anything.
    if (IsFunction(previous)) {
      CallPrevious(previous, signal_number, info, context);
    } else {
      sigaction(signal_number, &previous, nullptr);
      raise(signal_number);
    }
    errno = saved_errno;
    return;
  }
  if (IsFunction(previous)) {
    // The program handles this signal itself (Python's SIGINT -> KeyboardInterrupt): make
    // what we have durable now and let the program decide; its exit path flushes the rest.
    g_commit_request.store(1);
    WakeFromSignal();
    CallPrevious(previous, signal_number, info, context);
    errno = saved_errno;
    return;
  }
  int expected = 0;
  if (g_signal_wake_fd.load() < 0 || !g_pending_signal.compare_exchange_strong(expected, signal_number)) {
    // No writer to finish the trace, or a second signal while the first is being handled:
    // terminate now, as the default disposition would.
    sigaction(signal_number, &previous, nullptr);
    raise(signal_number);
    errno = saved_errno;
    return;
  }
  WakeFromSignal();
  errno = saved_errno;
}

void ForkChildHook() {
  if (g_live_sessions.load() > 0) g_mark_forked_child.load()();
}

}  // namespace

void RegisterForkHandler(void (*mark_forked_child)()) {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [mark_forked_child] {
    g_mark_forked_child.store(mark_forked_child);
    pthread_atfork(nullptr, nullptr, ForkChildHook);
  });
}

void CountLiveSession(int delta) { g_live_sessions.fetch_add(delta); }

void InstallTerminationHandlers(pid_t owner_pid, int wake_fd) {
  g_signal_owner_pid.store(owner_pid);
  g_signal_wake_fd.store(wake_fd);
  for (int i = 0; i < kNumHandledSignals; ++i) {
    struct sigaction current {};
    if (sigaction(kHandledSignals[i], nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN && (current.sa_flags & SA_SIGINFO) == 0) continue;  // keep ignoring
    g_previous_actions[i] = current;
    struct sigaction ours {};
    ours.sa_sigaction = OnSignal;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    if (sigaction(kHandledSignals[i], &ours, nullptr) == 0) g_installed[i].store(true);
  }
}

int PendingTerminationSignal(int wake_fd) {
  const int signal_number = g_pending_signal.load();
  return signal_number != 0 && g_signal_wake_fd.load() == wake_fd ? signal_number : 0;
}

bool TakeCommitRequest() { return g_commit_request.exchange(0) != 0; }

void ResendSignal(int signal_number) {
  const int index = SignalIndex(signal_number);
  if (index >= 0) {
    g_installed[index].store(false);
    sigaction(signal_number, &g_previous_actions[index], nullptr);
  }
  // Process-directed: delivered to a program thread (this one blocks all signals).
  kill(getpid(), signal_number);
}

void ResendLateSignal(int wake_fd) {
  const int late_signal = g_pending_signal.load();
  const int index = SignalIndex(late_signal);
  if (late_signal != 0 && index >= 0 && g_signal_wake_fd.load() == wake_fd) {
    g_installed[index].store(false);
    sigaction(late_signal, &g_previous_actions[index], nullptr);
    kill(getpid(), late_signal);
  }
}

void RestoreSignalHandlers(int wake_fd) {
  if (g_signal_wake_fd.load() == wake_fd) g_signal_wake_fd.store(-1);
  for (int i = 0; i < kNumHandledSignals; ++i) {
    if (g_installed[i].exchange(false)) sigaction(kHandledSignals[i], &g_previous_actions[i], nullptr);
  }
}

}  // namespace occ::inj
