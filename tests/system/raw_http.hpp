#pragma once

// HTTP/1.1 spoken byte by byte, for what httplib's client never sends:
// requests pipelined in one write, requests that never end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.hpp"

namespace hacoboot::test {

// A client connected to the loopback `port` that sent `sent` and then
// nothing more, its connection left open; invalid when it could not.
inline UniqueFd connect_and_send(std::uint16_t port, const std::string& sent) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) return {};
  if (!sent.empty() && ::send(fd.get(), sent.data(), sent.size(), MSG_NOSIGNAL) < 0) return {};
  return fd;
}

struct RawAnswer {
  int status = 0;
  std::string head;  // the status line and the headers
  std::string body;

  // Whether the head has the header line `line` ("Connection: close"), in any case.
  [[nodiscard]] bool has_header(std::string_view line) const {
    const auto lower = [](std::string_view text) {
      std::string out(text);
      std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
      return out;
    };
    return lower(head).find("\r\n" + lower(line) + "\r\n") != std::string::npos;
  }
};

struct RawAnswers {
  std::vector<RawAnswer> answers;
  bool closed = false;  // the server closed the connection (or reset it)
};

// The length the head announces; 0 without Content-Length.
inline std::size_t content_length(const std::string& head) {
  for (std::size_t at = head.find("\r\n"); at != std::string::npos; at = head.find("\r\n", at + 2)) {
    constexpr std::string_view kName = "content-length:";
    std::string name = head.substr(at + 2, kName.size());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == kName) return std::stoul(head.substr(at + 2 + kName.size()));
  }
  return 0;
}

// Answers read from `connection` until `count` of them came or the server
// closed it. Each answer's body is framed by its Content-Length. A receive
// timeout guards against a hang.
inline RawAnswers read_answers(int connection, std::size_t count) {
  const timeval hang_guard{.tv_sec = 30, .tv_usec = 0};
  ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &hang_guard, sizeof(hang_guard));
  RawAnswers read;
  std::string received;
  std::vector<char> chunk(4096);
  while (read.answers.size() < count) {
    const auto head_end = received.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      RawAnswer answer;
      answer.head = received.substr(0, head_end + 2);
      const auto length = content_length(answer.head);
      if (received.size() >= head_end + 4 + length) {
        answer.status = std::stoi(answer.head.substr(answer.head.find(' ') + 1, 3));
        answer.body = received.substr(head_end + 4, length);
        received.erase(0, head_end + 4 + length);
        read.answers.push_back(std::move(answer));
        continue;
      }
    }
    const ssize_t got = ::recv(connection, chunk.data(), chunk.size(), 0);
    if (got <= 0) {
      read.closed = got == 0 || errno == ECONNRESET;
      break;
    }
    received.append(chunk.data(), static_cast<std::size_t>(got));
  }
  return read;
}

}  // namespace hacoboot::test
