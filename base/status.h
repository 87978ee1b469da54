// Status / StatusOr: errors as values carrying a one-line message and a category. Takes
// nothing but the standard library; gives occ::Status, occ::StatusOr<T> and the
// OCC_RETURN_IF_ERROR / OCC_ASSIGN_OR_RETURN macros. The analyzer's thin main() maps the
// category to an exit code; the injector maps a failed Status to "tracing off" (errors.h),
// since nothing may reach the traced program. No exceptions cross a public API.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace occ {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input (flags, values): exit 2
  kBadInput,         // unusable input file (missing, corrupt, wrong schema): exit 2
  kNotFound,         // e.g. no launches match the filter
  kIoError,          // cannot write output
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status BadInput(std::string m) { return {StatusCode::kBadInput, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Holds either a T or a non-OK Status. Accessing value() of an error is a programming error.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr constructed from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { assert(ok()); return *value_; }
  T& value() & { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace occ

// Evaluates `expr` (a Status); if it is an error, returns it from the current function.
#define OCC_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::occ::Status occ_status_ = (expr);        \
    if (!occ_status_.ok()) return occ_status_; \
  } while (false)

#define OCC_CONCAT_INNER_(a, b) a##b
#define OCC_CONCAT_(a, b) OCC_CONCAT_INNER_(a, b)
// Evaluates `rexpr` (a StatusOr<T>); on error returns its status, else moves the value to `lhs`.
#define OCC_ASSIGN_OR_RETURN(lhs, rexpr) \
  OCC_ASSIGN_OR_RETURN_IMPL_(OCC_CONCAT_(occ_statusor_, __LINE__), lhs, rexpr)
#define OCC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                               \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
