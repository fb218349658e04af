#include "capture/kernel_support.hpp"

#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace hacoboot {
namespace {

// The table and the oldest release must not drift apart.
constexpr KernelVersion newest_required() {
  KernelVersion newest;
  for (const auto& feature : kKernelFeatures) {
    if (feature.without.empty()) newest = std::max(newest, feature.since);
  }
  return newest;
}
static_assert(newest_required() == kOldestKernel, "kOldestKernel is the newest `since` of a required feature");

// Raw BTF starts with its magic, 0xeB9F, in the file's byte order.
constexpr std::array<char, 2> kBtfMagicLittle{'\x9f', '\xeb'};
constexpr std::array<char, 2> kBtfMagicBig{'\xeb', '\x9f'};
constexpr std::array<char, 4> kElfMagic{'\x7f', 'E', 'L', 'F'};

}  // namespace

std::optional<KernelVersion> parse_kernel_release(std::string_view release) {
  KernelVersion version;
  const char* end = release.data() + release.size();
  const auto major = std::from_chars(release.data(), end, version.major);
  if (major.ec != std::errc{} || major.ptr == end || *major.ptr != '.') return std::nullopt;
  const auto minor = std::from_chars(major.ptr + 1, end, version.minor);
  if (minor.ec != std::errc{}) return std::nullopt;
  return version;
}

std::string running_kernel_release() {
  utsname name{};
  return ::uname(&name) == 0 ? name.release : "";
}

std::optional<bool> kernel_has_ring_buffer() {
  const int supported = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr);
  if (supported < 0) return std::nullopt;
  return supported == 1;
}

std::optional<std::string> btf_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::string("not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> head{};
  if (!in.read(head.data(), head.size())) return std::string(in.is_open() ? "too short for BTF" : "cannot be read");
  const auto starts_with = [&](const auto& magic) { return std::equal(magic.begin(), magic.end(), head.begin()); };
  if (starts_with(kBtfMagicLittle) || starts_with(kBtfMagicBig) || starts_with(kElfMagic)) return std::nullopt;
  return std::string("not BTF: neither raw BTF (magic 0xeB9F) nor an ELF file with a .BTF section");
}

}  // namespace hacoboot
