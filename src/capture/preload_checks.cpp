#include "capture/preload_checks.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "capture/capture_errors.hpp"
#include "capture/kernel_support.hpp"
#include "capture/usdt_notes.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// What the shell would run: a directory in PATH with NAME's name is not.
bool is_executable_file(const std::string& path) {
  return is_regular_file(path) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_executable(const std::string& name, const std::vector<std::string>& also_in) {
  const char* path = std::getenv("PATH");
  std::istringstream path_dirs(path != nullptr ? path : "");
  std::vector<std::string> dirs;
  // An empty entry is the current directory, as for the shell.
  for (std::string dir; std::getline(path_dirs, dir, ':');) dirs.push_back(dir.empty() ? "." : dir);
  dirs.insert(dirs.end(), also_in.begin(), also_in.end());
  for (const auto& dir : dirs) {
    std::string candidate = dir;
    candidate.append("/").append(name);
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

Expected<std::string, HaconiwaMissing> find_haconiwa(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  if (auto found = find_executable(name)) return *found;
  const char* path = std::getenv("PATH");
  const auto where = path != nullptr ? "PATH (" + printable(path) + ")" : std::string("PATH, which is not set");
  return HaconiwaMissing{.why = "'" + printable(name) + "' not found in " + where,
                         .name = name,
                         .in_current_directory = is_regular_file(name)};
}

std::string resolve_haconiwa(const std::string& name) {
  auto found = find_haconiwa(name);
  if (!found) throw HaconiwaNotFound(found.error());
  return std::move(*found);
}

std::vector<UsdtProbe> require_phase_probe(const std::string& path) {
  return value_or_throw<UsageError>(phase_probe_sites(read_usdt_probes(path), path));
}

Expected<std::vector<UsdtProbe>> phase_probe_sites(std::vector<UsdtProbe> probes, const std::string& name) {
  std::erase_if(probes, [](const UsdtProbe& probe) { return !is_phase_probe(probe); });
  if (probes.empty()) {
    return Failure{printable(name) +
                   ": no USDT probe haconiwa:bootstrap_phase_pass (is it Haconiwa built with SDT probes?)"};
  }
  return probes;
}

void require_kernel_btf(const std::string& btf_file) {
  if (!btf_file.empty()) {
    if (const auto problem = btf_file_problem(btf_file))
      throw UsageError("--btf " + printable(btf_file) + ": " + *problem);
    return;
  }
  if (::access(kKernelBtf, R_OK) != 0) {
    throw RuntimeError(std::string("kernel BTF not found (") + kKernelBtf +
                       "): this kernel was built without CONFIG_DEBUG_INFO_BTF, which CO-RE needs; give a BTF "
                       "file of this kernel with --btf (BTFHub has them for many distribution kernels)");
  }
}

const char* capability_name(Capability capability) {
  switch (capability) {
    case Capability::DacReadSearch: return "CAP_DAC_READ_SEARCH";
    case Capability::Kill: return "CAP_KILL";
    case Capability::SysPtrace: return "CAP_SYS_PTRACE";
    case Capability::SysAdmin: return "CAP_SYS_ADMIN";
    case Capability::Perfmon: return "CAP_PERFMON";
    case Capability::Bpf: return "CAP_BPF";
  }
  return "?";
}

Capabilities Capabilities::effective() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    constexpr std::string_view kKey = "CapEff:";
    if (line.starts_with(kKey)) return Capabilities(std::stoull(line.substr(kKey.size()), nullptr, 16));
  }
  return Capabilities(0);
}

void require_bpf_privileges() {
  if (Capabilities::effective().may_trace()) return;
  throw RuntimeError("needs root or CAP_BPF+CAP_PERFMON to load BPF programs: run it with sudo");
}

}  // namespace hacoboot
