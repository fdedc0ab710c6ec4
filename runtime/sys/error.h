// kern::Error and kern::Result<T>: the one way errors travel in kern.
//
// An Error is a value: a kind (which decides the exit code in cli/exit_codes.cc), the errno the
// kernel gave (0 when none), a message that names the call and what it touched, and context
// frames added on the way up. It is printed once, by main, as
//   "unpacking layer sha256:ab12..: openat \"usr/lib/x\": EEXIST"
// Result<T> follows std::expected's names (has_value, value, error, operator*) so that moving to
// C++23 is a rename. Exceptions never cross a module boundary.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kern {

enum class ErrorKind {
  usage,             // bad command line
  config,            // bad kern.toml, bad profile token, bad env file
  image,             // image not found, pull failed, bad archive
  host_unsupported,  // the host cannot do what was asked (no userns, no cgroup under --require-limits)
  setup,             // a step of building the box failed
  workload,          // the command cannot be run (not found, not executable)
  internal,          // a bug in kern
};

class Error {
 public:
  Error(ErrorKind kind, int err, std::string message)
      : kind_(kind), errno_(err), message_(std::move(message)) {}

  ErrorKind kind() const { return kind_; }
  int sys_errno() const { return errno_; }
  const std::string& message() const { return message_; }
  const std::vector<std::string>& context() const { return context_; }
  // A failure code that is not an errno (a libcurl CURLcode, an HTTP status), with the name of
  // the code's domain ("curl"): shown as "(curl error 7)", never as an errno.
  int code() const { return code_; }
  const std::string& code_domain() const { return code_domain_; }
  // The hint set with with_hint (empty when the hint is derived from kind and errno).
  const std::string& explicit_hint() const { return hint_; }

  // Adds an outer frame: "unpacking layer X" makes "unpacking layer X: <inner>".
  Error& with_context(std::string frame) & {
    context_.push_back(std::move(frame));
    return *this;
  }
  Error&& with_context(std::string frame) && {
    context_.push_back(std::move(frame));
    return std::move(*this);
  }

  // Outer frames first, then the message, then the errno name: "a: b: openat \"x\": ENOENT".
  std::string what() const;
  // A line of advice derived from kind and errno, or empty.
  std::string hint() const;

  // Replace the hint derived from kind and errno with an explicit one.
  Error&& with_hint(std::string hint) && {
    hint_ = std::move(hint);
    return std::move(*this);
  }
  Error& with_hint(std::string hint) & {
    hint_ = std::move(hint);
    return *this;
  }
  Error&& with_code(std::string domain, int code) && {
    code_domain_ = std::move(domain);
    code_ = code;
    return std::move(*this);
  }
  Error& with_code(std::string domain, int code) & {
    code_domain_ = std::move(domain);
    code_ = code;
    return *this;
  }

 private:
  ErrorKind kind_;
  int errno_;
  std::string message_;
  std::vector<std::string> context_;
  std::string hint_;
  int code_ = 0;
  std::string code_domain_;
};

// "ENOENT", "EPERM", ... ; "errno 1234" for unknown values.
std::string errno_name(int err);
// "no such file or directory (ENOENT)": the words and the name, as Error::what() ends.
std::string errno_words(int err);

template <typename E>
class Unexpected {
 public:
  explicit Unexpected(E e) : error_(std::move(e)) {}
  E& error() & { return error_; }
  E&& error() && { return std::move(error_); }

 private:
  E error_;
};

inline Unexpected<Error> fail(ErrorKind kind, int err, std::string message) {
  return Unexpected<Error>(Error(kind, err, std::move(message)));
}
inline Unexpected<Error> fail(Error e) { return Unexpected<Error>(std::move(e)); }
// The common case for syscall wrappers: errno as it stands now.
inline Unexpected<Error> fail_errno(std::string message, ErrorKind kind = ErrorKind::setup) {
  return Unexpected<Error>(Error(kind, errno, std::move(message)));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Unexpected<Error> u) : v_(std::in_place_index<1>, std::move(u).error()) {}
  template <typename U>
    requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::decay_t<U>, Result> &&
             !std::is_same_v<std::decay_t<U>, Unexpected<Error>>)
  Result(U&& value) : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  Error& error() & { return std::get<1>(v_); }
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value() ? value() : T(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected<Error> u) : e_(std::move(u).error()), ok_(false) {}

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const {}

  Error& error() & { return e_; }
  const Error& error() const& { return e_; }
  Error&& error() && { return std::move(e_); }

 private:
  Error e_{ErrorKind::internal, 0, ""};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace kern

// Propagate an error, adding nothing: KERN_TRY(expr); ... value = KERN_TRY_VALUE(x, expr);
#define KERN_CONCAT_INNER(a, b) a##b
#define KERN_CONCAT(a, b) KERN_CONCAT_INNER(a, b)
#define KERN_TRY(expr)                                                      \
  do {                                                                      \
    auto&& kern_try_r_ = (expr);                                            \
    if (!kern_try_r_.has_value()) return ::kern::fail(std::move(kern_try_r_).error()); \
  } while (0)
// Declares `decl` from the value of `expr`, or returns its error.
#define KERN_TRY_ASSIGN(decl, expr) KERN_TRY_ASSIGN_IMPL(KERN_CONCAT(kern_r_, __LINE__), decl, expr)
#define KERN_TRY_ASSIGN_IMPL(tmp, decl, expr)                               \
  auto tmp = (expr);                                                        \
  if (!tmp.has_value()) return ::kern::fail(std::move(tmp).error());        \
  decl = std::move(tmp).value()
