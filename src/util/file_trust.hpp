#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "util/expected.hpp"

namespace hacoboot {

// Who may own a file the tool trusts.
enum class TrustedOwners : std::uint8_t {
  kEffectiveUser,        // what the tool wrote itself (its caches)
  kEffectiveUserOrRoot,  // what was installed (its HTTP module): root's, also when a user runs the tool
};

// Whether a file of status `status` is trustworthy, or what makes it not,
// e.g. "writable by its group": not of `type` (S_IFDIR or S_IFREG), owned by
// someone `owners` does not name, or writable by anyone but its owner.
Expected<void> check_trust(const struct stat& status, mode_t type, TrustedOwners owners);

// Whether `path` is of `type` (S_IFDIR or S_IFREG; a symbolic link is not
// followed), belongs to the effective user and nobody else can write to it.
// The tool's caches (kernel types, tracepoint ids) decide what its BPF
// programs read and attach to: it takes them only from such files.
bool owned_by_us_alone(const std::filesystem::path& path, mode_t type);

// Removes the files of `directory` whose names start with `prefix` and end
// with `suffix`, but `keep`: what an entry replaced (an older version of the
// tool's object, an earlier boot) can never be used again.
void remove_superseded(const std::filesystem::path& directory, const std::string& prefix, const std::string& suffix,
                       const std::filesystem::path& keep);

}  // namespace hacoboot
