// Paths as docs/security.md promises them: control characters and invalid UTF-8
// shown escaped (\xNN), never raw, wherever the tool prints one: --list,
// --check and the banner.
#include <csignal>
#include <filesystem>
#include <string>

#include "fixture.hpp"
#include "support/build_paths.hpp"

namespace hacoboot::it {
namespace {

class ShownPathTest : public IntegrationTest {
 protected:
  // A copy of `binary` at a path holding an escape sequence (ESC [31m: red).
  std::filesystem::path at_escaped_path(const std::filesystem::path& binary) {
    const auto red = dir() / "\x1B[31mred";
    std::filesystem::create_directory(red);
    const auto path = red / "haconiwa";
    std::filesystem::copy_file(binary, path);
    return path;
  }
  // The path as the tool must show it.
  static std::string shown(const std::filesystem::path& path) {
    auto text = path.string();
    text.replace(text.find('\x1B'), 1, "\\x1B");
    return text;
  }
  static void expect_no_raw_control_bytes(const std::string& text) {
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_FALSE((byte < 0x20 && byte != '\n') || byte == 0x7F) << "a raw control byte in:\n" << text;
    }
  }
  static void expect_exit(const ExitStatus& status, int code, const std::string& err) {
    EXPECT_TRUE(status.exited && status.code == code) << status.describe() << ", expected exit " << code << "\n" << err;
  }
};

TEST_F(ShownPathTest, List) {
  const auto haconiwa = at_escaped_path(launcher());
  const auto r = run_process({sampler().string(), "--list", "--haconiwa", haconiwa.string()}, dir(), 60s);
  expect_exit(r.status, 0, r.err);
  EXPECT_NE(r.out.find("USDT probes in " + shown(haconiwa) + ": 1"), std::string::npos) << r.out;
  expect_no_raw_control_bytes(r.out);
}

TEST_F(ShownPathTest, Check) {
  const auto haconiwa = at_escaped_path(launcher());
  auto r = run_process({sampler().string(), "--check", "--haconiwa", haconiwa.string()}, dir(), 60s);
  expect_exit(r.status, 0, r.out + r.err);
  EXPECT_NE(r.out.find(shown(haconiwa) + ": 1 site of haconiwa:bootstrap_phase_pass"), std::string::npos) << r.out;
  expect_no_raw_control_bytes(r.out);

  // The path in what is wrong with the file.
  std::filesystem::remove(haconiwa);
  std::filesystem::copy_file("/bin/true", haconiwa);
  r = run_process({sampler().string(), "--check", "--haconiwa", haconiwa.string()}, dir(), 60s);
  expect_exit(r.status, 1, r.out + r.err);
  EXPECT_NE(r.out.find(shown(haconiwa) + ": no USDT probe"), std::string::npos) << r.out;
  expect_no_raw_control_bytes(r.out);
}

TEST_F(ShownPathTest, Banner) {
  const auto haconiwa = at_escaped_path(launcher());
  Process tracer({sampler().string(), "--haconiwa", haconiwa.string(), "--btf-cache", test::btf_cache().string(),
                  "--duration", "10m"},
                 dir());
  EXPECT_TRUE(tracer.wait_for_text("Tracing Haconiwa boots in " + shown(haconiwa) + "...", true, 60s)) << tracer.err();
  tracer.send_signal(SIGINT);
  expect_exit(tracer.wait_or_kill(60s), 0, tracer.err());
  expect_no_raw_control_bytes(tracer.err());
}

}  // namespace
}  // namespace hacoboot::it
