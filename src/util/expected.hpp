#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hacoboot {

// Why an operation failed, in words fit for the message the caller prints
// ("writable by its group", "bpftool: exit status 1").
struct Failure {
  std::string why;
};

// The one way a recoverable failure is returned (CONTRIBUTING.md, "Errors"):
// the value, or the Failure the caller must look at before using it (to fall
// back, retry or warn). Fatal errors throw instead. std::expected is C++23.
template <typename T>
class [[nodiscard]] Expected {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): `return value;` is the point
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor): `return Failure{why};` too
  Expected(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  [[nodiscard]] bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& operator*() & { return std::get<0>(state_); }
  const T& operator*() const& { return std::get<0>(state_); }
  T&& operator*() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  // Only when !has_value().
  [[nodiscard]] const std::string& error() const { return std::get<1>(state_).why; }

 private:
  std::variant<T, Failure> state_;
};

// For an operation with no value: success, or why not.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): `return Failure{why};`
  Expected(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  [[nodiscard]] bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  // Only when !has_value().
  [[nodiscard]] const std::string& error() const { return std::get<1>(state_).why; }

 private:
  // A variant, as in Expected<T>: std::get checks the index itself, where an
  // optional's -> would be unchecked access to the analyzer.
  std::variant<std::monostate, Failure> state_;
};

}  // namespace hacoboot
