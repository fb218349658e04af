#include "util/boot_id.hpp"

#include <fstream>

namespace hacoboot {

std::optional<std::string> current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(in, id) || id.empty()) return std::nullopt;
  return id;
}

}  // namespace hacoboot
