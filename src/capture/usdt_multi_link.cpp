#include "capture/usdt_multi_link.hpp"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "capture/capture_errors.hpp"
#include "capture/usdt_argument.hpp"
#include "util/errors.hpp"

namespace hacoboot {
namespace {

// union bpf_attr's link_create with its uprobe_multi member (Linux 6.6).
struct UprobeMultiLinkCreate {
  std::uint32_t prog_fd;
  std::uint32_t target_fd;
  std::uint32_t attach_type;
  std::uint32_t flags;
  alignas(8) std::uint64_t path;
  std::uint64_t offsets;
  std::uint64_t ref_ctr_offsets;
  std::uint64_t cookies;
  std::uint32_t cnt;
  std::uint32_t uprobe_flags;
  std::uint32_t pid;
};
static_assert(offsetof(UprobeMultiLinkCreate, path) == 16 && offsetof(UprobeMultiLinkCreate, pid) == 56);

// libbpf 1.1's struct __bpf_usdt_spec (usdt.bpf.h), value of its spec map;
// the map's value size is checked against it before anything is written.
struct UsdtArgSpec {
  std::uint64_t val_off;
  std::uint32_t arg_type;
  std::int16_t reg_off;
  bool arg_signed;
  std::int8_t arg_bitshift;
};
constexpr std::size_t kMaxUsdtArgs = 12;
struct UsdtSpec {
  std::array<UsdtArgSpec, kMaxUsdtArgs> args;
  std::uint64_t usdt_cookie;
  std::int16_t arg_cnt;
};
static_assert(sizeof(UsdtSpec) == 208);

long link_create(UprobeMultiLinkCreate& attr) {
  return ::syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

std::uint64_t address_of(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer);
}

// A site's argument locations as libbpf's spec map holds them.
UsdtSpec spec_of(const UsdtMultiAttach::Site& site) {
  UsdtSpec spec{};
  spec.arg_cnt = static_cast<std::int16_t>(site.arguments.size());
  for (std::size_t i = 0; i < site.arguments.size(); ++i) {
    const auto& location = site.arguments[i];
    spec.args.at(i) = {.val_off = location.value_or_offset,
                       .arg_type = static_cast<std::uint32_t>(location.type),
                       .reg_off = location.register_offset,
                       .arg_signed = location.is_signed,
                       .arg_bitshift = location.bitshift};
  }
  return spec;
}

}  // namespace

bool kernel_has_uprobe_multi() {
  // What libbpf 1.3 asks: a program of that attach type loads, and a link
  // on a directory fails with EBADF (EINVAL: the kernel knows no such link).
  const std::array<bpf_insn, 2> return_zero{{
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  }};
  LIBBPF_OPTS(bpf_prog_load_opts, options,
              // NOLINTNEXTLINE(clang-analyzer-optin.core.EnumCastOutOfRange): newer than the headers' enum
              .expected_attach_type = static_cast<bpf_attach_type>(kUprobeMultiAttachType));
  const UniqueFd program(
      bpf_prog_load(BPF_PROG_TYPE_KPROBE, nullptr, "GPL", return_zero.data(), return_zero.size(), &options));
  if (!program.valid()) return false;
  const std::uint64_t offset = 0;
  UprobeMultiLinkCreate attr{};
  attr.prog_fd = static_cast<std::uint32_t>(program.get());
  attr.attach_type = kUprobeMultiAttachType;
  attr.path = address_of("/");
  attr.offsets = address_of(&offset);
  attr.cnt = 1;
  const UniqueFd link(static_cast<int>(link_create(attr)));
  return !link.valid() && errno == EBADF;
}

Expected<UsdtMultiAttach> plan_usdt_multi_attach(const std::string& binary, const std::string& name,
                                                 const std::vector<UsdtProbe>& sites) {
  UsdtMultiAttach plan{.binary = binary, .name = name, .sites = {}};
  for (const auto& probe : sites) {
    if (probe.file_offset == 0 || (probe.semaphore != 0 && probe.semaphore_file_offset == 0)) {
      return Failure{"a probe site outside the binary's loadable segments"};
    }
    UsdtMultiAttach::Site site{
        .file_offset = probe.file_offset, .semaphore_file_offset = probe.semaphore_file_offset, .arguments = {}};
    for (const auto& argument : parse_usdt_arguments(probe.arguments)) {
      const auto location = locate_usdt_argument(argument);
      if (!location) return Failure{"argument '" + argument.operand + "' is for libbpf to locate"};
      site.arguments.push_back(*location);
    }
    if (site.arguments.size() > kMaxUsdtArgs) return Failure{"more than 12 arguments"};
    plan.sites.push_back(std::move(site));
  }
  if (plan.sites.empty()) return Failure{"no haconiwa:bootstrap_phase_pass probe"};
  return plan;
}

Expected<UniqueFd> attach_usdt_multi(int program_fd, int spec_map_fd, std::size_t spec_value_size,
                                     const UsdtMultiAttach& plan, std::uint32_t first_spec_id) {
  if (spec_value_size != sizeof(UsdtSpec)) {
    throw UprobeMultiError("libbpf's USDT spec map holds " + std::to_string(spec_value_size) + "-byte values, not " +
                               std::to_string(sizeof(UsdtSpec)),
                           true);
  }
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> semaphores;
  std::vector<std::uint64_t> cookies;
  for (std::uint32_t i = 0; i < plan.sites.size(); ++i) {
    const auto& site = plan.sites[i];
    const std::uint32_t id = first_spec_id + i;
    const UsdtSpec spec = spec_of(site);
    if (bpf_map_update_elem(spec_map_fd, &id, &spec, BPF_ANY) != 0) {
      return Failure{std::string("writing the USDT argument specs: ") + std::strerror(errno)};
    }
    offsets.push_back(site.file_offset);
    semaphores.push_back(site.semaphore_file_offset);
    cookies.push_back(id);  // bpf_usdt_arg() finds the spec by the cookie
  }
  UprobeMultiLinkCreate attr{};
  attr.prog_fd = static_cast<std::uint32_t>(program_fd);
  attr.attach_type = kUprobeMultiAttachType;
  attr.path = address_of(plan.binary.c_str());
  attr.offsets = address_of(offsets.data());
  attr.ref_ctr_offsets = address_of(semaphores.data());
  attr.cookies = address_of(cookies.data());
  attr.cnt = static_cast<std::uint32_t>(offsets.size());
  attr.pid = 0;  // every process: forked children pass phases too
  UniqueFd link(static_cast<int>(link_create(attr)));
  if (!link.valid()) {
    return Failure{"attaching USDT haconiwa:bootstrap_phase_pass in " + plan.name +
                   " (uprobe_multi): " + std::strerror(errno)};
  }
  return link;
}

}  // namespace hacoboot
