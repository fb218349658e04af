#pragma once

#include <string>
#include <vector>

namespace hacoboot {

// The NULL-terminated char* array execve(2) takes, pointing into strings
// (which must outlive it and not change size). Built before fork: between
// fork and exec only async-signal-safe calls may run.
inline std::vector<char*> c_string_array(std::vector<std::string>& strings) {
  std::vector<char*> array;
  array.reserve(strings.size() + 1);
  for (auto& s : strings) array.push_back(s.data());
  array.push_back(nullptr);
  return array;
}

}  // namespace hacoboot
