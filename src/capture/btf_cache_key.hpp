#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace hacoboot {

// The GNU build id (hex) in a sequence of ELF notes, as /sys/kernel/notes
// holds for the running kernel image; nullopt when there is none.
std::optional<std::string> gnu_build_id(std::span<const std::byte> notes);

// File name of the minimal BTF that fits one kernel (its build id) and one
// BPF object (a hash of its bytes: another build of the tool may read other
// fields): "<build id>-<16 hex digits>.btf".
std::string btf_cache_file_name(const std::string& build_id, std::span<const std::byte> bpf_object);

}  // namespace hacoboot
