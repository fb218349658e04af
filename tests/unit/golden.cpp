#include "golden.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/build_paths.hpp"

namespace hacoboot::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (!text.empty() && text.back() != '\n') lines.back() += "  [no newline at end]";
  return lines;
}

std::string visible(const std::string& line) {
  std::string out;
  for (char c : line) {
    if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string line_diff(const std::string& expected, const std::string& actual) {
  const auto a = lines_of(expected);
  const auto b = lines_of(actual);
  // Longest common subsequence table, small files only.
  std::vector<std::vector<std::size_t>> lcs(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::ostringstream out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out << "  " << visible(a[i]) << '\n';
      ++i;
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out << "- " << visible(a[i]) << "   <- expected only, line " << i + 1 << '\n';
      ++i;
    } else {
      out << "+ " << visible(b[j]) << "   <- actual only, line " << j + 1 << '\n';
      ++j;
    }
  }
  return out.str();
}

::testing::AssertionResult matches_golden(const std::string& name, const std::string& actual) {
  const std::string path = (golden_dir() / name).string();
  if (std::getenv("HACOBOOT_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << actual;
    return ::testing::AssertionFailure() << "rewrote " << path << " (HACOBOOT_UPDATE_GOLDEN): review it";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ::testing::AssertionFailure() << "missing golden file " << path;
  std::ostringstream expected;
  expected << in.rdbuf();
  if (expected.str() == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "output differs from " << path << "\n" << line_diff(expected.str(), actual);
}

}  // namespace hacoboot::test
