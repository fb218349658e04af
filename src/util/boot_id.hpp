#pragma once

#include <optional>
#include <string>

namespace hacoboot {

// This boot's random id (/proc/sys/kernel/random/boot_id), for what holds
// only until the next reboot; nullopt when unreadable.
std::optional<std::string> current_boot_id();

}  // namespace hacoboot
