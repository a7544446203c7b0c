// Errors as values. Only main() turns an Error into an exit code and stderr text.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rnvme {

// Exit codes are part of the user interface (documented in rnvme.8); never renumber.
enum class ErrorCode {
  kFailure = 1,        // an operation failed for a reason not covered below
  kUsage = 2,          // bad command line or option value, caught before touching the kernel
  kConfig = 3,         // host identity or configuration file problem
  kConnect = 4,        // the kernel refused to create the controller
  kNotFound = 5,       // no such controller, subsystem or RDMA device
  kEnvironment = 6,    // missing module, RDMA device or permission
};

int exit_code(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kFailure;
  std::string message;              // one line: what failed
  std::string cause;                // likely cause, may be empty
  std::string fix;                  // what to do about it, may be empty
  std::vector<std::string> evidence;  // kernel lines and checks that led to the cause
  int sys_errno = 0;                // errno of the failing system call, 0 if none
  std::string reason;               // stable snake_case class of a connect failure, or empty
  std::map<std::string, std::string> record;  // the module's attempt record (keys), if any
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}             // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;

inline Error make_error(ErrorCode code, std::string message, std::string cause = {},
                        std::string fix = {}) {
  Error e;
  e.code = code;
  e.message = std::move(message);
  e.cause = std::move(cause);
  e.fix = std::move(fix);
  return e;
}

}  // namespace rnvme
