#include "hacoboot/system_checks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string_view>

#include "hacoboot/errors.hpp"
#include "hacoboot/usdt_notes.hpp"

namespace hacoboot {
namespace {

constexpr const char* kKernelBtf = "/sys/kernel/btf/vmlinux";
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

std::uint64_t effective_capabilities() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    constexpr std::string_view kKey = "CapEff:";
    if (line.compare(0, kKey.size(), kKey) == 0) return std::stoull(line.substr(kKey.size()), nullptr, 16);
  }
  return 0;
}

}  // namespace

std::string resolve_haconiwa(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw UsageError("'" + name + "' not found in PATH: pass the haconiwa binary with --haconiwa PATH");
}

std::vector<UsdtProbe> require_phase_probe(const std::string& path) {
  auto sites = read_usdt_probes(path);
  std::erase_if(sites, [](const UsdtProbe& probe) { return !is_phase_probe(probe); });
  if (sites.empty()) {
    throw UsageError(path + ": no USDT probe haconiwa:bootstrap_phase_pass (is it Haconiwa built with SDT probes?)");
  }
  return sites;
}

void require_kernel_btf() {
  if (::access(kKernelBtf, R_OK) != 0) {
    throw RuntimeError(std::string("kernel BTF not found (") + kKernelBtf +
                       "): this kernel was built without CONFIG_DEBUG_INFO_BTF, which CO-RE needs");
  }
}

void require_bpf_privileges() {
  const auto caps = effective_capabilities();
  const auto has = [caps](int cap) { return (caps >> cap) & 1U; };
  if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon))) return;
  throw RuntimeError("needs root or CAP_BPF+CAP_PERFMON to load BPF programs: run it with sudo");
}

}  // namespace hacoboot
