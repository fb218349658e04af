#pragma once

#include <cstddef>
#include <string>

namespace hacoboot {

// Size limits of the files the user names (man page): far above
// what the tool writes, far below what would exhaust memory.
inline constexpr std::size_t kMaxPhaseNamesBytes = std::size_t{1} << 20;  // --phase-names: 1 MiB
inline constexpr std::size_t kMaxBaselineBytes = std::size_t{16} << 20;   // --baseline: 16 MiB

// The whole content of a file named by `option`. Only a regular file is read:
// a FIFO would block, a device never end, a directory read as empty. Throws
// UsageError naming the option and the path when it is something else, cannot
// be read, or holds more than max_bytes.
std::string read_input_file(const std::string& path, const char* option, std::size_t max_bytes);

}  // namespace hacoboot
