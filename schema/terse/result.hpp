// What a step that can fail returns, on every side of terse: its value, or
// the reason it failed, worded for the message the caller shows. The one
// way to say "false, and here is why" (a small std::expected, which C++20
// lacks):
//
//   Result<LevelSpec> parse_levels(std::string_view text);
//   if (auto spec = parse_levels(text)) use(*spec); else report(spec.why());
//   return Failure{"a selector is empty"};
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace terse {

// The reason, as a step returns it; converts to any Result.
struct Failure {
  std::string why;
};

template <typename T = void>
class Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Failure failure) : state_(std::in_place_index<1>, std::move(failure.why)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& operator*() & { return std::get<0>(state_); }
  const T& operator*() const& { return std::get<0>(state_); }
  T&& operator*() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  // Empty when ok().
  const std::string& why() const noexcept {
    static const std::string none;
    return ok() ? none : std::get<1>(state_);
  }

 private:
  std::variant<T, std::string> state_;
};

// Success costs one null pointer: decoders return it for every record.
template <>
class Result<void> {
 public:
  Result() = default;
  Result(Failure failure) : why_(std::make_unique<std::string>(std::move(failure.why))) {}
  Result(const Result& other) : why_(other.why_ ? std::make_unique<std::string>(*other.why_) : nullptr) {}
  Result(Result&&) noexcept = default;
  Result& operator=(const Result& other) { return *this = Result(other); }
  Result& operator=(Result&&) noexcept = default;
  ~Result() = default;

  bool ok() const noexcept { return why_ == nullptr; }
  explicit operator bool() const noexcept { return ok(); }
  // Empty when ok().
  const std::string& why() const noexcept {
    static const std::string none;
    return why_ ? *why_ : none;
  }

 private:
  std::unique_ptr<std::string> why_;
};

}  // namespace terse
