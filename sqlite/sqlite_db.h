// occ::sql: the one SQLite layer of occtrace, shared by the injector's trace writer, the
// analyzer's trace reader, the benchmarks and the tests.
// Takes: the SQLite C API (sqlite3.h); the SQLite library itself is the consumer's choice
//   (sqlite/CMakeLists.txt says why).
// Gives: RAII over sqlite3* (Db), sqlite3_stmt* (Stmt) and transactions (Transaction), plus a
//   REGEXP function for name filters. Every failure is a Status (status.h) reading
//   "<label>: <what>: <sqlite3_errmsg> (in: <statement, shortened>)", the label being the
//   database's path, so a corrupt input or a full disk is one line naming the file and the
//   problem. Nothing here throws or aborts: the analyzer maps a failed Status to an exit code,
//   the injector's writer to "tracing off" (injector/common/errors.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace occ::sql {

class Stmt;

class Db {
 public:
  // Opens an existing database read-only (SQLITE_OPEN_READONLY): inputs, nsys exports included,
  // are never modified. The path is the label in error messages.
  static StatusOr<Db> OpenReadOnly(const std::string& path);
  // Opens an existing database for writing and never creates one: for touching up a file that
  // someone else created (the writer's last OCC_META rows after a write error).
  static StatusOr<Db> OpenReadWrite(const std::string& path);
  // An empty in-memory database (for `.sql` text dumps and tests). `label` names it in errors.
  static StatusOr<Db> OpenMemory(const std::string& label);
  // Opens a database file for writing, creating it if missing; `replace` deletes an existing
  // file first (bench, tests). The trace writer passes false and applies its own pragmas.
  static StatusOr<Db> Create(const std::string& path, bool replace);

  // Not open: what a member holds until one of the above is moved into it.
  Db() = default;
  Db(Db&&) noexcept = default;
  Db& operator=(Db&&) noexcept = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  // sqlite3_close_v2: never fails for statements still open; the connection closes with the
  // last of them. Finalize the statements first to release the file at once.
  ~Db() = default;

  // Runs one or more statements without results (sqlite3_exec).
  Status Exec(std::string_view sql_text) const;
  // Runs SQL text from an input file (a `.sql` dump) into this in-memory database with what
  // could reach beyond it denied: ATTACH / DETACH (and so VACUUM INTO) and pragmas other than
  // the ones dumps contain.
  Status ExecUntrusted(std::string_view sql_text) const;
  StatusOr<Stmt> Prepare(std::string_view sql_text) const;
  // For a statement kept and run many times (the writer's inserts): SQLITE_PREPARE_PERSISTENT
  // keeps it out of the lookaside memory that SQLite saves for short-lived statements.
  StatusOr<Stmt> PreparePersistent(std::string_view sql_text) const;
  // Streams a query's rows of integers without leaving SQLite between rows: registers the
  // aggregate function `function_name` on this connection for the call (direct use only: no
  // view or trigger of the file can call it), runs `sql_text` -- a query that aggregates its rows
  // with it, `SELECT f(a, b, ...) FROM t WHERE ...` -- with parameters bound by `bind`, and
  // calls row(values, count) once per row with the function's arguments as integers (NULL as
  // `if_null`, at most kMaxIntRowColumns). A scan of many columns saves the step and the two
  // calls per column that each row otherwise costs. `row` returns false to stop: the query then
  // fails ("stopped").
  static constexpr int kMaxIntRowColumns = 64;
  Status AggregateIntRows(std::string_view function_name, int64_t if_null,
                          std::string_view sql_text, const std::function<Status(Stmt*)>& bind,
                          const std::function<bool(const int64_t*, int)>& row) const;
  // How long a statement waits for another connection's lock before failing with
  // SQLITE_BUSY (by default it fails at once).
  Status SetBusyTimeout(int milliseconds) const;
  // True if a table or view of that name exists; `type` receives "table" or "view".
  StatusOr<bool> HasTable(std::string_view name, std::string* type = nullptr) const;
  // True if `table` has a column named `column` (PRAGMA table_info).
  StatusOr<bool> HasColumn(std::string_view table, std::string_view column) const;

  sqlite3* get() const { return db_.get(); }
  const std::string& label() const { return label_; }
  // "<label>: <what>: <sqlite3_errmsg> (in: <statement>)"
  Status Error(std::string_view what, std::string_view statement = {}) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  Db(sqlite3* db, std::string label);
  static StatusOr<Db> OpenWith(const std::string& path, const std::string& label, int flags);
  StatusOr<Stmt> PrepareWith(std::string_view sql_text, unsigned int flags) const;
  std::unique_ptr<sqlite3, Closer> db_;
  std::string label_;
};

// A prepared statement. Bind indices are 1-based, column indices 0-based (as in SQLite).
// A failed bind is also kept by the statement: the next Step() or Run() returns it instead of
// running with a stale value, so code that binds a whole row may check once, at Run().
class Stmt {
 public:
  // Not prepared: what a member holds until Db::Prepare's result is moved into it. Stepping it
  // fails (SQLite's "bad parameter or other API misuse").
  Stmt() = default;
  Stmt(Stmt&&) noexcept = default;
  Stmt& operator=(Stmt&&) noexcept = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() = default;

  // Inline: the writer binds millions of values a second, and an OK Status built and dropped
  // in the caller costs nothing once the compiler sees both; failures go out of line.
  Status BindInt64(int index, int64_t value) {
    return Bound(sqlite3_bind_int64(stmt_.get(), index, value));
  }
  Status BindDouble(int index, double value) {
    return Bound(sqlite3_bind_double(stmt_.get(), index, value));
  }
  Status BindNull(int index) { return Bound(sqlite3_bind_null(stmt_.get(), index)); }
  // SQLite copies the text (SQLITE_TRANSIENT): `value` may go away right after.
  Status BindText(int index, std::string_view value) {
    return Bound(sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  // SQLite keeps a pointer to the text instead of a copy (SQLITE_STATIC), one copy less on the
  // writer's insert path: `value` must stay alive and unchanged until the next Step() or Run()
  // has returned.
  Status BindTextStatic(int index, std::string_view value) {
    return Bound(sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(),
                                     SQLITE_STATIC, SQLITE_UTF8));
  }

  // True while a row is available; false when done; an error status on failure.
  StatusOr<bool> Step();
  // Rewinds the statement and clears its bindings (and a kept bind failure).
  Status Reset();
  // Runs a statement for its effect (an INSERT, an UPDATE) and rewinds it for the next row,
  // whatever the outcome. Bindings stay: the next row binds every parameter again, and
  // clearing the writer's 320-parameter batch insert each time would cost more than binding.
  // Text bound with BindTextStatic may go away once it returns.
  Status Run();

  int ColumnCount() const;
  std::string ColumnName(int column) const;
  bool IsNull(int column) const;
  int64_t Int64(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;  // "" for NULL
  std::string_view TextView(int column) const;  // valid until the next Step

  const std::string& sql() const { return sql_; }

 private:
  friend class Db;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  Stmt(sqlite3* db, std::string label, sqlite3_stmt* stmt, std::string sql_text);
  Status Bound(int rc) {
    if (rc == SQLITE_OK) [[likely]] return OkStatus();
    return BindFailed();
  }
  [[gnu::cold]] Status BindFailed();
  // The connection and its label, not the Db object, so a Stmt survives moves of its Db.
  sqlite3* db_ = nullptr;
  std::string label_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
  Status bind_error_;  // the first failed bind since the last Run() / Reset()
};

// BEGIN on construction; ROLLBACK in the destructor unless Commit() succeeded (or failed: a
// failed COMMIT rolls back at once, so the connection is never left inside a transaction).
class Transaction {
 public:
  static StatusOr<Transaction> Begin(const Db& db);
  // BEGIN IMMEDIATE: takes the write lock now, waiting up to the busy timeout, rather than at
  // the first write, so a writer that cannot get it fails before doing any work.
  static StatusOr<Transaction> BeginImmediate(const Db& db);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  Status Commit();

 private:
  explicit Transaction(const Db* db) : db_(db) {}
  const Db* db_;
};

// Registers REGEXP on `db`, so `name REGEXP ?1` works with the pattern as a bound parameter.
// POSIX extended syntax, search semantics (unanchored), compiled once per statement. glibc's
// regexec rather than std::regex: libstdc++'s recursive matcher can exhaust the stack on a
// 100 KB kernel name. (In sqlite_regexp.cc: the injector, which never filters, links none of
// it.)
Status RegisterRegexp(const Db& db);

// Validates a user regular expression up front (InvalidArgument naming the problem).
Status ValidateRegex(const std::string& pattern);

// A name filter applied outside SQL (to the names stored in a trace summary): compiled and
// matched by the same code as REGEXP, so a name matches here exactly when `name REGEXP pattern`
// would match it in a trace.
class NameFilter {
 public:
  // InvalidArgument as ValidateRegex when the pattern does not compile.
  static StatusOr<NameFilter> Compile(const std::string& pattern);
  bool Matches(const std::string& text) const;

  struct Compiled;  // regex_t, kept out of this header

 private:
  explicit NameFilter(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace occ::sql
