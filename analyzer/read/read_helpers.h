// What the per-format readers (read_*.cc) share; not for use outside the read stage.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sqlite/sqlite_db.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

// Reads a column by name from a `SELECT *`-style row, so exports lacking newer columns work.
class NamedRow {
 public:
  explicit NamedRow(const sql::Stmt& stmt) : stmt_(stmt) {
    for (int i = 0; i < stmt.ColumnCount(); ++i) names_[stmt.ColumnName(i)] = i;
  }
  std::optional<int64_t> Int(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end() || stmt_.IsNull(it->second)) return std::nullopt;
    return stmt_.Int64(it->second);
  }
  std::string Text(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end()) return "";
    return stmt_.Text(it->second);
  }

 private:
  const sql::Stmt& stmt_;
  std::map<std::string, int> names_;
};

}  // namespace occ
