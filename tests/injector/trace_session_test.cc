#include "injector/session/trace_session.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/tracer/settings.h"
#include "tests/injector/fake_records.h"

namespace occ::inj {
namespace {

using testing::FakeActivityBuffer;
using testing::MakeKernel;
using testing::TraceReader;

constexpr char kSquare[] = "_Z6squarePfi";

// Fills session buffers with `count` launches (correlation ids from `first`) and completes
// them, as CUPTI's buffer callbacks would.
void FeedLaunches(TraceSession& session, uint32_t first, uint32_t count) {
  uint32_t done = 0;
  while (done < count) {
    size_t size = 0;
    uint8_t* data = session.AcquireBuffer(&size);
    ASSERT_NE(data, nullptr);
    FakeActivityBuffer buffer(data, size);
    while (done < count && buffer.Add(MakeKernel(kSquare, first + done, 1000 + done, 1100 + done))) ++done;
    session.CompleteBuffer(data, buffer.size(), 0);
  }
}

SessionOptions Options(const std::string& path, int flush_period_ms) {
  SessionOptions options;
  options.path = path;
  options.flush_period_ms = flush_period_ms;
  options.buffer_bytes = 64 << 10;
  options.max_buffers = 64;
  options.quiet = true;
  options.handle_signals = true;
  return options;
}

void RemoveTrace(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

TEST(TraceSessionTest, FinishWritesEverythingAndClosingMeta) {
  const std::string path = testing::TempPath("finish");
  std::atomic<int> periodic_flushes{0}, forced_flushes{0};
  TraceSession* raw = nullptr;
  SessionHooks hooks;
  hooks.flush_activity = [&](bool forced) {
    if (!forced) {
      ++periodic_flushes;
      return;
    }
    ++forced_flushes;
    FeedLaunches(*raw, 900000, 10);  // CUPTI hands over its last records during the forced flush
  };
  hooks.final_meta = [] {
    return std::vector<std::pair<std::string, std::string>>{{"achieved_mode", "off"}};
  };
  auto session = TraceSession::Start(Options(path, 20), hooks);
  ASSERT_NE(session, nullptr);
  raw = session.get();
  FeedLaunches(*session, 0, 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  session->Finish();
  EXPECT_GE(periodic_flushes.load(), 1);
  EXPECT_EQ(forced_flushes.load(), 1);
  EXPECT_EQ(session->final_stats().launches, 5010u);
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 5010);
  EXPECT_EQ(reader.Meta("status"), "complete");
  EXPECT_EQ(reader.Meta("launch_count"), "5010");
  EXPECT_EQ(reader.Meta("kernel_count"), "1");
  EXPECT_EQ(reader.Meta("achieved_mode"), "off");
  EXPECT_EQ(reader.Meta("pid"), std::to_string(getpid()));
  EXPECT_EQ(reader.Meta("schema_version"), "1");
  EXPECT_NE(reader.Meta("command_line").find("injector_tests"), std::string::npos);
  session.reset();
  RemoveTrace(path);
}

// A rank of a torchrun job records which rank it is, so the files of one job are told apart
// by their content, not their names.
TEST(TraceSessionTest, RecordsTheRankOfADistributedJob) {
  const std::string path = testing::TempPath("rank");
  setenv("RANK", "1", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  auto session = TraceSession::Start(Options(path, 20), SessionHooks{});
  unsetenv("RANK");
  unsetenv("LOCAL_RANK");
  unsetenv("WORLD_SIZE");
  ASSERT_NE(session, nullptr);
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("rank"), "1");
  EXPECT_EQ(reader.Meta("local_rank"), "1");
  EXPECT_EQ(reader.Meta("world_size"), "2");
  EXPECT_EQ(reader.Meta("rank_source"), "torchrun");
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionTest, PeriodicCommitMakesLaunchesVisibleWhileRunning) {
  const std::string path = testing::TempPath("periodic");
  auto session = TraceSession::Start(Options(path, 50), SessionHooks{});
  ASSERT_NE(session, nullptr);
  FeedLaunches(*session, 0, 3000);
  int64_t visible = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (visible < 3000 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    TraceReader reader(path);
    visible = reader.Int("SELECT count(*) FROM OCC_LAUNCH");
  }
  EXPECT_EQ(visible, 3000) << "a process killed now (SIGKILL) keeps every committed launch";
  {
    TraceReader reader(path);
    EXPECT_EQ(reader.Meta("status"), "running");
    EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  }
  session->Finish();
  session.reset();
  RemoveTrace(path);
}

// CUPTI keeps a buffer whose records are not all complete out of every plain flush
// (cupti_activity.h): the buffer being filled under a continuous launch load, or one holding a
// launch the range profiler replayed, whose record never completes. Here CUPTI's stand-in
// hands its buffer back only to a forced flush. The writer must force one once the buffer is
// older than max_record_age_ms, so a SIGKILL loses at most that long of launches.
struct WithheldBufferCupti {
  TraceSession* session = nullptr;
  uint8_t* held = nullptr;
  size_t held_size = 0;
  std::mutex mutex;
  std::atomic<int> forced{0};

  // Fills one buffer with `count` launches and keeps it, as CUPTI does with a buffer in use.
  void FillAndHold(uint32_t count) {
    size_t size = 0;
    uint8_t* data = session->AcquireBuffer(&size);
    ASSERT_NE(data, nullptr);
    FakeActivityBuffer buffer(data, size);
    for (uint32_t i = 0; i < count; ++i) ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, i, 1000 + i, 1100 + i)));
    std::lock_guard lock(mutex);
    held = data;
    held_size = buffer.size();
  }
  void Flush(bool is_forced) {
    if (!is_forced) return;  // withheld: an incomplete record
    ++forced;
    std::lock_guard lock(mutex);
    if (held != nullptr) session->CompleteBuffer(std::exchange(held, nullptr), held_size, 0);
  }
};

int64_t VisibleLaunchesAfter(const std::string& path, std::chrono::milliseconds wait, int64_t want) {
  int64_t visible = 0;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (visible < want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    TraceReader reader(path);
    visible = reader.Int("SELECT count(*) FROM OCC_LAUNCH");
  }
  return visible;
}

TEST(TraceSessionFlushTest, WithheldBufferIsForcedOutWithinTheRecordAge) {
  const std::string path = testing::TempPath("withheld");
  WithheldBufferCupti cupti;
  SessionHooks hooks;
  hooks.flush_activity = [&](bool forced) { cupti.Flush(forced); };
  SessionOptions options = Options(path, 20);
  options.max_record_age_ms = 100;
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  cupti.session = session.get();
  const auto filled = std::chrono::steady_clock::now();
  cupti.FillAndHold(200);
  EXPECT_EQ(VisibleLaunchesAfter(path, std::chrono::seconds(5), 200), 200);
  const auto took = std::chrono::steady_clock::now() - filled;
  // Age 100 ms + a 20 ms period + the commit, with slack for a loaded CI machine.
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_GE(cupti.forced.load(), 1);
  session->Finish();
  TraceReader reader(path);
  EXPECT_GE(reader.Int("SELECT value FROM OCC_META WHERE name='stale_forced_flushes'"), 1);
  EXPECT_EQ(reader.Meta("setting_max_record_age_ms"), "100");
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionFlushTest, WithoutARecordAgeAWithheldBufferWaitsForTheEnd) {
  // The behaviour the record age exists to fix: with it off, nothing is committed while CUPTI
  // keeps the buffer, and only the final forced flush brings the launches in.
  const std::string path = testing::TempPath("withheld_off");
  WithheldBufferCupti cupti;
  SessionHooks hooks;
  hooks.flush_activity = [&](bool forced) { cupti.Flush(forced); };
  SessionOptions options = Options(path, 20);
  options.max_record_age_ms = 0;
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  cupti.session = session.get();
  cupti.FillAndHold(200);
  EXPECT_EQ(VisibleLaunchesAfter(path, std::chrono::milliseconds(400), 200), 0);
  EXPECT_EQ(cupti.forced.load(), 0);
  session->Finish();
  EXPECT_EQ(TraceReader(path).Int("SELECT count(*) FROM OCC_LAUNCH"), 200);
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionFlushTest, BuffersThatCompleteOnTheirOwnNeedNoForcedFlush) {
  // A plain flush that returns every buffer (a program that pauses) never triggers a forced
  // one: forced flushes cut running kernels' records and must stay the exception.
  const std::string path = testing::TempPath("no_forced");
  std::atomic<int> forced{0};
  SessionHooks hooks;
  hooks.flush_activity = [&](bool is_forced) { forced += is_forced ? 1 : 0; };
  SessionOptions options = Options(path, 20);
  options.max_record_age_ms = 100;
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  for (int round = 0; round < 5; ++round) {
    FeedLaunches(*session, static_cast<uint32_t>(round) * 100, 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  EXPECT_EQ(VisibleLaunchesAfter(path, std::chrono::seconds(5), 500), 500);
  EXPECT_EQ(forced.load(), 0);
  session->Finish();
  session.reset();
  RemoveTrace(path);
}

// CUPTI is told its buffers come zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), so
// that it does not zero them on the application's thread: fresh and reused buffers must be.
TEST(TraceSessionTest, BuffersComeBackZeroed) {
  const std::string path = testing::TempPath("zeroed");
  SessionOptions options = Options(path, 60000);
  options.max_buffers = 1;
  auto session = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(session, nullptr);
  auto all_zero = [](const uint8_t* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      if (data[i] != 0) return false;
    }
    return true;
  };
  size_t size = 0;
  uint8_t* first = session->AcquireBuffer(&size);
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(size, options.buffer_bytes);
  EXPECT_TRUE(all_zero(first, size));
  FakeActivityBuffer buffer(first, size);
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 1, 1000, 1100)));
  std::memset(first + buffer.size(), 0xab, size - buffer.size());  // CUPTI may write anywhere
  session->CompleteBuffer(first, buffer.size(), 0);
  // The only buffer comes back once the writer has consumed it.
  uint8_t* again = nullptr;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((again = session->AcquireBuffer(&size)) == nullptr && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(again, first);
  EXPECT_TRUE(all_zero(again, size));
  session->CompleteBuffer(again, 0, 0);
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Int("SELECT COUNT(*) FROM OCC_LAUNCH"), 1);
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionTest, ExhaustedPoolRefusesBuffersAndCountsDrops) {
  const std::string path = testing::TempPath("drops");
  SessionOptions options = Options(path, 60000);
  options.max_buffers = 2;
  auto session = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(session, nullptr);
  size_t size = 0;
  uint8_t* a = session->AcquireBuffer(&size);
  uint8_t* b = session->AcquireBuffer(&size);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(session->AcquireBuffer(&size), nullptr) << "never more than max_buffers in flight";
  EXPECT_EQ(size, 0u);
  session->CompleteBuffer(a, 0, /*cupti_dropped=*/5);
  session->CompleteBuffer(b, 0, 0);
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("dropped_records"), "5");
  EXPECT_EQ(reader.Meta("refused_buffer_requests"), "1");
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionTest, BuffersAreRecycled) {
  const std::string path = testing::TempPath("recycle");
  SessionOptions options = Options(path, 60000);
  options.max_buffers = 1;
  auto session = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(session, nullptr);
  // 20 buffers' worth of launches through a pool of one buffer: each is returned after writing.
  for (int round = 0; round < 20; ++round) {
    size_t size = 0;
    uint8_t* data = nullptr;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((data = session->AcquireBuffer(&size)) == nullptr && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_NE(data, nullptr);
    FakeActivityBuffer buffer(data, size);
    for (uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, static_cast<uint32_t>(round) * 100 + i, 1, 2)));
    session->CompleteBuffer(data, buffer.size(), 0);
  }
  session->Finish();
  EXPECT_EQ(session->final_stats().launches, 2000u);
  session.reset();
  RemoveTrace(path);
}

// SIGTERM (torchrun stopping workers) kills a process without atexit. The handler wakes the
// writer, which flushes, commits, closes the file and re-raises with the default action.
TEST(TraceSessionSignalTest, SigtermFlushesCommitsAndStillTerminates) {
  const std::string path = testing::TempPath("sigterm");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    signal(SIGTERM, SIG_DFL);
    // No periodic commit: only the signal path can make these launches durable.
    auto session = TraceSession::Start(Options(path, 600000), SessionHooks{});
    if (!session) _exit(3);
    session->InstallSignalHandlers();
    FeedLaunches(*session, 0, 2500);
    char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    for (int i = 0; i < 300; ++i) usleep(100000);  // SIGTERM arrives here
    _exit(5);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit code " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM) << "the program must still die of SIGTERM";
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 2500);
  EXPECT_EQ(reader.Meta("status"), "terminated by SIGTERM");
  RemoveTrace(path);
}

// A program whose own handler runs on SIGINT (Python's KeyboardInterrupt) keeps it: ours only
// commits and chains.
std::atomic<int> g_program_handler_calls{0};
void ProgramHandler(int) { g_program_handler_calls.fetch_add(1); }

TEST(TraceSessionSignalTest, ProgramHandlerIsChainedAndTracingContinues) {
  g_program_handler_calls.store(0);
  const std::string path = testing::TempPath("chain");
  struct sigaction program {}, saved {};
  program.sa_handler = ProgramHandler;
  sigemptyset(&program.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &program, &saved), 0);
  auto session = TraceSession::Start(Options(path, 600000), SessionHooks{});
  ASSERT_NE(session, nullptr);
  session->InstallSignalHandlers();
  FeedLaunches(*session, 0, 100);
  raise(SIGINT);
  EXPECT_EQ(g_program_handler_calls.load(), 1);
  int64_t visible = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (visible < 100 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    visible = TraceReader(path).Int("SELECT count(*) FROM OCC_LAUNCH");
  }
  EXPECT_EQ(visible, 100) << "the signal commits what was traced so far";
  EXPECT_TRUE(session->active()) << "the program survived its SIGINT: so does tracing";
  session->Finish();
  session.reset();
  struct sigaction restored {};
  sigaction(SIGINT, nullptr, &restored);
  EXPECT_EQ(restored.sa_handler, ProgramHandler) << "the program's handler is back after the session";
  sigaction(SIGINT, &saved, nullptr);
  RemoveTrace(path);
}

struct FileState {
  off_t size = -1;
  int64_t mtime_ns = -1;
  bool operator==(const FileState&) const = default;
};
FileState StateOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {st.st_size, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// DataLoader workers: fork() without exec in a traced process. The child inherits the
// session's memory but must never write the parent's file or use its connection.
TEST(TraceSessionForkTest, ChildNeverWritesTheParentsFile) {
  const std::string path = testing::TempPath("fork");
  auto session = TraceSession::Start(Options(path, 600000), SessionHooks{});
  ASSERT_NE(session, nullptr);
  FeedLaunches(*session, 0, 100);
  const FileState db_before = StateOf(path);
  const FileState wal_before = StateOf(path + "-wal");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    size_t size = 0;
    if (session->AcquireBuffer(&size) != nullptr) code |= 1;
    session->SetMeta("written_by_child", "yes");
    session->SubmitDeviceExtras(DeviceExtras{});
    session->Finish("child");
    session.reset();  // as the child's exit path would
    _exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child was handed a buffer";
  EXPECT_EQ(StateOf(path), db_before);
  EXPECT_EQ(StateOf(path + "-wal"), wal_before);
  FeedLaunches(*session, 100, 100);  // the parent goes on tracing
  session->Finish();
  EXPECT_EQ(session->final_stats().launches, 200u);
  session.reset();
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 200);
  EXPECT_EQ(reader.Meta("written_by_child"), "<no row>");
  EXPECT_EQ(reader.Meta("status"), "complete");
  RemoveTrace(path);
}

TEST(TraceSessionTest, RecordsAfterTheEndAreCountedAsDropped) {
  const std::string path = testing::TempPath("late");
  auto session = TraceSession::Start(Options(path, 60000), SessionHooks{});
  ASSERT_NE(session, nullptr);
  size_t size = 0;
  uint8_t* late = session->AcquireBuffer(&size);  // CUPTI still holds this one at exit
  ASSERT_NE(late, nullptr);
  FeedLaunches(*session, 0, 10);
  session->Finish();
  size_t refused_size = 1;
  EXPECT_EQ(session->AcquireBuffer(&refused_size), nullptr) << "no buffers once the file is closed";
  EXPECT_EQ(refused_size, 0u);
  FakeActivityBuffer buffer(late, size);
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 100 + i, 1, 2)));
  session->CompleteBuffer(late, buffer.size(), 0);
  EXPECT_EQ(session->dropped_records(), 3u);
  EXPECT_EQ(session->final_stats().launches, 10u);
  session.reset();
  TraceReader reader(path);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 10);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  RemoveTrace(path);
}

// Another connection holding SQLite's write lock makes the writer's next write fail with
// SQLITE_BUSY: a real write error, after which tracing is off.
class WriteLock {
 public:
  explicit WriteLock(const std::string& path) {
    StatusOr<sql::Db> db = sql::Db::OpenReadWrite(path);
    if (!db.ok()) return;
    db_ = std::move(db).value();
    StatusOr<sql::Transaction> transaction = sql::Transaction::BeginImmediate(db_);
    if (transaction.ok()) transaction_.emplace(std::move(transaction).value());
  }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;
  bool locked() const { return transaction_.has_value(); }
  // Rolls back (the transaction's destructor) and closes the connection.
  void Release() {
    transaction_.reset();
    db_ = sql::Db();
  }

 private:
  sql::Db db_;
  std::optional<sql::Transaction> transaction_;  // after db_: rolled back before it closes
};

bool WaitUntilInactive(const TraceSession& session) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (session.active() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return !session.active();
}

// A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) at the WAL's current size: the next
// COMMIT cannot append to the WAL and fails as on a full disk. Lifting it plays the disk that
// was freed again before exit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_handler_ = signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit limited = previous_;
    limited.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limited) == 0;
  }
  ~FileSizeLimit() { Lift(); }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool ok() const { return ok_; }
  void Lift() {
    if (lifted_) return;
    lifted_ = true;
    setrlimit(RLIMIT_FSIZE, &previous_);
    signal(SIGXFSZ, previous_handler_);
  }

 private:
  rlimit previous_{};
  sighandler_t previous_handler_ = SIG_DFL;
  bool ok_ = false;
  bool lifted_ = false;
};

// After a write error every record CUPTI hands over is still taken and counted: the ones
// rolled back with the transaction whose COMMIT failed, and every later buffer. The count
// reaches the exit line (even when quiet) and OCC_META once the file takes writes again.
TEST(TraceSessionWriteErrorTest, RecordsAfterAWriteErrorAreCountedAndReported) {
  const std::string path = testing::TempPath("write-error");
  auto session = TraceSession::Start(Options(path, 30), SessionHooks{});
  ASSERT_NE(session, nullptr);
  ::testing::internal::CaptureStderr();
  FileSizeLimit full_disk(static_cast<rlim_t>(StateOf(path + "-wal").size));
  ASSERT_TRUE(full_disk.ok());
  FeedLaunches(*session, 0, 100);  // added to the open transaction; its COMMIT fails
  AchievedSample sample;
  sample.status = "measured";
  sample.policy = "sample";
  session->SubmitAchieved(sample);
  ASSERT_TRUE(WaitUntilInactive(*session)) << "the failed commit must turn the writer off";
  // CUPTI keeps delivering: buffers are still handed out, and their records counted.
  FeedLaunches(*session, 1000, 900);
  session->SubmitAchieved(sample);
  full_disk.Lift();
  session->Finish();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(session->final_stats().records_lost, 1000u);
  EXPECT_EQ(session->final_stats().achieved_lost, 2u);
  EXPECT_EQ(session->final_stats().launches, 0u) << "nothing was committed";
  EXPECT_NE(err.find("0 kernel launches of 1 kernels, 1000 records dropped (1000 records and 2 achieved "
                     "samples lost to the write error) -> " + path +
                     " (incomplete: write error; counts in OCC_META)"),
            std::string::npos)
      << err;
  TraceReader reader(path);
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 0);
  EXPECT_EQ(reader.Meta("status"), "failed: write error");
  EXPECT_EQ(reader.Meta("records_lost_write_error"), "1000");
  EXPECT_EQ(reader.Meta("achieved_lost_write_error"), "2");
  EXPECT_EQ(reader.Meta("dropped_records"), "1000");
  EXPECT_EQ(reader.Meta("launch_count"), "0");
  session.reset();
  RemoveTrace(path);
}

// The file stays locked through the end: OCC_META cannot be updated, the exit line still
// carries the count and says so.
TEST(TraceSessionWriteErrorTest, CountReachesTheExitLineWhenTheFileStaysUnwritable) {
  const std::string path = testing::TempPath("write-error-locked");
  auto session = TraceSession::Start(Options(path, 60000), SessionHooks{});
  ASSERT_NE(session, nullptr);
  WriteLock lock(path);
  ASSERT_TRUE(lock.locked());
  ::testing::internal::CaptureStderr();
  FeedLaunches(*session, 0, 10);
  ASSERT_TRUE(WaitUntilInactive(*session));
  FeedLaunches(*session, 100, 5);
  session->Finish();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(session->final_stats().records_lost, 15u);
  EXPECT_NE(err.find("15 records dropped (15 records and 0 achieved samples lost to the write error)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(incomplete: write error; OCC_META could not be updated)"), std::string::npos) << err;
  lock.Release();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("status"), "running") << "the last committed state";
  session.reset();
  RemoveTrace(path);
}

// All of occtrace's cuptiActivityFlushAll calls go through FlushActivity: the writer's
// periodic flush, context-destroy flushes from several app threads and the final flush never
// overlap, and CUPTI may deliver buffers synchronously inside a flush (the hook does, as
// CUPTI does on the flushing thread) without deadlocking. No delivered record goes missing:
// each is either written or counted as dropped (delivered after the file was closed).
TEST(TraceSessionFlushTest, FlushesNeverOverlapAndMayDeliverBuffersInline) {
  const std::string path = testing::TempPath("flush-serial");
  std::atomic<int> in_flush{0}, max_in_flush{0}, periodic{0}, forced{0};
  std::atomic<uint32_t> delivered{0};
  // The writer thread's first periodic flush can run before Start() has returned.
  std::atomic<TraceSession*> raw{nullptr};
  SessionHooks hooks;
  hooks.flush_activity = [&](bool is_forced) {
    const int now = in_flush.fetch_add(1) + 1;
    int seen = max_in_flush.load();
    while (now > seen && !max_in_flush.compare_exchange_weak(seen, now)) {
    }
    (is_forced ? forced : periodic).fetch_add(1);
    size_t size = 0;
    TraceSession* session_now = raw.load();
    if (uint8_t* data = session_now != nullptr ? session_now->AcquireBuffer(&size) : nullptr) {
      FakeActivityBuffer buffer(data, size);
      uint32_t added = 0;
      while (added < 3 && buffer.Add(MakeKernel(kSquare, delivered.fetch_add(1), 1, 2))) ++added;
      session_now->CompleteBuffer(data, buffer.size(), 0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    in_flush.fetch_sub(1);
  };
  auto session = TraceSession::Start(Options(path, 1), hooks);
  ASSERT_NE(session, nullptr);
  raw.store(session.get());
  constexpr int kThreads = 3, kFlushesPerThread = 40;
  std::vector<std::thread> app_threads;
  for (int t = 0; t < kThreads; ++t) {
    app_threads.emplace_back([&] {
      for (int i = 0; i < kFlushesPerThread; ++i) {
        session->FlushActivity(TraceSession::FlushKind::kContextDestroy);
        // Gaps in which the writer's periodic flush (which skips a busy lock) gets its turn.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (periodic.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  session->Finish();  // usually while context-destroy flushes are still going on
  for (std::thread& thread : app_threads) thread.join();
  EXPECT_EQ(max_in_flush.load(), 1) << "two cuptiActivityFlushAll calls overlapped";
  EXPECT_GE(periodic.load(), 2);
  EXPECT_EQ(forced.load(), kThreads * kFlushesPerThread + 1) << "every context-destroy flush, and the final one";
  EXPECT_EQ(session->final_stats().launches + session->dropped_records(), delivered.load());
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("unserialized_flushes"), "0");
  EXPECT_EQ(reader.Text("PRAGMA integrity_check"), "ok");
  session.reset();
  RemoveTrace(path);
}

// Should CUPTI hold a lock during the CONTEXT_DESTROY_STARTING callback that a flush in
// progress on another thread needs, waiting for that flush would deadlock the program: the
// context-destroy flush waits flush_lock_wait_ms at most, then flushes anyway (counted).
TEST(TraceSessionFlushTest, ContextDestroyFlushDoesNotWaitForeverOnAStuckFlush) {
  const std::string path = testing::TempPath("flush-stuck");
  std::atomic<bool> periodic_entered{false}, cupti_lock_released{false};
  SessionHooks hooks;
  hooks.flush_activity = [&](bool forced) {
    if (forced) {
      cupti_lock_released.store(true);  // the destroying thread's callback returns
      return;
    }
    if (periodic_entered.exchange(true)) return;
    // The writer's periodic FlushAll(0), blocked on the (simulated) CUPTI lock that the
    // context-destroying thread holds until its callback returns.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!cupti_lock_released.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  SessionOptions options = Options(path, 1);
  options.flush_lock_wait_ms = 50;
  auto session = TraceSession::Start(options, hooks);
  ASSERT_NE(session, nullptr);
  const auto wait_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!periodic_entered.load() && std::chrono::steady_clock::now() < wait_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(periodic_entered.load());
  ::testing::internal::CaptureStderr();
  const auto start = std::chrono::steady_clock::now();
  session->FlushActivity(TraceSession::FlushKind::kContextDestroy);
  const auto waited = std::chrono::steady_clock::now() - start;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cupti_lock_released.load());
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_NE(err.find("occtrace: a CUPTI activity flush waited 50 ms for another one; flushing concurrently"),
            std::string::npos)
      << err;
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("unserialized_flushes"), "1");
  session.reset();
  RemoveTrace(path);
}

TEST(TraceSessionTest, EnvironmentSettings) {
  SessionOptions options;
  setenv("OCCTRACE_FLUSH_MS", "100", 1);
  setenv("OCCTRACE_BUFFER_MB", "8", 1);
  setenv("OCCTRACE_QUIET", "1", 1);
  setenv("OCCTRACE_MAX_RECORD_AGE_MS", "0", 1);
  options = ReadProcessSettings().session;
  EXPECT_EQ(options.max_record_age_ms, 0);
  EXPECT_EQ(SessionOptions{}.max_record_age_ms, 500);
  unsetenv("OCCTRACE_MAX_RECORD_AGE_MS");
  EXPECT_EQ(options.flush_period_ms, 100);
  EXPECT_EQ(options.buffer_bytes, size_t{8} << 20);
  EXPECT_TRUE(options.quiet);
  SessionOptions defaults;
  setenv("OCCTRACE_FLUSH_MS", "fast", 1);
  setenv("OCCTRACE_BUFFER_MB", "100000", 1);
  setenv("OCCTRACE_QUIET", "0", 1);
  ::testing::internal::CaptureStderr();
  defaults = ReadProcessSettings().session;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(defaults.flush_period_ms, 250);
  EXPECT_EQ(defaults.buffer_bytes, size_t{4} << 20);
  EXPECT_FALSE(defaults.quiet);
  EXPECT_NE(err.find("occtrace: OCCTRACE_FLUSH_MS='fast' is not an integer in [10, 60000]; using 250"),
            std::string::npos) << err;
  EXPECT_NE(err.find("occtrace: OCCTRACE_BUFFER_MB='100000' is not an integer in [1, 256]; using 4"),
            std::string::npos) << err;
  unsetenv("OCCTRACE_FLUSH_MS");
  unsetenv("OCCTRACE_BUFFER_MB");
  unsetenv("OCCTRACE_QUIET");
}

// A torchrun agent or a compile worker initializes CUDA and launches nothing: from the
// environment, such a process leaves no file (and says so); with a launch, the file stays.
TEST(TraceSessionTest, AProcessThatLaunchedNothingLeavesNoFile) {
  SessionOptions from_env;
  unsetenv("OCCTRACE_KEEP_EMPTY");
  from_env = ReadProcessSettings().session;
  EXPECT_TRUE(from_env.remove_if_empty);
  EXPECT_FALSE(SessionOptions{}.remove_if_empty) << "sessions made in code keep their file";

  const std::string empty_path = testing::TempPath("empty-removed");
  SessionOptions options = Options(empty_path, 20);
  options.remove_if_empty = true;
  options.quiet = false;
  auto empty = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(empty, nullptr);
  ASSERT_EQ(access(empty_path.c_str(), F_OK), 0) << "claimed at the start, like every trace";
  ::testing::internal::CaptureStderr();
  empty->Finish();
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    EXPECT_NE(access((empty_path + suffix).c_str(), F_OK), 0) << suffix;
  }
  EXPECT_NE(err.find("no kernel launches: " + empty_path + " removed (OCCTRACE_KEEP_EMPTY=1 keeps it)"),
            std::string::npos) << err;
  empty.reset();

  const std::string kept_path = testing::TempPath("one-launch-kept");
  options.path = kept_path;
  options.quiet = true;
  auto one = TraceSession::Start(options, SessionHooks{});
  ASSERT_NE(one, nullptr);
  FeedLaunches(*one, 0, 1);
  one->Finish();
  TraceReader reader(kept_path);
  EXPECT_EQ(reader.Int("SELECT count(*) FROM OCC_LAUNCH"), 1);
  one.reset();
  RemoveTrace(kept_path);

  setenv("OCCTRACE_KEEP_EMPTY", "1", 1);
  SessionOptions keep;
  keep = ReadProcessSettings().session;
  EXPECT_FALSE(keep.remove_if_empty);
  unsetenv("OCCTRACE_KEEP_EMPTY");
}

TEST(TraceSessionTest, UnwritableFileGivesNoSession) {
  ::testing::internal::CaptureStderr();
  auto session = TraceSession::Start(Options("/nonexistent-dir-occtrace/x.db", 100), SessionHooks{});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
}

}  // namespace
}  // namespace occ::inj

namespace occ::inj {
namespace {

// Module images: copied on the submitting thread, parsed by the writer; an image that would
// push the queued bytes past the bound is dropped and counted, a non-cubin one skipped and
// counted. Records of kinds occtrace never enables (another CUPTI client's) are counted too.
TEST(TraceSessionTest, ModuleImagesAreBoundedAndForeignRecordsCounted) {
  const std::string path = testing::TempPath("modules");
  SessionOptions options = Options(path, 1000);
  options.max_queued_module_bytes = 100;
  auto session = TraceSession::Start(options, SessionHooks());
  ASSERT_NE(session, nullptr);
  const std::vector<uint8_t> too_big(101, 0x7f);
  session->SubmitModule(1, too_big.data(), too_big.size());
  const std::string not_elf = "not an ELF image at all";
  session->SubmitModule(2, not_elf.data(), not_elf.size());
  size_t size = 0;
  uint8_t* data = session->AcquireBuffer(&size);
  ASSERT_NE(data, nullptr);
  FakeActivityBuffer buffer(data, size);
  CUpti_ActivityMemcpy6 memcpy_record{};
  memcpy_record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  ASSERT_TRUE(buffer.Add(memcpy_record));
  ASSERT_TRUE(buffer.Add(MakeKernel(kSquare, 1, 10, 20)));
  session->CompleteBuffer(data, buffer.size(), 0);
  session->Finish();
  TraceReader reader(path);
  EXPECT_EQ(reader.Meta("cubin_modules_dropped"), "1");
  EXPECT_EQ(reader.Meta("cubin_modules_skipped"), "1");
  EXPECT_EQ(reader.Meta("cubin_modules_parsed"), "0");
  EXPECT_EQ(reader.Meta("foreign_activity_records"), "1");
  EXPECT_EQ(reader.Int("SELECT COUNT(*) FROM OCC_LAUNCH"), 1);
  RemoveTrace(path);
}

}  // namespace
}  // namespace occ::inj
