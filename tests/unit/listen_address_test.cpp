#include "exporter/listen_address.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hacoboot {
namespace {

TEST(ListenAddress, ParsesIpv4Ipv6AndDefaultHost) {
  EXPECT_EQ(*parse_listen_address("127.0.0.1:9100"), (ListenAddress{"127.0.0.1", 9100}));
  EXPECT_EQ(*parse_listen_address("0.0.0.0:80"), (ListenAddress{"0.0.0.0", 80}));
  EXPECT_EQ(*parse_listen_address("[::1]:9100"), (ListenAddress{"::1", 9100}));
  EXPECT_EQ(*parse_listen_address("[::]:65535"), (ListenAddress{"::", 65535}));
  EXPECT_EQ(*parse_listen_address(":9100"), (ListenAddress{"127.0.0.1", 9100})) << "loopback unless asked";
  EXPECT_EQ(*parse_listen_address("127.0.0.1:0"), (ListenAddress{"127.0.0.1", 0})) << "any free port";
}

TEST(ListenAddress, PrintsWhatItParses) {
  for (const char* text : {"127.0.0.1:9100", "[::1]:9100", "[fe80::1]:0"}) {
    EXPECT_EQ(to_string(*parse_listen_address(text)), text);
  }
}

// Why `text` is refused, or "" when it parses.
std::string error_of(const std::string& text) {
  const auto address = parse_listen_address(text);
  return address ? "" : address.error();
}

TEST(ListenAddress, RefusesWithTheReason) {
  const struct {
    const char* text;
    const char* reason;
  } kCases[] = {
      {"", "no ':PORT'"},
      {"9100", "no ':PORT'"},
      {"127.0.0.1", "no ':PORT'"},
      {"127.0.0.1:", "no port after ':'"},
      {"127.0.0.1:65536", "port 65536 is not 0-65535"},
      {"127.0.0.1:99999999999999999999999", "is not 0-65535"},
      {"127.0.0.1:http", "port 'http' is not a number"},
      {"127.0.0.1:-1", "port '-1' is not a number"},
      {"127.0.0.1:91 ", "port '91 ' is not a number"},
      {"::1:9100", "an IPv6 address goes in brackets"},
      {"[::1]", "no ':PORT' after the IPv6 address"},
      {"[::1]9100", "no ':PORT' after the IPv6 address"},
      {"[::1:9100", "no ']'"},
      {"[127.0.0.1]:80", "'127.0.0.1' is not an IPv6 address"},
      {"localhost:9100", "'localhost' is not an IPv4 address"},
      {"256.0.0.1:9100", "'256.0.0.1' is not an IPv4 address"},
  };
  for (const auto& c : kCases) {
    const auto message = error_of(c.text);
    EXPECT_NE(message.find(c.reason), std::string::npos) << "'" << c.text << "': " << message;
    EXPECT_TRUE(message.starts_with("'" + std::string(c.text) + "': ")) << message;
  }
}

}  // namespace
}  // namespace hacoboot
