#include "exporter/metrics_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "exporter/listen_address.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "temp_dir.hpp"
#include "util/errors.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;

const ListenAddress kAnyLoopbackPort{"127.0.0.1", 0};
// The tests run from their own directory, not the tool's.
const std::filesystem::path kModule = test::http_module();

MetricsServer::Render fixed(std::string body) {
  return [body = std::move(body)] { return body; };
}

// A client connected to the server on `port` that sends `sent` and then
// nothing more, its connection left open.
UniqueFd connect_and_send(std::uint16_t port, const std::string& sent) {
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

// The connections a server of this process listening on `port` has
// accepted: the sockets with that local port and a peer.
std::size_t accepted_connections(std::uint16_t port) {
  std::size_t accepted = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    const auto name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof(peer);
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0 || local.ss_family != AF_INET ||
        ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port) != port) {
      continue;
    }
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0) ++accepted;
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  }
  return accepted;
}

TEST(MetricsServer, ServesMetricsAsTextFormat004) {
  const MetricsServer server(kAnyLoopbackPort, fixed("hacoboot_boots_started_total 3\n"), kModule);
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
  const MetricsServer server(
      kAnyLoopbackPort, [&scrapes] { return std::to_string(++scrapes); }, kModule);
  httplib::Client client("127.0.0.1", server.port());
  for (const char* expected : {"1", "2"}) {
    const auto response = client.Get("/metrics");
    ASSERT_TRUE(response) << httplib::to_string(response.error());
    EXPECT_EQ(response->body, expected);
  }
}

TEST(MetricsServer, IndexLinksToMetricsAndOtherPathsAreNotFound) {
  const MetricsServer server(kAnyLoopbackPort, fixed(""), kModule);
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
  const MetricsServer first(kAnyLoopbackPort, fixed(""), kModule);
  const ListenAddress same{"127.0.0.1", first.port()};
  try {
    const MetricsServer second(same, fixed(""), kModule);
    FAIL() << "a second server listened on " << to_string(same);
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), to_string(same) + ": cannot listen: Address already in use");
  }
}

TEST(MetricsServer, ServesOnIpv6Loopback) {
  std::optional<MetricsServer> server;
  try {
    server.emplace(ListenAddress{"::1", 0}, fixed("ok"), kModule);
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
    const MetricsServer server(kAnyLoopbackPort, fixed("x"), kModule);
    httplib::Client client("127.0.0.1", server.port());
    client.set_keep_alive(true);
    ASSERT_TRUE(client.Get("/metrics"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

// Prometheus gives up on a scrape after 10 s. Slow clients, some connected
// and silent, some trickling half a request line, must not hold the scraper
// up: the scrape is answered within a client timeout well under that.
TEST(MetricsServer, AnswersAScrapeWhileFiftySlowClientsHoldConnections) {
  const MetricsServer server(kAnyLoopbackPort, fixed("hacoboot_boots_started_total 3\n"), kModule);
  std::vector<UniqueFd> slow_clients;
  for (int i = 0; i < 50; ++i) {
    slow_clients.push_back(connect_and_send(server.port(), i % 2 == 0 ? "" : "GET /met"));
    ASSERT_TRUE(slow_clients.back().valid()) << "slow client " << i << " could not connect";
  }
  // The scrape comes once the server has accepted all of them, while it
  // still waits on every one (each has 2 s from its accept to send a request).
  ASSERT_TRUE(it::wait_until([&] { return accepted_connections(server.port()) >= slow_clients.size(); }, 30s, 5ms))
      << "the server accepted " << accepted_connections(server.port()) << " of " << slow_clients.size()
      << " connections";
  std::atomic<bool> trickling = true;
  std::thread trickle([&] {
    // A byte every 100 ms on every other connection: never a pause long
    // enough for a timeout on each read to end it.
    while (trickling) {
      for (std::size_t i = 1; i < slow_clients.size(); i += 2) {
        ::send(slow_clients[i].get(), "r", 1, MSG_NOSIGNAL);
      }
      std::this_thread::sleep_for(100ms);
    }
  });
  httplib::Client scraper("127.0.0.1", server.port());
  scraper.set_connection_timeout(5s);
  scraper.set_read_timeout(5s);
  const auto response = scraper.Get("/metrics");
  trickling = false;
  trickle.join();
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hacoboot_boots_started_total 3\n");
}

// A client that never finishes its request is let go, however it trickles:
// the server closes its connection (the client's writes fail).
TEST(MetricsServer, ClosesAConnectionWhoseRequestNeverCompletes) {
  const MetricsServer server(kAnyLoopbackPort, fixed(""), kModule);
  const auto slow = connect_and_send(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n");
  ASSERT_TRUE(slow.valid());
  bool closed = false;
  for (int i = 0; i < 200 && !closed; ++i) {  // 20 s at most, a hang guard
    std::this_thread::sleep_for(100ms);
    closed = ::send(slow.get(), "X", 1, MSG_NOSIGNAL) < 0;
  }
  EXPECT_TRUE(closed) << "the server still held a connection trickling a header after 20 s";
}

TEST(MetricsServer, LeavesTheCallersSignalMaskAlone) {
  sigset_t before;
  sigset_t after;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
  const MetricsServer server(kAnyLoopbackPort, fixed(""), kModule);
  ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    EXPECT_EQ(sigismember(&before, signal), sigismember(&after, signal)) << "signal " << signal;
  }
}

TEST(MetricsServer, MissingModuleIsAnErrorNamingIt) {
  try {
    const MetricsServer server(kAnyLoopbackPort, fixed(""), kModule.parent_path() / "no-such-module.so");
    FAIL() << "a server started without its module";
  } catch (const RuntimeError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("loading the HTTP module"), std::string::npos) << message;
    EXPECT_NE(message.find("no-such-module.so"), std::string::npos) << message;
  }
}

// The module runs with the tool's privileges as soon as it is loaded: one
// that someone else could have written is refused, naming it and why.
class PlantedModule : public ::testing::Test {
 protected:
  // A copy of the module in a directory of the temporary one.
  std::filesystem::path plant() {
    auto copy = dir_.path() / "modules" / kHttpModuleName;
    std::filesystem::create_directories(copy.parent_path());
    std::filesystem::permissions(copy.parent_path(), std::filesystem::perms(0755));
    std::filesystem::copy_file(kModule, copy);
    return copy;
  }

  // The error loading `module` gives; "" when it loads.
  static std::string refusal(const std::filesystem::path& module) {
    try {
      const MetricsServer server(kAnyLoopbackPort, fixed(""), module);
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "";
  }

 private:
  test::TempDir dir_;
};

TEST_F(PlantedModule, ATrustedCopyLoads) {
  EXPECT_EQ(refusal(plant()), "");
}

TEST_F(PlantedModule, OneItsGroupOrOthersCanWriteIsRefused) {
  const auto module = plant();
  for (const auto& [mode, reason] : {std::pair{0775, "writable by its group"}, std::pair{0757, "writable by others"},
                                     std::pair{0777, "writable by its group and others"}}) {
    std::filesystem::permissions(module, std::filesystem::perms(mode));
    EXPECT_EQ(refusal(module).rfind("refusing to load the HTTP module: " + module.string() + ": " + reason + " (", 0),
              0)
        << std::oct << mode << ": " << refusal(module);
  }
}

TEST_F(PlantedModule, OneInADirectoryOthersCanWriteIsRefused) {
  const auto module = plant();
  std::filesystem::permissions(module.parent_path(), std::filesystem::perms(01777));  // as /tmp
  EXPECT_EQ(refusal(module).rfind("refusing to load the HTTP module: " + module.parent_path().string() +
                                      ": writable by its group and others",
                                  0),
            0)
      << refusal(module);
}

TEST_F(PlantedModule, OneOwnedByAnotherUserIsRefused) {
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || nobody == nullptr) GTEST_SKIP() << "needs root and a user nobody to chown to";
  const auto module = plant();
  ASSERT_EQ(::chown(module.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  EXPECT_EQ(refusal(module).rfind("refusing to load the HTTP module: " + module.string() + ": owned by uid " +
                                      std::to_string(nobody->pw_uid) + ", not by uid 0",
                                  0),
            0)
      << refusal(module);
}

TEST_F(PlantedModule, ASymbolicLinkIsRefused) {
  const auto module = plant();
  const auto link = module.parent_path() / "link.so";
  std::filesystem::create_symlink(module, link);
  EXPECT_EQ(refusal(link).rfind("refusing to load the HTTP module: " + link.string() + ": a symbolic link (", 0), 0)
      << refusal(link);
}

// Started from the build tree or installed, the tool finds the module in one
// of the places it looks: beside itself, or its library directory.
TEST(MetricsServer, ToolLooksBesideItselfThenInItsLibraryDirectory) {
  const auto candidates = http_module_candidates();
  ASSERT_EQ(candidates.size(), 2U);
  const auto here = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  EXPECT_EQ(candidates[0], here / kHttpModuleName);
  EXPECT_EQ(candidates[1].filename(), kHttpModuleName);
  EXPECT_EQ(candidates[1].parent_path().filename(), "hacoboot-sampler");
}

}  // namespace
}  // namespace hacoboot
