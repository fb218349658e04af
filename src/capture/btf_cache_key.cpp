#include "capture/btf_cache_key.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace hacoboot {
namespace {

constexpr std::size_t align4(std::size_t n) {
  return (n + 3) & ~std::size_t{3};
}

// FNV-1a: a stable, dependency-free hash; the key needs no collision
// resistance against an attacker (the cache directory is root's own).
std::uint64_t fnv1a(std::span<const std::byte> bytes) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const std::byte b : bytes) {
    hash ^= static_cast<std::uint8_t>(b);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace

std::optional<std::string> gnu_build_id(std::span<const std::byte> notes) {
  std::size_t offset = 0;
  while (offset + sizeof(Elf64_Nhdr) <= notes.size()) {
    Elf64_Nhdr header{};
    std::memcpy(&header, notes.data() + offset, sizeof(header));
    const std::size_t name_at = offset + sizeof(header);
    const std::size_t desc_at = name_at + align4(header.n_namesz);
    const std::size_t next = desc_at + align4(header.n_descsz);
    if (header.n_namesz > notes.size() || header.n_descsz > notes.size() || next > notes.size()) break;
    const auto name = notes.subspan(name_at, header.n_namesz);
    const bool is_gnu =
        header.n_namesz == sizeof(ELF_NOTE_GNU) && std::memcmp(name.data(), ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0;
    if (is_gnu && header.n_type == NT_GNU_BUILD_ID && header.n_descsz > 0) {
      std::string hex;
      for (const std::byte b : notes.subspan(desc_at, header.n_descsz)) {
        hex += fmt::format("{:02x}", static_cast<unsigned>(b));
      }
      return hex;
    }
    offset = next;
  }
  return std::nullopt;
}

std::string btf_cache_file_name(const std::string& build_id, std::span<const std::byte> bpf_object) {
  return fmt::format("{}-{:016x}.btf", build_id, fnv1a(bpf_object));
}

}  // namespace hacoboot
