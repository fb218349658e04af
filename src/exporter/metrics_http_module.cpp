// The HTTP module (see metrics_endpoint.hpp): cpp-httplib and what it
// drags in are loaded only when the tool serves metrics.
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "exporter/metrics_endpoint.hpp"
#include "util/expected.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

using namespace std::chrono_literals;

constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kIndexPage =
    "<html><head><title>hacoboot-sampler</title></head>\n"
    "<body><h1>hacoboot-sampler</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

// A connection must deliver each request (line and headers) within
// kRequestSeconds of the server starting to wait for it (its accept, or the
// previous answer): a client that sends nothing, or trickles a byte now and
// then, is closed then. httplib's own timeouts bound each read, not the
// request, and its pool serves connections in turn: a few idle clients held
// the scraper up for seconds (BENCHMARKS.md, the metrics endpoint under slow
// clients).
constexpr auto kRequestSeconds = 2s;
// And take each answer within kAnswerSeconds of its first byte.
constexpr auto kAnswerSeconds = 5s;
// How often a connection waiting for its client checks whether the server
// stops, so that stopping does not wait out kRequestSeconds.
constexpr auto kStopCheck = 100ms;
// A thread per connection, at most this many at once (each holds a file
// descriptor of the tool). Past it the accept loop waits for one to end,
// within the bounds above; newer connections wait in the kernel's queue.
constexpr std::size_t kMaxConnections = 128;
// Requests answered on one connection, the last with "Connection: close":
// a client pipelining several requests in one write, or scraping over a kept
// connection, gets them all answered up to this many (httplib's own default
// of 5 dropped the rest of a pipelined write), and then connects again.
constexpr std::size_t kRequestsPerConnection = 100;
// What a request may make its connection hold, whatever its client sends
// (httplib itself reads a body of any length, and a header line until it
// ends). The request line and headers take at most kRequestBytes, in at most
// kRequestLines lines (a scrape is a handful of short ones): past either, the
// answer is 431 and the connection closes. The endpoint takes no body: a
// request announcing one is answered 413 and closed, its body unread; any
// method but GET and HEAD, 405 (httplib would read their body to the end).
// Range is ignored: httplib answers it with the page once per range asked
// for, thousands of pages for one request. So a connection holds its read
// buffer, at most kRequestBytes of request as httplib parses it, and the page
// it answers with; the endpoint, at most kMaxConnections times that.
constexpr std::size_t kRequestBytes = 8192;
constexpr std::size_t kRequestLines = 64;
// Instead of httplib's answer to a request it saw cut short (400, or none).
constexpr std::string_view kRequestTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

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

// httplib's task queue, as a thread per connection: started when no thread
// is free, kept for later connections, at most kMaxConnections.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  // Called by the accept loop with a connection to serve.
  void enqueue(std::function<void()> serve) override;
  // Called by the accept loop once it has ended.
  void shutdown() override;

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable ended_;
  std::deque<std::function<void()>> connections_;
  std::size_t open_ = 0;  // queued or being served
  std::size_t idle_ = 0;  // threads waiting for a connection
  bool shutting_down_ = false;
  std::vector<std::thread> threads_;
};

void ConnectionThreads::enqueue(std::function<void()> serve) {
  std::unique_lock lock(mutex_);
  ended_.wait(lock, [this] { return open_ < kMaxConnections; });
  ++open_;
  connections_.push_back(std::move(serve));
  if (connections_.size() > idle_) {
    threads_.emplace_back([this] { work(); });
  } else {
    queued_.notify_one();
  }
}

void ConnectionThreads::shutdown() {
  {
    const std::scoped_lock lock(mutex_);
    shutting_down_ = true;
  }
  queued_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ConnectionThreads::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    queued_.wait(lock, [this] { return !connections_.empty() || shutting_down_; });
    --idle_;
    if (connections_.empty()) return;
    auto serve = std::move(connections_.front());
    connections_.pop_front();
    lock.unlock();
    serve();
    lock.lock();
    --open_;
    ended_.notify_one();
  }
}

// A connection's requests and their answers, as httplib reads and writes
// them: each request within kRequestSeconds, kRequestBytes and kRequestLines,
// each answer within kAnswerSeconds. What is received past a request (a
// client pipelining its next ones in the same write) stays buffered for the
// next: httplib reads only through the stream, never the socket.
class ConnectionStream final : public httplib::Stream {
 public:
  // `listener` is the server's listening socket, -1 once it stops.
  ConnectionStream(int socket, const std::atomic<socket_t>& listener) : socket_(socket), listener_(listener) {}

  // The bounds start again for the next request and its answer.
  void next_request() {
    request_deadline_ = Clock::now() + kRequestSeconds;
    answer_deadline_.reset();
    request_bytes_ = 0;
    request_lines_ = 0;
  }
  [[nodiscard]] bool is_readable() const override { return begin_ < end_ || wait_for(POLLIN, request_deadline_); }
  [[nodiscard]] bool is_writable() const override {
    return wait_for(POLLOUT, answer_deadline_.value_or(Clock::now() + kAnswerSeconds));
  }
  ssize_t read(char* data, std::size_t size) override;
  ssize_t write(const char* data, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  [[nodiscard]] socket_t socket() const override { return socket_; }
  // Whether kRequestSeconds have passed: httplib answers a request cut
  // short (400), and would then wait for the next one.
  [[nodiscard]] bool request_overdue() const { return Clock::now() >= request_deadline_; }
  // Whether the request went on past kRequestBytes or kRequestLines: httplib
  // saw it cut short, and its answer was not sent.
  [[nodiscard]] bool request_too_large() const { return too_large_; }
  // Answers such a request with kRequestTooLarge.
  void refuse_request_too_large();

 private:
  using Clock = std::chrono::steady_clock;

  // Whether the socket is ready for `events` before `deadline`, the server
  // still running.
  [[nodiscard]] bool wait_for(short events, Clock::time_point deadline) const;

  int socket_;
  const std::atomic<socket_t>& listener_;
  Clock::time_point request_deadline_;
  std::optional<Clock::time_point> answer_deadline_;  // from the first byte written
  // httplib reads a request a byte at a time: one recv per buffer, not per byte.
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  // Of the request being read, as given to httplib.
  std::size_t request_bytes_ = 0;
  std::size_t request_lines_ = 0;
  bool too_large_ = false;
};

bool ConnectionStream::wait_for(short events, Clock::time_point deadline) const {
  for (auto now = Clock::now(); now < deadline && listener_ != INVALID_SOCKET; now = Clock::now()) {
    const auto slice = std::min<Clock::duration>(deadline - now, kStopCheck);
    pollfd ready{socket_, events, 0};
    const int found = ::poll(&ready, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(slice).count()));
    if (found > 0) return true;
    if (found < 0 && errno != EINTR) return false;
  }
  return false;
}

ssize_t ConnectionStream::read(char* data, std::size_t size) {
  if (request_bytes_ == kRequestBytes || request_lines_ == kRequestLines) {
    too_large_ = true;
    return -1;
  }
  if (begin_ == end_) {
    if (!is_readable()) return -1;
    const ssize_t received = ::recv(socket_, buffer_.data(), buffer_.size(), 0);
    if (received <= 0) return received;
    begin_ = 0;
    end_ = static_cast<std::size_t>(received);
  }
  const char* from = buffer_.data() + begin_;
  std::size_t taken = std::min({size, end_ - begin_, kRequestBytes - request_bytes_});
  // At most one line at a time, counted as httplib reads it.
  if (const auto* newline = static_cast<const char*>(std::memchr(from, '\n', taken)); newline != nullptr) {
    taken = static_cast<std::size_t>(newline - from) + 1;
    ++request_lines_;
  }
  std::memcpy(data, from, taken);
  begin_ += taken;
  request_bytes_ += taken;
  return static_cast<ssize_t>(taken);
}

ssize_t ConnectionStream::write(const char* data, std::size_t size) {
  if (too_large_) return -1;
  if (!answer_deadline_) answer_deadline_ = Clock::now() + kAnswerSeconds;
  if (!is_writable()) return -1;
  // What fits now; httplib writes the rest in further calls, each waiting
  // within the same deadline.
  return ::send(socket_, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ConnectionStream::refuse_request_too_large() {
  answer_deadline_ = Clock::now() + kAnswerSeconds;
  // A few bytes: they fit in an empty socket buffer at once.
  if (is_writable()) ::send(socket_, kRequestTooLarge.data(), kRequestTooLarge.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// `address` as numbers, as httplib gives it to handlers.
void numeric_address(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> service{};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host.data(), host.size(), service.data(),
                    service.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return;
  }
  ip = host.data();
  const std::string_view digits = service.data();
  std::from_chars(digits.data(), digits.data() + digits.size(), port);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    numeric_address(address, length, ip, port);
  }
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    numeric_address(address, length, ip, port);
  }
}

// The status refusing `request`, 0 when it is served (see kRequestBytes).
int refusal_status(const httplib::Request& request) {
  if (request.has_header("Transfer-Encoding") ||
      (request.has_header("Content-Length") && request.get_header_value("Content-Length") != "0")) {
    return 413;  // Content Too Large
  }
  return request.method == "GET" || request.method == "HEAD" ? 0 : 405;  // Method Not Allowed
}

// What the endpoint makes of `request` before httplib routes it: Range
// ignored; a refused request's answer closes the connection (a body left
// unread is no next request), with no "100 Continue" before it. Whether
// `request` is refused.
bool prepare_request(httplib::Request& request) {
  request.ranges.clear();
  if (refusal_status(request) == 0) return false;
  request.headers.erase("Expect");
  request.headers.erase("Connection");
  request.set_header("Connection", "close");
  return true;
}

// httplib's server with its connections read through ConnectionStream.
class ScrapeServer final : public httplib::Server {
 public:
  // httplib listens with a backlog of 5: a burst of connections overflowed
  // it, and the kernel dropped the scraper's SYN, which is resent only after
  // 1 s, then 3 s. listen(2) again on the bound socket sets a new backlog.
  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
  // httplib closes its socket once it has served; one never served is ours.
  void close_unserved() {
    if (const socket_t socket = svr_sock_.exchange(INVALID_SOCKET); socket != INVALID_SOCKET) ::close(socket);
  }

 private:
  // Overrides httplib's (private, virtual: its extension point for TLS).
  bool process_and_close_socket(socket_t socket) override;
};

bool ScrapeServer::process_and_close_socket(socket_t socket) {
  const UniqueFd connection(socket);
  ConnectionStream stream(connection.get(), svr_sock_);
  bool kept_alive = true;
  for (auto left = keep_alive_max_count_; kept_alive && left > 0; --left) {
    stream.next_request();
    // Nothing within the bound, or the server stops: the connection ends.
    if (!stream.is_readable()) break;
    bool closed = false;
    bool refused = false;
    const bool answered = process_request(
        stream, left == 1, closed, [&refused](httplib::Request& request) { refused = prepare_request(request); });
    if (stream.request_too_large()) stream.refuse_request_too_large();
    kept_alive = answered && !closed && !refused && !stream.request_too_large() && !stream.request_overdue();
  }
  ::shutdown(connection.get(), SHUT_RDWR);
  return true;
}

class HttplibEndpoint final : public MetricsEndpoint {
 public:
  explicit HttplibEndpoint(RenderMetrics render);
  HttplibEndpoint(const HttplibEndpoint&) = delete;
  HttplibEndpoint& operator=(const HttplibEndpoint&) = delete;
  HttplibEndpoint(HttplibEndpoint&&) = delete;
  HttplibEndpoint& operator=(HttplibEndpoint&&) = delete;
  ~HttplibEndpoint() override {
    if (!accept_loop_.joinable()) server_->close_unserved();
  }

  // The host is an IP literal (parse_listen_address): no resolver involved.
  Expected<void> bind(const std::string& host, std::uint16_t port);
  void serve() override;
  [[nodiscard]] std::uint16_t port() const override { return port_; }

 private:
  std::unique_ptr<ScrapeServer> server_ = std::make_unique<ScrapeServer>();
  std::uint16_t port_ = 0;
  std::atomic<bool> accept_loop_ended_ = false;
  // Last, destroyed first: its destructor stops the server (the stop
  // callback in serve()), then joins the accept loop.
  std::jthread accept_loop_;
};

HttplibEndpoint::HttplibEndpoint(RenderMetrics render) {
  server_->set_socket_options(reuse_address_only);
  // httplib takes ownership of the raw pointer it asks for.
  server_->new_task_queue = [] { return std::make_unique<ConnectionThreads>().release(); };
  // What the Keep-Alive header announces: the wait for the next request.
  server_->set_keep_alive_timeout(kRequestSeconds.count());
  server_->set_keep_alive_max_count(kRequestsPerConnection);
  server_->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    const int refused = refusal_status(request);
    if (refused == 0) return httplib::Server::HandlerResponse::Unhandled;
    response.status = refused;
    if (refused == 405) response.set_header("Allow", "GET, HEAD");
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->Get("/metrics", [render = std::move(render)](const httplib::Request&, httplib::Response& response) {
    response.set_content(render(), kMetricsContentType);
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(kIndexPage, "text/html; charset=utf-8");
  });
}

Expected<void> HttplibEndpoint::bind(const std::string& host, std::uint16_t port) {
  errno = 0;
  int bound = -1;
  if (port == 0) {
    bound = server_->bind_to_any_port(host, AI_NUMERICHOST);
  } else if (server_->bind_to_port(host, port, AI_NUMERICHOST)) {
    bound = port;
  }
  if (bound < 0) {
    const int code = errno;
    return Failure{code != 0 ? std::strerror(code) : "bind failed"};
  }
  server_->widen_backlog();
  port_ = static_cast<std::uint16_t>(bound);
  return {};
}

void HttplibEndpoint::serve() {
  if (accept_loop_.joinable()) return;
  {
    const BlockedSignals blocked;  // the stop signals belong to the tracing thread
    accept_loop_ = std::jthread([this](const std::stop_token& stopping) {
      const std::stop_callback stop_server(stopping, [this] { server_->stop(); });
      server_->listen_after_bind();
      accept_loop_ended_ = true;
    });
  }
  // httplib 0.11's stop() does nothing before the accept loop has begun: wait
  // for it, so that the destructor's stop() is never lost.
  while (!server_->is_running() && !accept_loop_ended_) std::this_thread::sleep_for(1ms);
}

}  // namespace
}  // namespace hacoboot

// The tool and the module are C++ built together: C linkage only gives
// dlsym a plain name, so the C++ return type is no concern here.
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wreturn-type-c-linkage"
#endif
// NOLINTNEXTLINE(readability-identifier-naming): the name dlsym looks up
extern "C" __attribute__((visibility("default"))) hacoboot::OpenedEndpoint hacoboot_open_metrics_endpoint(
    const std::string& host, std::uint16_t port, hacoboot::RenderMetrics render) {
  try {
    auto server = std::make_unique<hacoboot::HttplibEndpoint>(std::move(render));
    if (const auto bound = server->bind(host, port); !bound) return hacoboot::Failure{bound.error()};
    return std::unique_ptr<hacoboot::MetricsEndpoint>(std::move(server));
  } catch (const std::exception& e) {
    return hacoboot::Failure{e.what()};
  }
}
#ifdef __clang__
#pragma clang diagnostic pop
#endif

static_assert(std::is_same_v<decltype(hacoboot_open_metrics_endpoint), hacoboot::OpenMetricsEndpoint>,
              "the module's entry point and the tool's view of it must agree");
