#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "util/expected.hpp"
#include "util/unique_fd.hpp"

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

// Opens the regular file at `path` for reading, once no one but `owners`
// can change what it is: the file itself (check_trust), and every directory
// the path goes through, symbolic links followed (each directory reached
// through one as well). A directory others may write to passes only when it
// is sticky and the entry taken from it belongs to `owners`, as /tmp's do:
// others can then neither rename nor remove it. The walk is done with
// descriptors, each step from the directory checked before it, and the
// descriptor returned is of the file checked: what the caller reads is
// what was checked, whatever the path names a moment later. The failure
// names the component at fault ("/opt/x: writable by others").
Expected<UniqueFd> open_trusted_file(const std::filesystem::path& path, TrustedOwners owners);

// Removes the files of `directory` whose names start with `prefix` and end
// with `suffix`, but `keep`: what an entry replaced (an older version of the
// tool's object, an earlier boot) can never be used again.
void remove_superseded(const std::filesystem::path& directory, const std::string& prefix, const std::string& suffix,
                       const std::filesystem::path& keep);

}  // namespace hacoboot
