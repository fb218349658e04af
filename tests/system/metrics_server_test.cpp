#include "hacoboot/metrics_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>

#include "hacoboot/errors.hpp"
#include "hacoboot/listen_address.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;

const ListenAddress kAnyLoopbackPort{"127.0.0.1", 0};

MetricsServer::Render fixed(std::string body) {
  return [body = std::move(body)] { return body; };
}

TEST(MetricsServer, ServesMetricsAsTextFormat004) {
  const MetricsServer server(kAnyLoopbackPort, fixed("hacoboot_boots_started_total 3\n"));
  ASSERT_NE(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  const auto response = client.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response->body, "hacoboot_boots_started_total 3\n");
}

TEST(MetricsServer, RendersOnEveryScrape) {
  std::atomic<int> scrapes = 0;
  const MetricsServer server(kAnyLoopbackPort, [&scrapes] { return std::to_string(++scrapes); });
  httplib::Client client("127.0.0.1", server.port());
  for (const char* expected : {"1", "2"}) {
    const auto response = client.Get("/metrics");
    ASSERT_TRUE(response) << httplib::to_string(response.error());
    EXPECT_EQ(response->body, expected);
  }
}

TEST(MetricsServer, IndexLinksToMetricsAndOtherPathsAreNotFound) {
  const MetricsServer server(kAnyLoopbackPort, fixed(""));
  httplib::Client client("127.0.0.1", server.port());
  const auto index = client.Get("/");
  ASSERT_TRUE(index) << httplib::to_string(index.error());
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("<a href=\"/metrics\">"), std::string::npos) << index->body;
  for (const char* path : {"/metrics/", "/favicon.ico", "/debug"}) {
    const auto response = client.Get(path);
    ASSERT_TRUE(response) << path << ": " << httplib::to_string(response.error());
    EXPECT_EQ(response->status, 404) << path;
  }
}

TEST(MetricsServer, PortInUseIsAnErrorNamingTheAddress) {
  const MetricsServer first(kAnyLoopbackPort, fixed(""));
  const ListenAddress same{"127.0.0.1", first.port()};
  try {
    const MetricsServer second(same, fixed(""));
    FAIL() << "a second server listened on " << to_string(same);
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), to_string(same) + ": cannot listen: Address already in use");
  }
}

TEST(MetricsServer, ServesOnIpv6Loopback) {
  std::optional<MetricsServer> server;
  try {
    server.emplace(ListenAddress{"::1", 0}, fixed("ok"));
  } catch (const RuntimeError& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  httplib::Client client("::1", server->port());
  const auto response = client.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->body, "ok");
}

TEST(MetricsServer, StopsPromptlyWhileAClientKeepsItsConnection) {
  const auto start = std::chrono::steady_clock::now();
  {
    const MetricsServer server(kAnyLoopbackPort, fixed("x"));
    httplib::Client client("127.0.0.1", server.port());
    client.set_keep_alive(true);
    ASSERT_TRUE(client.Get("/metrics"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(MetricsServer, LeavesTheCallersSignalMaskAlone) {
  sigset_t before;
  sigset_t after;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
  const MetricsServer server(kAnyLoopbackPort, fixed(""));
  ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    EXPECT_EQ(sigismember(&before, signal), sigismember(&after, signal)) << "signal " << signal;
  }
}

}  // namespace
}  // namespace hacoboot
