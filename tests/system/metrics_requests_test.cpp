// What clients send the metrics endpoint beyond one scrape at a time:
// requests pipelined in one write, bodies, requests that never end.
#include <gtest/gtest.h>
#include <httplib.h>
#include <malloc.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "exporter/listen_address.hpp"
#include "exporter/metrics_server.hpp"
#include "raw_http.hpp"
#include "support/build_paths.hpp"

namespace hacoboot {
namespace {

const ListenAddress kAnyLoopbackPort{"127.0.0.1", 0};
// The tests run from their own directory, not the tool's.
const std::filesystem::path kModule = test::http_module();

std::string scrape_requests(std::size_t count) {
  std::string requests;
  for (std::size_t i = 0; i < count; ++i) requests += "GET /metrics HTTP/1.1\r\nHost: exporter\r\n\r\n";
  return requests;
}

// HTTP/1.1 pipelining: requests sent in one write are each answered, in
// their order, on their connection, which stays open for more.
TEST(MetricsRequests, AnswersEveryPipelinedRequestInOrder) {
  for (const std::size_t pipelined : {2U, 10U}) {
    SCOPED_TRACE(std::to_string(pipelined) + " requests in one write");
    std::atomic<int> scrapes = 0;
    MetricsServer server(
        kAnyLoopbackPort, [&scrapes] { return std::to_string(++scrapes); }, kModule);
    server.serve();
    const auto client = test::connect_and_send(server.port(), scrape_requests(pipelined));
    ASSERT_TRUE(client.valid());
    const auto read = test::read_answers(client.get(), pipelined);
    ASSERT_EQ(read.answers.size(), pipelined) << (read.closed ? "the server closed the connection" : "no answer");
    for (std::size_t i = 0; i < pipelined; ++i) {
      EXPECT_EQ(read.answers[i].status, 200) << "answer " << i + 1;
      EXPECT_EQ(read.answers[i].body, std::to_string(i + 1)) << "answer " << i + 1;
    }
    // Kept alive: one more request on the same connection is answered too.
    const std::string one_more = "GET / HTTP/1.1\r\n\r\n";
    ASSERT_EQ(::send(client.get(), one_more.data(), one_more.size(), MSG_NOSIGNAL), one_more.size());
    const auto more = test::read_answers(client.get(), 1);
    ASSERT_EQ(more.answers.size(), 1U) << "the connection was not kept alive";
    EXPECT_EQ(more.answers[0].status, 200);
  }
}

// Requests the endpoint refuses at once, answering and closing the
// connection, whatever follows: a body (413), a method but GET and HEAD
// (405), more header lines than a scrape ever sends (431).
TEST(MetricsRequests, RefusesABodyAnOtherMethodAndTooManyHeaders) {
  std::string many_headers;
  for (int i = 0; i < 100; ++i) many_headers += "X-Header-" + std::to_string(i) + ": value\r\n";
  const std::vector<std::pair<std::string, int>> refused{
      {"POST /metrics HTTP/1.1\r\nHost: exporter\r\nContent-Length: 4000000000\r\n\r\n", 413},
      {"POST /metrics HTTP/1.1\r\nHost: exporter\r\nTransfer-Encoding: chunked\r\n\r\n", 413},
      {"GET /metrics HTTP/1.1\r\nHost: exporter\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", 413},
      {"POST /metrics HTTP/1.1\r\nHost: exporter\r\n\r\n", 405},
      {"GET /metrics HTTP/1.1\r\n" + many_headers + "\r\n", 431},
  };
  MetricsServer server(
      kAnyLoopbackPort, [] { return "hacoboot_boots_started_total 3\n"; }, kModule);
  server.serve();
  for (const auto& [request, status] : refused) {
    SCOPED_TRACE(request.substr(0, request.find("\r\n\r\n")).substr(0, 120));
    // The request, then a scrape on the same connection: never answered.
    const auto client = test::connect_and_send(server.port(), request + scrape_requests(1));
    ASSERT_TRUE(client.valid());
    const auto read = test::read_answers(client.get(), 2);
    ASSERT_EQ(read.answers.size(), 1U);
    EXPECT_EQ(read.answers[0].status, status) << read.answers[0].head;
    EXPECT_TRUE(read.answers[0].has_header("Connection: close")) << read.answers[0].head;
    EXPECT_TRUE(read.closed);
  }
}

// Range is ignored: httplib answered each range with its part of the page,
// the page many times over for one request.
TEST(MetricsRequests, AnswersTheWholePageWhateverRangeAsksFor) {
  const std::string page = "hacoboot_boots_started_total 3\n";
  MetricsServer server(
      kAnyLoopbackPort, [&page] { return page; }, kModule);
  server.serve();
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 500; ++i) ranges += ",0-";
  httplib::Client client("127.0.0.1", server.port());
  const auto response = client.Get("/metrics", {{"Range", ranges}});
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->body == page) << "an answer of " << response->body.size() << " bytes";
}

// This process's resident memory (VmRSS) or its peak (VmHWM) in bytes, from
// /proc/self/status; 0 when not found.
std::size_t memory_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoul(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

// Resets VmHWM to VmRSS (proc(5), /proc/PID/clear_refs), having given back
// what the allocator holds free: memory an earlier test left resident would
// otherwise take in what this one allocates without raising the peak.
bool reset_peak_memory() {
  ::malloc_trim(0);
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5" << std::flush;
  return static_cast<bool>(clear_refs);
}

// A request that goes on for as long as its client sends: its start, then
// the piece sent again and again.
struct EndlessRequest {
  const char* name;
  std::string start;
  std::string piece;
};

// What a client of the endpoint streaming an endless request gets: the
// server closes the connection, having taken at most kStreamed bytes.
// Far more than the kernel buffers between two loopback sockets: a client
// that sent it all was read, not refused.
constexpr std::size_t kStreamed = 32U << 20;
// 8 such clients at once: the endpoint's memory grows by less than this
// while it serves them (VmHWM). Each may make its connection hold a few KiB
// of request and a thread; unbounded, they took hundreds of MB in as many
// seconds.
constexpr std::size_t kClients = 8;
constexpr std::size_t kMemoryGrowthBound = 16U << 20;

// The bytes a client sent of `request` before the server closed its
// connection; kStreamed when it never did.
std::size_t stream_until_closed(std::uint16_t port, const EndlessRequest& request) {
  const auto client = test::connect_and_send(port, request.start);
  if (!client.valid()) return 0;
  // Little buffered on the client's side: a send fails soon after the close.
  const int buffer = 64 << 10;
  ::setsockopt(client.get(), SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  std::size_t sent = request.start.size();
  while (sent < kStreamed) {
    const ssize_t written = ::send(client.get(), request.piece.data(), request.piece.size(), MSG_NOSIGNAL);
    if (written < 0) return sent;
    sent += static_cast<std::size_t>(written);
  }
  return sent;
}

void PrintTo(const EndlessRequest& request, std::ostream* out) {
  *out << request.name;
}

class EndlessRequestTest : public ::testing::TestWithParam<EndlessRequest> {};

TEST_P(EndlessRequestTest, IsClosedWithinABoundOfMemoryAndScrapesGoOn) {
  MetricsServer server(
      kAnyLoopbackPort, [] { return "hacoboot_boots_started_total 3\n"; }, kModule);
  server.serve();
  ASSERT_TRUE(reset_peak_memory()) << "cannot reset VmHWM through /proc/self/clear_refs";
  const auto before = memory_bytes("VmRSS");
  std::vector<std::size_t> sent(kClients);
  {
    std::vector<std::jthread> clients;
    for (std::size_t i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] { sent[i] = stream_until_closed(server.port(), GetParam()); });
    }
  }
  const auto growth = memory_bytes("VmHWM") - before;
  for (std::size_t i = 0; i < kClients; ++i) {
    EXPECT_GT(sent[i], 0U) << "client " << i << " could not connect";
    EXPECT_LT(sent[i], kStreamed) << "client " << i << ": the server took all of it";
  }
  EXPECT_LT(growth, kMemoryGrowthBound) << "peak resident memory grew by " << (growth >> 10) << " KiB";
  std::cout << "[  FIGURE  ] peak resident memory grew by " << (growth >> 10) << " KiB; a client sent at most "
            << (*std::max_element(sent.begin(), sent.end()) >> 10) << " KiB before the close\n";

  httplib::Client scraper("127.0.0.1", server.port());
  const auto response = scraper.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hacoboot_boots_started_total 3\n");
}

INSTANTIATE_TEST_SUITE_P(
    MetricsRequests, EndlessRequestTest,
    ::testing::Values(EndlessRequest{"Body",
                                     "POST /metrics HTTP/1.1\r\nHost: exporter\r\nContent-Length: 4000000000\r\n\r\n",
                                     std::string(64 << 10, 'b')},
                      EndlessRequest{"ChunkedBody",
                                     "POST /metrics HTTP/1.1\r\nHost: exporter\r\nTransfer-Encoding: chunked\r\n\r\n",
                                     "10000\r\n" + std::string(0x10000, 'c') + "\r\n"},
                      EndlessRequest{"RequestLine", "GET /", std::string(64 << 10, 'l')},
                      EndlessRequest{"HeaderLine", "GET /metrics HTTP/1.1\r\nX-Header: ", std::string(64 << 10, 'h')},
                      EndlessRequest{"Headers", "GET /metrics HTTP/1.1\r\n",
                                     [] {
                                       std::string headers;
                                       while (headers.size() < (64U << 10)) headers += "X-Header: value\r\n";
                                       return headers;
                                     }()}),
    [](const ::testing::TestParamInfo<EndlessRequest>& tested) { return std::string(tested.param.name); });

}  // namespace
}  // namespace hacoboot
