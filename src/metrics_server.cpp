#include "hacoboot/metrics_server.hpp"

#include <httplib.h>
#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "hacoboot/errors.hpp"

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

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, Render render)
    : server_(std::make_unique<httplib::Server>()) {
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

  // The host is an IP literal (parse_listen_address): no resolver involved.
  errno = 0;
  int port = -1;
  if (address.port == 0) {
    port = server_->bind_to_any_port(address.host, AI_NUMERICHOST);
  } else if (server_->bind_to_port(address.host, address.port, AI_NUMERICHOST)) {
    port = address.port;
  }
  if (port < 0) {
    const int error = errno;
    throw RuntimeError(to_string(address) + ": cannot listen: " + (error != 0 ? std::strerror(error) : "bind failed"));
  }
  port_ = static_cast<std::uint16_t>(port);

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

MetricsServer::~MetricsServer() {
  server_->stop();
  thread_.join();
}

}  // namespace hacoboot
