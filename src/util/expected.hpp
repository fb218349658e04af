#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace hacoboot {

// Why an operation failed, in words fit for the message the caller prints
// ("writable by its group", "bpftool: exit status 1").
struct Failure {
  std::string why;
};

// The one way a recoverable failure is returned (CONTRIBUTING.md, "Errors"):
// the value, or the error the caller must look at before using it (to fall
// back, retry or warn). Fatal errors throw instead. std::expected is C++23.
// E is Failure when the caller only reports; a struct with an enum of the
// kinds the caller branches on, and the words, when it sorts them.
template <typename T, typename E = Failure>
class [[nodiscard]] Expected {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): `return value;` is the point
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  // NOLINTNEXTLINE(google-explicit-constructor): `return Failure{why};` too
  Expected(E error) : state_(std::in_place_index<1>, std::move(error)) {}

  [[nodiscard]] bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& operator*() & { return std::get<0>(state_); }
  const T& operator*() const& { return std::get<0>(state_); }
  T&& operator*() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  // Only when !has_value(): a Failure's words, or the typed error.
  [[nodiscard]] const auto& error() const {
    const auto& error = std::get<1>(state_);
    if constexpr (std::is_same_v<E, Failure>) {
      return error.why;  // a Failure is nothing but its words
    } else {
      return error;  // looked at whole: its kind, then its words
    }
  }

 private:
  std::variant<T, E> state_;
};

// For an operation with no value: success, or why not.
template <typename E>
class [[nodiscard]] Expected<void, E> {
 public:
  Expected() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): `return Failure{why};`
  Expected(E error) : state_(std::in_place_index<1>, std::move(error)) {}

  [[nodiscard]] bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  // Only when !has_value(), as in Expected<T, E>.
  [[nodiscard]] const auto& error() const {
    const auto& error = std::get<1>(state_);
    if constexpr (std::is_same_v<E, Failure>) {
      return error.why;  // a Failure is nothing but its words
    } else {
      return error;  // looked at whole: its kind, then its words
    }
  }

 private:
  // A variant, as in Expected<T, E>: std::get checks the index itself, where
  // an optional's -> would be unchecked access to the analyzer.
  std::variant<std::monostate, E> state_;
};

// The value of an operation recoverable for one caller and fatal for
// another: the fatal caller's way to throw the words as its error type.
template <typename Error, typename T>
T value_or_throw(Expected<T> expected) {
  if (!expected) throw Error(expected.error());
  return std::move(*expected);
}
template <typename Error>
void value_or_throw(const Expected<void>& expected) {
  if (!expected) throw Error(expected.error());
}

}  // namespace hacoboot
