#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/expected.hpp"

namespace hacoboot {

// Where an HTTP endpoint listens: an IP literal and a TCP port.
struct ListenAddress {
  std::string host;        // IPv4 or IPv6 literal, without brackets
  std::uint16_t port = 0;  // 0: any free port, chosen by the kernel

  bool operator==(const ListenAddress&) const = default;
};

// The default host is loopback: metrics reveal what runs on the machine, so
// exposing them beyond it must be asked for (0.0.0.0:PORT, [::]:PORT).
inline constexpr std::string_view kDefaultListenHost = "127.0.0.1";

// "127.0.0.1:9100", "[::1]:9100", or ":9100" for kDefaultListenHost. Host
// names are refused: what a name resolves to may change, an IP is what gets
// bound. A Failure says what is wrong with `text`.
Expected<ListenAddress> parse_listen_address(std::string_view text);

// "127.0.0.1:9100", "[::1]:9100": the form parse_listen_address reads.
std::string to_string(const ListenAddress& address);

}  // namespace hacoboot
