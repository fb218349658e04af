#include "hacoboot/boot_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "hacoboot/phases.hpp"

namespace hacoboot {
namespace {

struct Milestone {
  std::uint64_t ts_ns;
  const char* kind;
  std::string phase;  // empty for execve and listen
  std::string name;
};

std::vector<Milestone> milestones_of(const BootRecord& boot) {
  std::vector<Milestone> rows;
  rows.reserve(boot.phases.size() + 2);
  for (const auto& mark : boot.phases) {
    rows.push_back({mark.ts_ns, "phase", std::to_string(mark.phase), phase_name(mark.phase)});
  }
  if (boot.execve_ns) rows.push_back({*boot.execve_ns, "execve", "", "execve"});
  if (boot.listen_ns) rows.push_back({*boot.listen_ns, "listen", "", "listen"});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  return rows;
}

std::string optional_cell(std::optional<std::uint64_t> value) {
  return value ? std::to_string(*value) : std::string();
}

}  // namespace

BootRowWriter::BootRowWriter(std::ostream& out) : out_(out) {
  out_ << "boot\thpid\tcontainer_pid\tcgroup_id\tkind\tphase\tname\tt_ns\tsince_start_ns\tdelta_ns\n";
  out_.flush();
}

void BootRowWriter::write(const BootRecord& boot) {
  std::optional<std::uint64_t> previous;
  for (const auto& row : milestones_of(boot)) {
    const auto delta = previous ? std::optional(row.ts_ns - *previous) : std::nullopt;
    out_ << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", boot.sequence, boot.hpid, boot.container_pid,
                        boot.cgroup_id, row.kind, row.phase, row.name, row.ts_ns,
                        optional_cell(boot.since_start(row.ts_ns)), optional_cell(delta));
    previous = row.ts_ns;
  }
  out_.flush();
}

}  // namespace hacoboot
