#include "cli/probe_listing.hpp"

#include "capture/usdt_argument.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <ostream>
#include <utility>

#include "util/text.hpp"

namespace hacoboot {
namespace {
// What the tool reads from the phase probe's arguments.
constexpr std::array<std::string_view, 2> kPhaseProbeArguments{"phase", "hpid"};

struct Row {
  std::string marker;
  std::string provider;
  std::string name;
  std::string location;
  std::string semaphore;
  std::string arguments;
  std::vector<std::string> decoded;
};

// A note's text is the binary's to choose: shown escaped, whole.
std::string shown(std::string_view text) {
  return printable(text, kUncut);
}

Row make_row(const UsdtProbe& probe) {
  const bool traced = is_phase_probe(probe);
  Row row{traced ? "*" : "",
          shown(probe.provider),
          shown(probe.name),
          fmt::format("{:#x}", probe.address),
          probe.semaphore == 0 ? "none" : fmt::format("{:#x}", probe.semaphore),
          probe.arguments.empty() ? "(none)" : shown(probe.arguments),
          {}};
  const auto arguments = parse_usdt_arguments(probe.arguments);
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    std::string line = fmt::format("arg{}: {}", i, shown(describe(arguments[i])));
    if (traced && i < kPhaseProbeArguments.size()) line += fmt::format(" ({})", kPhaseProbeArguments.at(i));
    row.decoded.push_back(std::move(line));
  }
  return row;
}

}  // namespace

void write_probe_list(const std::string& binary, const std::vector<UsdtProbe>& probes, std::ostream& out) {
  const auto shown_binary = shown(binary);
  if (probes.empty()) {
    out << fmt::format("USDT probes in {}: none (no .note.stapsdt notes)\n", shown_binary);
  } else {
    out << fmt::format("USDT probes in {}: {}\n", shown_binary, probes.size());
    out << fmt::format("* = {}:{}, the probe hacoboot-sampler attaches to\n\n", kPhaseProbeProvider, kPhaseProbeName);

    const Row header{"", "PROVIDER", "NAME", "LOCATION", "SEMAPHORE", "ARGUMENTS", {}};
    std::vector<Row> rows;
    rows.reserve(probes.size());
    std::transform(probes.begin(), probes.end(), std::back_inserter(rows), make_row);
    const auto width = [&](std::string Row::*column) {
      std::size_t widest = (header.*column).size();
      for (const auto& row : rows) widest = std::max(widest, (row.*column).size());
      return widest;
    };
    const std::size_t provider_width = width(&Row::provider);
    const std::size_t name_width = width(&Row::name);
    const std::size_t location_width = width(&Row::location);
    const std::size_t semaphore_width = width(&Row::semaphore);
    const auto line = [&](const Row& row) {
      return fmt::format("{:<1} {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row.marker, row.provider, provider_width,
                         row.name, name_width, row.location, location_width, row.semaphore, semaphore_width,
                         row.arguments);
    };
    const std::string indent(2 + provider_width + 2 + name_width + 2 + location_width + 2 + semaphore_width + 2, ' ');
    out << line(header);
    for (const auto& row : rows) {
      out << line(row);
      for (const auto& decoded : row.decoded) out << indent << decoded << '\n';
    }
  }
  if (std::none_of(probes.begin(), probes.end(), is_phase_probe)) {
    out << fmt::format("{}:{} is missing: hacoboot-sampler cannot trace {}\n", kPhaseProbeProvider, kPhaseProbeName,
                       shown_binary);
  }
}

}  // namespace hacoboot
