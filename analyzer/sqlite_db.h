// RAII wrappers over sqlite3* / sqlite3_stmt* / transactions for the analyzer. Every error is a
// Status carrying sqlite3_errmsg, the statement (shortened) and the database's path, so a
// corrupt or truncated input yields one line naming the file and the problem.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace occ::sql {

class Stmt;

class Db {
 public:
  // Opens an existing database read-only (SQLITE_OPEN_READONLY): inputs, nsys exports included,
  // are never modified. `label` names the file in error messages.
  static StatusOr<Db> OpenReadOnly(const std::string& path);
  // An empty in-memory database (for `.sql` text dumps and tests).
  static StatusOr<Db> OpenMemory(const std::string& label);
  // Creates (or truncates, when `replace`) a writable database file (bench, tests).
  static StatusOr<Db> Create(const std::string& path, bool replace);

  Db(Db&&) noexcept = default;
  Db& operator=(Db&&) noexcept = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() = default;

  // Runs one or more statements without results (sqlite3_exec).
  Status Exec(std::string_view sql_text) const;
  // Runs SQL text from an input file (a `.sql` dump) into this in-memory database with what
  // could reach beyond it denied: ATTACH / DETACH (and so VACUUM INTO) and pragmas other than
  // the ones dumps contain.
  Status ExecUntrusted(std::string_view sql_text) const;
  StatusOr<Stmt> Prepare(std::string_view sql_text) const;
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
  std::unique_ptr<sqlite3, Closer> db_;
  std::string label_;
};

// A prepared statement. Bind indices are 1-based, column indices 0-based (as in SQLite).
class Stmt {
 public:
  Stmt(Stmt&&) noexcept = default;
  Stmt& operator=(Stmt&&) noexcept = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() = default;

  Status BindInt64(int index, int64_t value);
  Status BindDouble(int index, double value);
  Status BindText(int index, std::string_view value);
  Status BindNull(int index);

  // True while a row is available; false when done; an error status on failure.
  StatusOr<bool> Step();
  Status Reset();

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
  Status Check(int rc, std::string_view what) const;
  // The connection and its label, not the Db object, so a Stmt survives moves of its Db.
  sqlite3* db_;
  std::string label_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
};

// BEGIN on construction; ROLLBACK in the destructor unless Commit() succeeded.
class Transaction {
 public:
  static StatusOr<Transaction> Begin(const Db& db);
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
// 100 KB kernel name.
Status RegisterRegexp(const Db& db);

// Validates a user regular expression up front (InvalidArgument naming the problem).
Status ValidateRegex(const std::string& pattern);

}  // namespace occ::sql
