#include "capture/btf_cache_key.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace hacoboot {
namespace {

// One ELF note: header, name padded to 4, descriptor padded to 4.
void append_note(std::vector<std::byte>& out, const std::string& name, std::uint32_t type,
                 std::initializer_list<std::uint8_t> desc) {
  const auto put32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffU));
  };
  const auto pad = [&] {
    while (out.size() % 4 != 0) out.push_back(std::byte{0});
  };
  put32(static_cast<std::uint32_t>(name.size() + 1));
  put32(static_cast<std::uint32_t>(desc.size()));
  put32(type);
  for (const char c : name) out.push_back(static_cast<std::byte>(c));
  out.push_back(std::byte{0});
  pad();
  for (const auto b : desc) out.push_back(static_cast<std::byte>(b));
  pad();
}

constexpr std::uint32_t kNtGnuBuildId = 3;

TEST(GnuBuildId, FoundAfterOtherNotes) {
  std::vector<std::byte> notes;
  append_note(notes, "Xen", 1, {1, 2, 3});                                   // another owner
  append_note(notes, "GNU", 1, {9, 9, 9, 9});                                // GNU, another type
  append_note(notes, "GNU", kNtGnuBuildId, {0x85, 0xc7, 0x0e, 0x01, 0xff});  // odd length: padded
  append_note(notes, "Linux", 2, {0});
  EXPECT_EQ(gnu_build_id(notes), "85c70e01ff");
}

TEST(GnuBuildId, AbsentOrTruncated) {
  std::vector<std::byte> notes;
  EXPECT_EQ(gnu_build_id(notes), std::nullopt);
  append_note(notes, "Linux", 2, {0});
  EXPECT_EQ(gnu_build_id(notes), std::nullopt);
  std::vector<std::byte> build_id;
  append_note(build_id, "GNU", kNtGnuBuildId, {1, 2, 3, 4, 5, 6, 7, 8});
  build_id.resize(build_id.size() - 4);  // descriptor cut short
  EXPECT_EQ(gnu_build_id(build_id), std::nullopt);
}

TEST(BtfCacheFileName, ChangesWithTheKernelAndTheObject) {
  const std::vector<std::byte> a{std::byte{1}, std::byte{2}};
  const std::vector<std::byte> b{std::byte{1}, std::byte{3}};
  const auto name = btf_cache_file_name("abcd", a);
  EXPECT_EQ(name.rfind("abcd-", 0), 0U) << name;
  EXPECT_EQ(name.size(), std::string("abcd-").size() + 16 + std::string(".btf").size()) << name;
  EXPECT_EQ(name, btf_cache_file_name("abcd", a)) << "not stable";
  EXPECT_NE(name, btf_cache_file_name("abce", a));
  EXPECT_NE(name, btf_cache_file_name("abcd", b));
}

}  // namespace
}  // namespace hacoboot
