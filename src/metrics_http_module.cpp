// The HTTP module (see metrics_endpoint.hpp): cpp-httplib and what it
// drags in are loaded only when the tool serves metrics.
#include <httplib.h>
#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "hacoboot/metrics_endpoint.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kIndexPage =
    "<html><head><title>hacoboot-sampler</title></head>\n"
    "<body><h1>hacoboot-sampler</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

// A few workers, so that one slow client does not hold up the scraper.
constexpr std::size_t kWorkers = 4;
// Short timeouts bound how long the destructor waits for a worker that holds
// an idle keep-alive connection or a slow request; a scraper sends at once.
constexpr time_t kKeepAliveSeconds = 1;
constexpr time_t kReadTimeoutSeconds = 2;

// Blocks every signal in the calling thread while alive, so that threads
// started meanwhile begin with all signals blocked.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &previous_);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  BlockedSignals(BlockedSignals&&) = delete;
  BlockedSignals& operator=(BlockedSignals&&) = delete;
  ~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

 private:
  sigset_t previous_{};
};

// httplib's default also sets SO_REUSEPORT, which would let a second exporter
// bind the same port and silently take half of the scrapes. SO_REUSEADDR
// alone still allows a restart while old connections linger in TIME_WAIT.
void reuse_address_only(int socket) {
  const int yes = 1;
  ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

class HttplibEndpoint final : public MetricsEndpoint {
 public:
  // Binds, or leaves port() at 0 with errno telling why.
  explicit HttplibEndpoint(RenderMetrics render);
  HttplibEndpoint(const HttplibEndpoint&) = delete;
  HttplibEndpoint& operator=(const HttplibEndpoint&) = delete;
  HttplibEndpoint(HttplibEndpoint&&) = delete;
  HttplibEndpoint& operator=(HttplibEndpoint&&) = delete;
  ~HttplibEndpoint() override;

  // The host is an IP literal (parse_listen_address): no resolver involved.
  bool bind(const std::string& host, std::uint16_t port);
  void start();
  [[nodiscard]] std::uint16_t port() const override { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_ = std::make_unique<httplib::Server>();
  std::uint16_t port_ = 0;
  std::atomic<bool> accept_loop_ended_ = false;
  std::thread thread_;
};

HttplibEndpoint::HttplibEndpoint(RenderMetrics render) {
  server_->set_socket_options(reuse_address_only);
  // httplib takes ownership of the raw pointer it asks for.
  server_->new_task_queue = [] { return std::make_unique<httplib::ThreadPool>(kWorkers).release(); };
  server_->set_keep_alive_timeout(kKeepAliveSeconds);
  server_->set_read_timeout(kReadTimeoutSeconds, 0);
  server_->Get("/metrics", [render = std::move(render)](const httplib::Request&, httplib::Response& response) {
    response.set_content(render(), kMetricsContentType);
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(kIndexPage, "text/html; charset=utf-8");
  });
}

bool HttplibEndpoint::bind(const std::string& host, std::uint16_t port) {
  errno = 0;
  int bound = -1;
  if (port == 0) {
    bound = server_->bind_to_any_port(host, AI_NUMERICHOST);
  } else if (server_->bind_to_port(host, port, AI_NUMERICHOST)) {
    bound = port;
  }
  if (bound < 0) return false;
  port_ = static_cast<std::uint16_t>(bound);
  return true;
}

void HttplibEndpoint::start() {
  {
    const BlockedSignals blocked;  // the stop signals belong to the tracing thread
    thread_ = std::thread([this] {
      server_->listen_after_bind();
      accept_loop_ended_ = true;
    });
  }
  // httplib 0.11's stop() does nothing before the accept loop has begun: wait
  // for it, so that the destructor's stop() is never lost.
  while (!server_->is_running() && !accept_loop_ended_) std::this_thread::sleep_for(1ms);
}

HttplibEndpoint::~HttplibEndpoint() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace
}  // namespace hacoboot

// NOLINTNEXTLINE(readability-identifier-naming): the name dlsym looks up
extern "C" __attribute__((visibility("default"))) void hacoboot_open_metrics_endpoint(
    const std::string& host, std::uint16_t port, hacoboot::RenderMetrics render,
    std::unique_ptr<hacoboot::MetricsEndpoint>& endpoint, std::string& error) {
  try {
    auto server = std::make_unique<hacoboot::HttplibEndpoint>(std::move(render));
    if (!server->bind(host, port)) {
      const int code = errno;
      error = code != 0 ? std::strerror(code) : "bind failed";
      return;
    }
    server->start();
    endpoint = std::move(server);
  } catch (const std::exception& e) {
    error = e.what();
  }
}

static_assert(std::is_same_v<decltype(hacoboot_open_metrics_endpoint), hacoboot::OpenMetricsEndpoint>,
              "the module's entry point and the tool's view of it must agree");
