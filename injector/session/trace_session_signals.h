// TraceSession's process-wide signal and fork plumbing (trace_session.h, "Termination").
//
// SIGINT/SIGTERM/SIGHUP: the handler (InstallTerminationHandlers, called by
// TraceSession::InstallSignalHandlers) only marks the signal and writes the session's eventfd.
// A signal whose disposition was the default is left for the writer thread to finish the trace
// with (PendingTerminationSignal); it then restores that disposition and sends the signal again
// (ResendSignal), so the process ends as it would have. A signal the program handles itself
// (Python's SIGINT) asks the writer for a commit (TakeCommitRequest) and is passed on to the
// program's handler at once.
// fork: in a child of a process with a live session, every session call is a no-op
// (TraceSession::InForkedChild, set through the pthread_atfork hook that RegisterForkHandler
// installs).
//
// Takes: the owning session's pid and eventfd at installation, and the session's fork-child
// marker at registration; it knows nothing else of the session. Gives: the functions below, for
// the writer loop (trace_session_writer_loop.cc) and for session setup and shutdown
// (trace_session.cc). One session per process owns the handlers. Everything the handler
// touches is a lock-free atomic or written before installation.
#pragma once

#include <sys/types.h>

namespace occ::inj {

// Once per process: the pthread_atfork child hook, which calls `mark_forked_child`
// (TraceSession::OnForkChild) in a child forked while a session was alive.
void RegisterForkHandler(void (*mark_forked_child)());
// Sessions alive in this process: a fork while one is alive makes the child a no-op child.
void CountLiveSession(int delta);

// Installs the SIGINT/SIGTERM/SIGHUP handlers for the session of process `owner_pid` whose
// writer wakes on `wake_fd` (one session per process).
void InstallTerminationHandlers(pid_t owner_pid, int wake_fd);

// A default-disposition signal waiting for the writer that owns `wake_fd` to finish the trace
// with; 0 when none.
int PendingTerminationSignal(int wake_fd);
// Whether a signal handled by the program asked for a commit since the last call.
bool TakeCommitRequest();
// After the trace is closed: restores the signal's disposition from before occtrace and sends
// it to the process again (delivered to a program thread: the writer blocks all signals).
void ResendSignal(int signal_number);
// The same for a default-disposition signal that arrived while the program was already
// exiting, if one did and it was meant for the writer that owns `wake_fd`.
void ResendLateSignal(int wake_fd);
// Session teardown: the handlers no longer wake `wake_fd`, and the previous dispositions are
// back.
void RestoreSignalHandlers(int wake_fd);

}  // namespace occ::inj
