// occ::sql's connection, statement and transaction code (sqlite_db.h says what it gives).
// Takes the SQLite C API; every failure becomes a Status naming the database's label.
#include "sqlite/sqlite_db.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace occ::sql {
namespace {

std::string Shorten(std::string_view text, size_t max_chars = 160) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars) + 3);
  for (char c : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    // Keep error messages on one line.
    bool space = c == '\n' || c == '\r' || c == '\t';
    if (space && !out.empty() && out.back() == ' ') continue;
    out += space ? ' ' : c;
  }
  return out;
}

Status SqliteError(sqlite3* db, const std::string& label, std::string_view what,
                   std::string_view statement) {
  std::string message = label + ": " + std::string(what);
  if (db) {
    message += ": ";
    message += sqlite3_errmsg(db);
  }
  if (!statement.empty()) message += " (in: " + Shorten(statement) + ")";
  return BadInput(std::move(message));
}

}  // namespace

void Db::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }
void Stmt::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

Db::Db(sqlite3* db, std::string label) : db_(db), label_(std::move(label)) {}

Status Db::Error(std::string_view what, std::string_view statement) const {
  return SqliteError(db_.get(), label_, what, statement);
}

// SQLITE_OPEN_NOMUTEX throughout: a connection is used by one thread at a time (the analyzer
// is single-threaded, the injector's connection belongs to its writer thread).
StatusOr<Db> Db::OpenWith(const std::string& path, const std::string& label, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = label + ": cannot open as SQLite: " +
                          (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    sqlite3_close_v2(raw);
    return BadInput(std::move(message));
  }
  sqlite3_extended_result_codes(raw, 1);
  // Inputs are untrusted: no function with side effects runs from a view or trigger a file
  // defines, and the schema cannot be corrupted through writable_schema tricks.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  return Db(raw, label);
}

StatusOr<Db> Db::OpenReadOnly(const std::string& path) {
  return OpenWith(path, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
}

StatusOr<Db> Db::OpenReadWrite(const std::string& path) {
  return OpenWith(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
}

StatusOr<Db> Db::OpenMemory(const std::string& label) {
  return OpenWith(":memory:", label, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
}

StatusOr<Db> Db::Create(const std::string& path, bool replace) {
  if (replace) std::remove(path.c_str());
  return OpenWith(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
}

Status Db::Exec(std::string_view sql_text) const {
  std::string text(sql_text);
  char* errmsg = nullptr;
  int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &errmsg);
  if (rc != SQLITE_OK) {
    std::string message = label_ + ": " + (errmsg ? errmsg : sqlite3_errstr(rc)) + " (in: " +
                          Shorten(text) + ")";
    sqlite3_free(errmsg);
    return BadInput(std::move(message));
  }
  return OkStatus();
}

namespace {

int DenyEscapes(void*, int action, const char* arg1, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
      return SQLITE_DENY;
    case SQLITE_PRAGMA: {
      std::string_view pragma = arg1 ? arg1 : "";
      return (pragma == "foreign_keys" || pragma == "user_version") ? SQLITE_OK : SQLITE_DENY;
    }
    default:
      return SQLITE_OK;
  }
}

}  // namespace

Status Db::ExecUntrusted(std::string_view sql_text) const {
  sqlite3_limit(db_.get(), SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_set_authorizer(db_.get(), DenyEscapes, nullptr);
  Status status = Exec(sql_text);
  sqlite3_set_authorizer(db_.get(), nullptr, nullptr);
  return status;
}

StatusOr<Stmt> Db::Prepare(std::string_view sql_text) const { return PrepareWith(sql_text, 0); }

StatusOr<Stmt> Db::PreparePersistent(std::string_view sql_text) const {
  return PrepareWith(sql_text, SQLITE_PREPARE_PERSISTENT);
}

StatusOr<Stmt> Db::PrepareWith(std::string_view sql_text, unsigned int flags) const {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql_text.data(), static_cast<int>(sql_text.size()), flags,
                              &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return Error("cannot prepare query", sql_text);
  }
  return Stmt(db_.get(), label_, raw, std::string(sql_text));
}

namespace {

struct IntRowCall {
  int64_t if_null;
  const std::function<bool(const int64_t*, int)>* row;
};

void IntRowStep(sqlite3_context* context, int argc, sqlite3_value** argv) {
  const auto* call = static_cast<const IntRowCall*>(sqlite3_user_data(context));
  if (argc > Db::kMaxIntRowColumns) {
    sqlite3_result_error(context, "too many columns for an integer row", -1);
    return;
  }
  int64_t values[Db::kMaxIntRowColumns];
  for (int i = 0; i < argc; ++i) {
    // NULL reads as 0: only a 0 needs its type asked, one call per value instead of two.
    const int64_t value = sqlite3_value_int64(argv[i]);
    values[i] = value == 0 && sqlite3_value_type(argv[i]) == SQLITE_NULL ? call->if_null : value;
  }
  if (!(*call->row)(values, argc)) sqlite3_result_error(context, "stopped", -1);
}

void IntRowFinal(sqlite3_context* context) { sqlite3_result_null(context); }

}  // namespace

Status Db::AggregateIntRows(std::string_view function_name, int64_t if_null,
                            std::string_view sql_text, const std::function<Status(Stmt*)>& bind,
                            const std::function<bool(const int64_t*, int)>& row) const {
  IntRowCall call{if_null, &row};
  const std::string name(function_name);
  if (sqlite3_create_function_v2(db_.get(), name.c_str(), -1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 &call, nullptr, IntRowStep, IntRowFinal,
                                 nullptr) != SQLITE_OK) {
    return Error("cannot register " + name);
  }
  Status status;
  {
    auto stmt = Prepare(sql_text);
    if (!stmt.ok()) {
      status = stmt.status();
    } else {
      status = bind(&*stmt);
      if (status.ok()) status = stmt->Step().status();
    }
  }
  // Unregistered before `call` goes away: no later statement can reach it.
  sqlite3_create_function_v2(db_.get(), name.c_str(), -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, nullptr,
                             nullptr, nullptr, nullptr, nullptr);
  return status;
}

Status Db::SetBusyTimeout(int milliseconds) const {
  if (sqlite3_busy_timeout(db_.get(), milliseconds) != SQLITE_OK) {
    return Error("cannot set the busy timeout");
  }
  return OkStatus();
}

StatusOr<bool> Db::HasTable(std::string_view name, std::string* type) const {
  OCC_ASSIGN_OR_RETURN(Stmt stmt,
                       Prepare("SELECT type FROM sqlite_master WHERE name = ?1 AND type IN "
                               "('table', 'view')"));
  OCC_RETURN_IF_ERROR(stmt.BindText(1, name));
  OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (row && type) *type = stmt.Text(0);
  return row;
}

StatusOr<bool> Db::HasColumn(std::string_view table, std::string_view column) const {
  OCC_ASSIGN_OR_RETURN(Stmt stmt, Prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2"));
  OCC_RETURN_IF_ERROR(stmt.BindText(1, table));
  OCC_RETURN_IF_ERROR(stmt.BindText(2, column));
  return stmt.Step();
}

Stmt::Stmt(sqlite3* db, std::string label, sqlite3_stmt* stmt, std::string sql_text)
    : db_(db), label_(std::move(label)), stmt_(stmt), sql_(std::move(sql_text)) {}

Status Stmt::BindFailed() {
  Status error = SqliteError(db_, label_, "cannot bind parameter", sql_);
  if (bind_error_.ok()) bind_error_ = error;
  return error;
}

StatusOr<bool> Stmt::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, label_, "query failed", sql_);
}

Status Stmt::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = OkStatus();
  return OkStatus();
}

Status Stmt::Run() {
  if (!bind_error_.ok()) [[unlikely]] {
    sqlite3_reset(stmt_.get());
    return std::exchange(bind_error_, OkStatus());
  }
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) [[likely]] {
    sqlite3_reset(stmt_.get());
    return OkStatus();
  }
  // The message before sqlite3_reset, which may replace it.
  Status error = SqliteError(db_, label_, "query failed", sql_);
  sqlite3_reset(stmt_.get());
  return error;
}

int Stmt::ColumnCount() const { return sqlite3_column_count(stmt_.get()); }
std::string Stmt::ColumnName(int column) const {
  const char* name = sqlite3_column_name(stmt_.get(), column);
  return name ? name : "";
}
bool Stmt::IsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}
int64_t Stmt::Int64(int column) const { return sqlite3_column_int64(stmt_.get(), column); }
double Stmt::Double(int column) const { return sqlite3_column_double(stmt_.get(), column); }
std::string_view Stmt::TextView(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return {};
  int bytes = sqlite3_column_bytes(stmt_.get(), column);
  return {reinterpret_cast<const char*>(text), static_cast<size_t>(bytes)};
}
std::string Stmt::Text(int column) const { return std::string(TextView(column)); }

StatusOr<Transaction> Transaction::Begin(const Db& db) {
  OCC_RETURN_IF_ERROR(db.Exec("BEGIN"));
  return Transaction(&db);
}

StatusOr<Transaction> Transaction::BeginImmediate(const Db& db) {
  OCC_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_) (void)db_->Exec("ROLLBACK");
}

Status Transaction::Commit() {
  const Db* db = std::exchange(db_, nullptr);
  if (!db) return Internal("transaction already finished");
  Status status = db->Exec("COMMIT");
  if (!status.ok()) (void)db->Exec("ROLLBACK");
  return status;
}

}  // namespace occ::sql
