// What clients send the metrics endpoint beyond one scrape at a time:
// requests pipelined in one write.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "exporter/listen_address.hpp"
#include "exporter/metrics_server.hpp"
#include "raw_http.hpp"

namespace hacoboot {
namespace {

const ListenAddress kAnyLoopbackPort{"127.0.0.1", 0};
// The tests run from their own directory, not the tool's.
const std::filesystem::path kModule = HACOBOOT_HTTP_MODULE;

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
    const MetricsServer server(
        kAnyLoopbackPort, [&scrapes] { return std::to_string(++scrapes); }, kModule);
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

}  // namespace
}  // namespace hacoboot
