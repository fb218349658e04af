// read_usdt_probes (libelf) against binutils' readelf on real binaries: the
// demo launcher (a probe without semaphore) and usdt-semaphore-probes (three
// probes with semaphores and register, constant and memory operands). No root
// needed: nothing is traced.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "capture/usdt_argument.hpp"
#include "capture/usdt_notes.hpp"
#include "cli/probe_listing.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"

namespace hacoboot {
namespace {

std::string run_readelf(const std::vector<std::string>& args) {
  std::vector<std::string> argv{test::readelf().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto result = it::run_process(argv, std::filesystem::temp_directory_path(), std::chrono::seconds(30));
  EXPECT_TRUE(result.status.exited && result.status.code == 0) << result.status.describe() << "\n" << result.err;
  return result.out;
}

// The stapsdt notes as `readelf -n` prints them.
std::vector<UsdtProbe> readelf_probes(const std::string& path) {
  const std::string text = run_readelf({"-n", "--wide", path});
  static const std::regex kNote(
      R"(Provider: (\S+)\s+Name: (\S+)\s+Location: 0x([0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: 0x([0-9a-f]+)\s+Arguments: ([^\n]*))");
  std::vector<UsdtProbe> probes;
  for (std::sregex_iterator match(text.begin(), text.end(), kNote), end; match != end; ++match) {
    probes.push_back({(*match)[1], (*match)[2], (*match)[5], std::stoull((*match)[3], nullptr, 16),
                      std::stoull((*match)[4], nullptr, 16)});
  }
  return probes;
}

// Symbol name -> value from `readelf -s`.
std::map<std::string, std::uint64_t> readelf_symbols(const std::string& path) {
  std::istringstream lines(run_readelf({"-s", "--wide", path}));
  static const std::regex kSymbol(R"(^\s*\d+: ([0-9a-f]+)\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)$)");
  std::map<std::string, std::uint64_t> symbols;
  for (std::string line; std::getline(lines, line);) {
    if (std::smatch match; std::regex_match(line, match, kSymbol)) {
      symbols[match[2]] = std::stoull(match[1], nullptr, 16);
    }
  }
  return symbols;
}

auto fields(const UsdtProbe& p) {
  return std::tie(p.provider, p.name, p.arguments, p.address, p.semaphore);
}

void expect_same_probes(const std::vector<UsdtProbe>& ours, const std::vector<UsdtProbe>& readelf) {
  ASSERT_EQ(ours.size(), readelf.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(fields(ours[i]), fields(readelf[i]))
        << "probe " << i << ": ours " << ours[i].provider << ":" << ours[i].name << " at " << std::hex
        << ours[i].address << " semaphore " << ours[i].semaphore << " '" << ours[i].arguments << "', readelf "
        << readelf[i].provider << ":" << readelf[i].name << " at " << readelf[i].address << " semaphore "
        << readelf[i].semaphore << " '" << readelf[i].arguments << "'";
  }
}

// Every argument spec the compiler wrote is understood (none shown raw).
void expect_arguments_decoded(const std::vector<UsdtProbe>& probes) {
  for (const auto& probe : probes) {
    const auto arguments = parse_usdt_arguments(probe.arguments);
    EXPECT_EQ(arguments.size(), 2U) << probe.name << ": " << probe.arguments;
    for (const auto& argument : arguments) {
      EXPECT_NE(argument.kind, UsdtArgument::Kind::Unrecognised) << probe.name << ": " << probe.arguments;
    }
  }
}

TEST(UsdtNotes, DemoLauncherMatchesReadelfAndHasNoSemaphore) {
  const auto probes = read_usdt_probes(test::launcher());
  expect_same_probes(probes, readelf_probes(test::launcher()));
  ASSERT_EQ(probes.size(), 1U);  // noinline: exactly one probe site
  EXPECT_TRUE(is_phase_probe(probes[0]));
  EXPECT_EQ(probes[0].semaphore, 0U);
  expect_arguments_decoded(probes);

  std::ostringstream listing;
  write_probe_list(test::launcher(), probes, listing);
  EXPECT_NE(listing.str().find("* haconiwa  bootstrap_phase_pass  "), std::string::npos) << listing.str();
  EXPECT_NE(listing.str().find("  none  "), std::string::npos) << listing.str();
}

TEST(UsdtNotes, SemaphoreAddressesAreTheSemaphoreSymbols) {
  const auto probes = read_usdt_probes(test::semaphore_probes());
  expect_same_probes(probes, readelf_probes(test::semaphore_probes()));
  ASSERT_EQ(probes.size(), 3U);
  const auto symbols = readelf_symbols(test::semaphore_probes());
  for (const auto& probe : probes) {
    const std::string semaphore = probe.provider + "_" + probe.name + "_semaphore";
    ASSERT_TRUE(symbols.contains(semaphore)) << semaphore;
    EXPECT_NE(probe.semaphore, 0U) << probe.name;
    EXPECT_EQ(probe.semaphore, symbols.at(semaphore)) << probe.name;
    EXPECT_NE(probe.address, 0U) << probe.name;
  }
  expect_arguments_decoded(probes);

  std::ostringstream listing;
  write_probe_list(test::semaphore_probes(), probes, listing);
  EXPECT_EQ(listing.str().find("none"), std::string::npos) << listing.str();
  EXPECT_EQ(listing.str().find("unrecognised"), std::string::npos) << listing.str();
}

// The bytes of `path` at `offset`, `count` of them ("" past the end).
std::string file_bytes(const std::string& path, std::uint64_t offset, std::size_t count) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string bytes(count, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  return in ? bytes : "";
}

// The offsets a uprobe attaches at: on x86-64 every probe site is a one-byte
// nop (0x90) in the file, and a semaphore is a 16-bit counter, 0 in the file.
TEST(UsdtNotes, FileOffsetsPointAtTheProbeSitesAndSemaphores) {
  for (const std::string path : {test::launcher(), test::semaphore_probes()}) {
    for (const auto& probe : read_usdt_probes(path)) {
      ASSERT_NE(probe.file_offset, 0U) << path << ": " << probe.name;
#if defined(__x86_64__)
      EXPECT_EQ(file_bytes(path, probe.file_offset, 1), "\x90") << path << ": " << probe.name;
#endif
      if (probe.semaphore == 0) {
        EXPECT_EQ(probe.semaphore_file_offset, 0U) << path << ": " << probe.name;
        continue;
      }
      ASSERT_NE(probe.semaphore_file_offset, 0U) << path << ": " << probe.name;
      EXPECT_EQ(file_bytes(path, probe.semaphore_file_offset, 2), std::string(2, '\0')) << path << ": " << probe.name;
    }
  }
}

}  // namespace
}  // namespace hacoboot
