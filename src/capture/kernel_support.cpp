#include "capture/kernel_support.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <memory>
#include <utility>

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

namespace {

// What libbpf's error code says, its own codes (4000 and up) included.
std::string libbpf_error_text(int error) {
  std::array<char, 128> text{};
  libbpf_strerror(error, text.data(), text.size());
  return text.data();
}

struct BtfDeleter {
  void operator()(btf* types) const { btf__free(types); }
};

// libbpf silent while it lives: its warnings would quote the file raw, and
// the caller's message says what is wrong.
class QuietLibbpf {
 public:
  QuietLibbpf() : previous_(libbpf_set_print(nullptr)) {}
  QuietLibbpf(const QuietLibbpf&) = delete;
  QuietLibbpf& operator=(const QuietLibbpf&) = delete;
  QuietLibbpf(QuietLibbpf&&) = delete;
  QuietLibbpf& operator=(QuietLibbpf&&) = delete;
  ~QuietLibbpf() { libbpf_set_print(previous_); }

 private:
  libbpf_print_fn_t previous_;
};

// The file parsed as the load parses --btf (btf_custom_path): what libbpf
// cannot read there, it cannot relocate the programs with.
std::optional<std::string> unparsable(const std::string& path, bool elf) {
  const QuietLibbpf quiet;
  const std::unique_ptr<btf, BtfDeleter> types(btf__parse(path.c_str(), nullptr));
  if (!types) {
    const int error = errno;
    if (elf && error == ENOENT) return std::string("an ELF file without a .BTF section");
    return "not valid BTF: " + libbpf_error_text(error);
  }
  if (btf__find_by_name_kind(types.get(), "task_struct", BTF_KIND_STRUCT) < 0) {
    return std::string("BTF without struct task_struct: not the types of a kernel");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> btf_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::string("not a regular file");
  if (std::cmp_greater(st.st_size, kMaxBtfFileBytes)) {
    return fmt::format("larger than {} MiB, the most read as kernel types (a kernel's BTF is a few MiB)",
                       kMaxBtfFileBytes >> 20);
  }
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> head{};
  if (!in.read(head.data(), head.size())) return std::string(in.is_open() ? "too short for BTF" : "cannot be read");
  const auto starts_with = [&](const auto& magic) { return std::equal(magic.begin(), magic.end(), head.begin()); };
  if (!starts_with(kBtfMagicLittle) && !starts_with(kBtfMagicBig) && !starts_with(kElfMagic)) {
    return std::string("not BTF: neither raw BTF (magic 0xeB9F) nor an ELF file with a .BTF section");
  }
  return unparsable(path, starts_with(kElfMagic));
}

}  // namespace hacoboot
