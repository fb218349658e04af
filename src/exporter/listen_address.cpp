#include "exporter/listen_address.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <limits>

namespace hacoboot {
namespace {

bool is_ip_literal(int family, const std::string& host) {
  std::array<unsigned char, sizeof(in6_addr)> ignored{};
  return ::inet_pton(family, host.c_str(), ignored.data()) == 1;
}

}  // namespace

Expected<ListenAddress> parse_listen_address(std::string_view text) {
  const auto bad = [text](const std::string& why) {
    return Failure{"'" + std::string(text) + "': " + why + " (ADDR:PORT, e.g. 127.0.0.1:9100, [::1]:9100, :9100)"};
  };
  ListenAddress address;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return bad("no ']' after the IPv6 address");
    if (text.substr(close + 1, 1) != ":") return bad("no ':PORT' after the IPv6 address");
    address.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
    if (!is_ip_literal(AF_INET6, address.host)) return bad("'" + address.host + "' is not an IPv6 address");
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("no ':PORT'");
    const std::string_view host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return bad("an IPv6 address goes in brackets");
    address.host = host.empty() ? kDefaultListenHost : host;
    if (!is_ip_literal(AF_INET, address.host)) return bad("'" + address.host + "' is not an IPv4 address");
  }

  if (port_text.empty()) return bad("no port after ':'");
  unsigned long port = 0;
  const auto* end = port_text.data() + port_text.size();
  const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (ec == std::errc::invalid_argument || ptr != end)
    return bad("port '" + std::string(port_text) + "' is not a number");
  if (ec == std::errc::result_out_of_range || port > std::numeric_limits<std::uint16_t>::max()) {
    return bad("port " + std::string(port_text) + " is not 0-65535");
  }
  address.port = static_cast<std::uint16_t>(port);
  return address;
}

std::string to_string(const ListenAddress& address) {
  const bool ipv6 = address.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

}  // namespace hacoboot
