// The exporter mode and the options that came with it, as a user meets them:
// --list (also without privileges), -p/--pid next to another launcher of the
// same binary, a real Prometheus scraping --serve, and node_exporter's
// textfile collector reading --textfile.
//
// No assertion depends on how fast anything runs: every wait is for an
// observable state (a line on stderr, a query answer, a process gone) with a
// generous timeout as a hang guard.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>

#include "fixture.hpp"
#include "support/build_paths.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot::it {
namespace {

constexpr std::uint64_t kAbsent = ~0ULL;

// BootMetrics::kBucketBoundsNs (include/hacoboot/boot_metrics.hpp), copied:
// the integration tests do not link hacoboot_core. Every histogram's `le`
// bounds, in ns; +Inf follows.
constexpr std::array<std::uint64_t, 18> kBucketBoundsNs{
    100'000,       250'000,       500'000,       1'000'000,      2'500'000,      5'000'000,
    10'000'000,    25'000'000,    50'000'000,    100'000'000,    250'000'000,    500'000'000,
    1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000, 30'000'000'000, 60'000'000'000};

// A program of a Debian package: in PATH, else in /usr/bin (a sudo or ctest
// PATH may lack it).
std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (auto found = find_in_path(name)) return found;
  const auto usr_bin = std::filesystem::path("/usr/bin") / name;
  if (::access(usr_bin.c_str(), X_OK) == 0) return usr_bin;
  return std::nullopt;
}

// A loopback port nobody listens on now: bound to port 0, read, closed.
std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if (::bind(fd, generic, sizeof address) == 0 && ::getsockname(fd, generic, &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

struct HttpAnswer {
  int status = 0;  // 0: no answer
  std::string body;
  std::string error;

  [[nodiscard]] bool ok() const { return status == 200; }
  [[nodiscard]] std::string describe() const {
    return status == 0 ? "no answer (" + error + ")" : "HTTP " + std::to_string(status) + ": " + body;
  }
};

HttpAnswer http_get(std::uint16_t port, const std::string& path, const httplib::Params& params = {}) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(30, 0);
  HttpAnswer answer;
  const auto response = client.Get(path, params, httplib::Headers{});
  if (!response) {
    answer.error = httplib::to_string(response.error());
    return answer;
  }
  answer.status = response->status;
  answer.body = response->body;
  return answer;
}

// The value of a Prometheus instant query answering one sample; nullopt
// while it answers none (no series yet) or fails. last_answer keeps the
// answer for failure messages.
std::optional<double> prometheus_value(std::uint16_t port, const std::string& query, std::string* last_answer) {
  const auto answer = http_get(port, "/api/v1/query", {{"query", query}});
  if (last_answer != nullptr) *last_answer = query + " -> " + answer.describe();
  if (!answer.ok()) return std::nullopt;
  try {
    const auto json = nlohmann::json::parse(answer.body);
    if (json.value("status", "") != "success") return std::nullopt;
    const auto& result = json.at("data").at("result");
    if (result.size() != 1) return std::nullopt;
    return std::stod(result.at(0).at("value").at(1).get<std::string>());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "hacoboot-sampler ... at http://127.0.0.1:PORT/metrics" -> PORT; 0 if absent.
std::uint16_t served_port(const std::string& stderr_text) {
  constexpr std::string_view kPrefix = "Serving Prometheus metrics at http://127.0.0.1:";
  const auto at = stderr_text.find(kPrefix);
  if (at == std::string::npos) return 0;
  const auto digits = at + kPrefix.size();
  const auto end = stderr_text.find("/metrics", digits);
  if (end == std::string::npos) return 0;
  try {
    const auto port = std::stoul(stderr_text.substr(digits, end - digits));
    return port > 0 && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

Truth read_truth(const std::filesystem::path& path) {
  try {
    return parse_truth(read_file(path));
  } catch (const std::exception&) {
    return {};  // not written yet, or a line half-written
  }
}

// Supervisors (hpids) of the truth that recorded key.
std::set<std::uint32_t> hpids_with(const Truth& truth, const std::string& key) {
  std::set<std::uint32_t> hpids;
  for (const auto& [hpid, facts] : truth) {
    if (facts.contains(key)) hpids.insert(hpid);
  }
  return hpids;
}

std::string join(const std::set<std::uint32_t>& values) {
  std::string text;
  for (const auto v : values) text += (text.empty() ? "" : " ") + std::to_string(v);
  return "{" + text + "}";
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// The line of text starting with prefix, or "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& line : split_lines(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// The first line of text containing needle, or "" when none does.
std::string line_containing(const std::string& text, const std::string& needle) {
  for (const auto& line : split_lines(text)) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

// `readelf -n`'s Arguments of the haconiwa:bootstrap_phase_pass note, e.g.
// "-8@%rdi -8@%rsi" on x86-64; "" when not found.
std::string readelf_probe_arguments(const std::string& notes) {
  bool in_probe = false;
  for (const auto& line : split_lines(notes)) {
    const auto text = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (text.rfind("Name: ", 0) == 0) in_probe = text == "Name: bootstrap_phase_pass";
    constexpr std::string_view kArguments = "Arguments: ";
    if (in_probe && text.rfind(kArguments, 0) == 0) return text.substr(kArguments.size());
  }
  return "";
}

class ExporterTest : public IntegrationTest {
 protected:
  // `launcher --truth TRUTH ARGS -- app`, as argv.
  [[nodiscard]] std::vector<std::string> launcher_argv(const std::filesystem::path& truth,
                                                       const std::vector<std::string>& args) const {
    std::vector<std::string> argv{launcher().string(), "--truth", truth.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string()});
    return argv;
  }

  // Ends the tracer with SIGINT: it must exit 0.
  static void stop_tracer(Process& tracer) {
    tracer.send_signal(SIGINT);
    const auto status = tracer.wait_or_kill(60s);
    EXPECT_TRUE(status.exited && status.code == 0) << status.describe() << "\nstderr: " << tracer.err();
  }

  // Stops a helper daemon the way its service manager would.
  static void stop_daemon(Process& daemon) {
    daemon.send_signal(SIGTERM);
    daemon.wait_or_kill(30s);
  }

  // Boots `boots` times at once, then stops `tool` (traced with --format
  // json): its summary must count every boot.
  void expect_boots_started_now_counted(Process& tool, int boots) {
    const auto truth = new_file("truth.tsv");
    const auto launched = run_process(launcher_argv(truth, {"-n", std::to_string(boots)}), dir(), 120s);
    ASSERT_TRUE(launched.status.exited && launched.status.code == 0) << launched.status.describe() << launched.err;
    stop_tracer(tool);
    try {
      expect_boot_counts(nlohmann::json::parse(tool.out()), boots, boots, boots, 0);
    } catch (const std::exception& e) {
      FAIL() << "unreadable summary: " << e.what() << "\nstdout: " << tool.out() << "\nstderr: " << tool.err();
    }
  }
};

// ---------------------------------------------------------------------------
// --list: the probe table, root or not
// ---------------------------------------------------------------------------
TEST_F(ExporterTest, ListPrintsTheProbeAlsoForAnUnprivilegedUser) {
  const std::vector<std::string> list{sampler().string(), "--haconiwa", launcher().string(), "--list"};
  const auto as_root = run_process(list, dir(), 60s);
  ASSERT_TRUE(as_root.status.exited && as_root.status.code == 0)
      << as_root.status.describe() << "\nstderr: " << as_root.err << "\nstdout: " << as_root.out;
  EXPECT_NE(as_root.out.find("haconiwa"), std::string::npos) << as_root.out;
  EXPECT_NE(as_root.out.find("bootstrap_phase_pass"), std::string::npos) << as_root.out;
  // The argument spec as the ELF note holds it, then each argument decoded.
  const auto readelf = find_program("readelf");
  ASSERT_TRUE(readelf) << "readelf (binutils) not found";
  const auto notes = run_process({readelf->string(), "-n", launcher().string()}, dir(), 60s);
  const auto arguments = readelf_probe_arguments(notes.out);
  ASSERT_FALSE(arguments.empty()) << "readelf -n shows no bootstrap_phase_pass note:\n" << notes.out << notes.err;
  EXPECT_NE(as_root.out.find(arguments), std::string::npos) << "no '" << arguments << "' in:\n" << as_root.out;
  const auto arg0 = line_containing(as_root.out, "arg0:");
  EXPECT_NE(arg0.find("int64"), std::string::npos) << as_root.out;
  EXPECT_NE(arg0.find("(phase)"), std::string::npos) << as_root.out;
  const auto arg1 = line_containing(as_root.out, "arg1:");
  EXPECT_NE(arg1.find("int64"), std::string::npos) << as_root.out;
  EXPECT_NE(arg1.find("(hpid)"), std::string::npos) << as_root.out;

  // No root, no capability: reading an ELF file needs none.
  const auto setpriv = find_program("setpriv");
  if (!setpriv) GTEST_SKIP() << "setpriv not found";
  std::vector<std::string> as_nobody_argv{setpriv->string(), "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  as_nobody_argv.insert(as_nobody_argv.end(),
                        {sampler_for_other_users().string(), "--haconiwa", launcher().string(), "--list"});
  const auto as_nobody = run_process(as_nobody_argv, dir(), 60s);
  EXPECT_TRUE(as_nobody.status.exited && as_nobody.status.code == 0)
      << as_nobody.status.describe() << "\nstderr: " << as_nobody.err;
  EXPECT_EQ(as_nobody.out, as_root.out) << "the same table, whoever asks";
}

// ---------------------------------------------------------------------------
// -p PID: the launches of one running launcher, not of another running the
// same binary at the same time
// ---------------------------------------------------------------------------
TEST_F(ExporterTest, PidTracesOnlyTheLaunchesOfThatProcess) {
  // --phase-delay 0:MS: each boot's CLI sleeps MS after CLI_START, before it
  // forks the supervisor that passes START_SV. The tracer can only be started
  // once A runs (it needs A's pid) and must be live before A's first START_SV,
  // else A's boots are "unstarted": a tracer slower than the delay retries
  // with a longer one. -j 2: both CLIs sleep at once.
  for (const long delay_ms : {3'000L, 10'000L, 30'000L}) {
    SCOPED_TRACE("phase-0 delay " + std::to_string(delay_ms) + " ms");
    const auto truth_a = new_file("A.tsv");
    const auto truth_b = new_file("B.tsv");
    const auto rows_path = new_file("rows.tsv");
    auto a = std::make_unique<Process>(
        launcher_argv(truth_a, {"--phase-delay", "0:" + std::to_string(delay_ms), "-n", "2", "-j", "2"}), dir());
    Process tracer({sampler().string(), "-p", std::to_string(a->pid()), "--btf-cache", test::btf_cache().string(),
                    "--format", "json", "--events", rows_path.string(), app().string()},
                   dir());
    ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 90s))
        << "the tracer never started tracing: " << tracer.wait_for(0ms).value_or(ExitStatus{}).describe()
        << "\nstderr: " << tracer.err();
    if (!hpids_with(read_truth(truth_a), "start_lo").empty()) {
      std::cout << "[   NOTE   ] A passed START_SV before the tracer was live (phase-0 delay " << delay_ms
                << " ms): again with a longer delay\n";
      continue;  // the Processes' destructors kill A and the tracer
    }

    // B: the same binary, not under A, booting while A and the tracer run.
    const auto b = run_process(launcher_argv(truth_b, {"-n", "2"}), dir(), 120s);
    ASSERT_TRUE(b.status.exited && b.status.code == 0) << "launcher B: " << b.status.describe() << "\n" << b.err;
    if (!a->running()) std::cout << "[   NOTE   ] A had ended before B finished\n";
    const auto a_status = a->wait_or_kill(120s);
    ASSERT_TRUE(a_status.exited && a_status.code == 0) << "launcher A: " << a_status.describe() << "\n" << a->err();

    stop_tracer(tracer);
    TracedBoots traced;
    try {
      traced.summary = nlohmann::json::parse(tracer.out());
      traced.rows = parse_boot_rows(read_file(rows_path));
      traced.truth = parse_truth(read_file(truth_a));
    } catch (const std::exception& e) {
      FAIL() << "unreadable output: " << e.what() << "\nstdout: " << tracer.out() << "\nstderr: " << tracer.err();
    }
    const auto truth_of_b = parse_truth(read_file(truth_b));
    const auto a_supervisors = hpids_with(traced.truth, "start_lo");
    const auto b_supervisors = hpids_with(truth_of_b, "listen_lo");
    ASSERT_EQ(a_supervisors.size(), 2U) << "A's truth names its 2 supervisors";
    ASSERT_EQ(b_supervisors.size(), 2U) << "B's truth names 2 supervisors that reached listen";

    expect_boot_counts(traced.summary, 2, 2, 2, 0);
    EXPECT_EQ(traced.summary.value("boots", nlohmann::json::object()).value("unstarted", kAbsent), 0U)
        << traced.summary.dump(2);
    const auto traced_hpids = expect_boots_match_truth(traced, 2);
    EXPECT_EQ(traced_hpids, a_supervisors) << "traced " << join(traced_hpids) << ", A's supervisors "
                                           << join(a_supervisors) << ", B's " << join(b_supervisors);
    for (const auto hpid : traced_hpids) {
      EXPECT_EQ(b_supervisors.count(hpid), 0U) << "a boot of B (hpid " << hpid << ") was traced";
    }
    return;
  }
  FAIL() << "the tracer never got live before A's first START_SV, even with a 30 s delay";
}

// Haconiwa running in another mount namespace (as when it runs in a
// container): its binary's path exists only there, so only /proc/PID/exe
// reaches it from the host.
TEST_F(ExporterTest, PidReachesAHaconiwaWhoseBinaryOnlyItsMountNamespaceSees) {
  const auto unshare = find_in_path("unshare");
  if (!unshare) GTEST_SKIP() << "unshare not found in PATH";
  const auto hidden = dir() / "hidden";
  std::filesystem::create_directory(hidden);
  const auto truth = new_file("truth.tsv");
  const auto rows_path = new_file("rows.tsv");
  const auto inside = (hidden / "haconiwa").string();
  const std::string script =
      "mount -t tmpfs hidden " + shell_quote(hidden.string()) + " && cp " + shell_quote(launcher().string()) + " " +
      shell_quote(inside) + " && exec " +
      shell_command({inside, "--phase-delay", "0:5000", "-n", "1", "--truth", truth.string(), "--", app().string()});
  Process haconiwa({unshare->string(), "--mount", "--propagation", "private", "/bin/sh", "-c", script}, dir());
  const auto exe = std::filesystem::path("/proc") / std::to_string(haconiwa.pid()) / "exe";
  ASSERT_TRUE(wait_until(
      [&] {
        std::error_code ec;
        return std::filesystem::read_symlink(exe, ec) == inside || !haconiwa.running();
      },
      60s))
      << "the launcher never ran in its namespace";
  ASSERT_TRUE(haconiwa.running()) << haconiwa.err();
  ASSERT_FALSE(std::filesystem::exists(inside)) << "the host sees the binary: the test proves nothing";

  Process tracer({sampler().string(), "-p", std::to_string(haconiwa.pid()), "--btf-cache", test::btf_cache().string(),
                  "--format", "json", "--events", rows_path.string(), app().string()},
                 dir());
  ASSERT_TRUE(tracer.wait_for_text("Hit Ctrl-C", true, 90s)) << tracer.err();
  const auto status = haconiwa.wait_or_kill(120s);
  ASSERT_TRUE(status.exited && status.code == 0) << status.describe() << "\n" << haconiwa.err();
  stop_tracer(tracer);
  const auto summary = nlohmann::json::parse(tracer.out());
  expect_boot_counts(summary, 1, 1, 1, 0);
}

// ---------------------------------------------------------------------------
// --serve, scraped by a real Prometheus
// ---------------------------------------------------------------------------
TEST_F(ExporterTest, PrometheusScrapesTheBootsOfTheServedMetrics) {
  constexpr int kBoots = 6;
  constexpr const char* kJob = "hacoboot-it";
  const auto prometheus_path = find_program("prometheus");
  if (!prometheus_path) {
    if (bpf_required()) FAIL() << "prometheus not found (HACOBOOT_REQUIRE_BPF=1: not skipping)";
    GTEST_SKIP() << "prometheus not found (Debian package prometheus)";
  }

  const auto summary_path = new_file("summary.json");
  Process tool(
      sampler_argv({"--serve", "127.0.0.1:0", "--format", "json", "-o", summary_path.string(), app().string()}), dir());
  ASSERT_TRUE(tool.wait_for_text("/metrics\n", true, 90s))
      << "no 'Serving Prometheus metrics at' line: " << tool.wait_for(0ms).value_or(ExitStatus{}).describe()
      << "\nstderr: " << tool.err();
  const auto tool_port = served_port(tool.err());
  ASSERT_NE(tool_port, 0) << "no port in: " << tool.err();

  // Prometheus on a port of its own, scraping the tool every second. The
  // port is free when picked; should another process take it first,
  // Prometheus exits and is started again on another.
  const auto config = dir() / "prometheus.yml";
  {
    std::ofstream out(config);
    out << "global:\n"
           "  scrape_interval: 1s\n"
           "  evaluation_interval: 1s\n"
           "scrape_configs:\n"
           "  - job_name: "
        << kJob << "\n    static_configs:\n      - targets: ['127.0.0.1:" << tool_port << "']\n";
  }
  std::unique_ptr<Process> prometheus;
  std::uint16_t web_port = 0;
  for (int attempt = 0; attempt < 3 && !prometheus; ++attempt) {
    web_port = free_loopback_port();
    ASSERT_NE(web_port, 0) << "no free loopback port";
    auto started = std::make_unique<Process>(
        std::vector<std::string>{prometheus_path->string(), "--config.file=" + config.string(),
                                 "--storage.tsdb.path=" + (dir() / "data").string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(web_port)},
        dir());
    if (wait_until([&] { return !started->running() || http_get(web_port, "/-/ready").ok(); }, 120s, 200ms) &&
        started->running()) {
      prometheus = std::move(started);
    } else {
      std::cout << "[   NOTE   ] Prometheus did not come up on port " << web_port << ": "
                << line_starting(started->err(), "ts=") << "\n";
    }
  }
  ASSERT_TRUE(prometheus) << "Prometheus never became ready";

  // Before any boot: the target is up and its counter is 0.
  std::string last;
  const auto up_query = std::string("up{job=\"") + kJob + "\"}";
  const auto count_query = std::string("sum(hacoboot_boot_listen_seconds_count)");
  ASSERT_TRUE(wait_until([&] { return prometheus_value(web_port, up_query, &last) == 1.0; }, 90s))
      << last << "\ntargets: " << http_get(web_port, "/api/v1/targets").describe();
  ASSERT_TRUE(wait_until([&] { return prometheus_value(web_port, count_query, &last).has_value(); }, 90s)) << last;
  EXPECT_EQ(prometheus_value(web_port, count_query, &last), 0.0) << last;

  const auto truth_path = new_file("truth.tsv");
  const auto boots = run_process(launcher_argv(truth_path, {"-n", std::to_string(kBoots)}), dir(), 120s);
  ASSERT_TRUE(boots.status.exited && boots.status.code == 0) << boots.status.describe() << "\n" << boots.err;

  ASSERT_TRUE(wait_until([&] { return prometheus_value(web_port, count_query, &last) == kBoots; }, 90s))
      << last << "\nthe tool serves:\n"
      << line_starting(http_get(tool_port, "/metrics").body, "hacoboot_boot_listen_seconds_count");
  const auto median_query = std::string("histogram_quantile(0.5, sum by (le) (hacoboot_boot_listen_seconds_bucket))");
  const auto median_s = prometheus_value(web_port, median_query, &last);
  ASSERT_TRUE(median_s.has_value()) << last;
  const auto up = prometheus_value(web_port, up_query, &last);
  EXPECT_EQ(up, 1.0) << last;
  stop_daemon(*prometheus);

  stop_tracer(tool);
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(read_file(summary_path));
  } catch (const std::exception& e) {
    FAIL() << "unreadable " << summary_path << ": " << e.what() << "\nstderr: " << tool.err();
  }
  expect_boot_counts(summary, kBoots, kBoots, kBoots, 0);
  const auto listen = summary.value("metrics", nlohmann::json::object()).value("listen", nlohmann::json::object());
  EXPECT_EQ(listen.value("count", kAbsent), static_cast<std::uint64_t>(kBoots)) << summary.dump(2);
  const auto p50_ns = listen.value("p50_ns", kAbsent);
  ASSERT_NE(p50_ns, kAbsent) << summary.dump(2);

  // Prometheus interpolates within the bucket holding the rank-3 sample;
  // the tool's exact (nearest-rank) median is that sample: same bucket. A
  // median at a bound (rank at a bucket's top) belongs to the bucket below.
  const auto seconds = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e9; };
  const auto* const upper = std::find_if(kBucketBoundsNs.begin(), kBucketBoundsNs.end(),
                                         [&](std::uint64_t bound) { return *median_s <= seconds(bound) * (1 + 1e-9); });
  ASSERT_NE(upper, kBucketBoundsNs.end()) << "Prometheus' median " << *median_s << " s is beyond the last bound";
  const std::uint64_t lower = upper == kBucketBoundsNs.begin() ? 0 : *(upper - 1);
  std::cout << "[  FIGURE  ] Prometheus' median listen " << *median_s << " s, in the bucket (" << seconds(lower) << ", "
            << seconds(*upper) << "] s; the tool's p50 " << seconds(p50_ns) << " s\n";
  EXPECT_TRUE(lower < p50_ns && p50_ns <= *upper)
      << "the tool's p50 " << p50_ns << " ns is outside (" << lower << ", " << *upper
      << "] ns, the bucket of Prometheus' median " << *median_s << " s";
}

// ---------------------------------------------------------------------------
// Ready means tracing: /metrics answers, and systemd hears READY=1, only once
// every probe is live. A CI job that polls /metrics, or a unit ordered after
// the service, starts containers as soon as they do: none may be missed.
// Each test tries a few times: a tool ready too early misses some boots, not
// always all.
// ---------------------------------------------------------------------------
constexpr int kBootsWhenReady = 6;
constexpr int kReadyTries = 3;

TEST_F(ExporterTest, BootsStartedAsSoonAsMetricsAnswerAreAllCounted) {
  for (int attempt = 1; attempt <= kReadyTries && !HasFailure(); ++attempt) {
    SCOPED_TRACE("try " + std::to_string(attempt));
    // A port known before the tool starts, to poll as it starts.
    const auto port = free_loopback_port();
    ASSERT_NE(port, 0) << "no free loopback port";
    Process tool(sampler_argv({"--serve", "127.0.0.1:" + std::to_string(port), "--format", "json", app().string()}),
                 dir());
    HttpAnswer answer;
    ASSERT_TRUE(wait_until(
        [&] {
          answer = http_get(port, "/metrics");
          return answer.ok() || !tool.running();
        },
        90s, 1ms))
        << answer.describe();
    ASSERT_TRUE(answer.ok()) << "the tool ended: " << tool.err();
    expect_boots_started_now_counted(tool, kBootsWhenReady);
  }
}

// A unix datagram socket bound at `path`, as systemd's notification socket.
UniqueFd notification_socket(const std::filesystem::path& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (!fd.valid() || path.string().size() >= sizeof(address.sun_path)) return {};
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) return {};
  const timeval hang_guard{.tv_sec = 90, .tv_usec = 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &hang_guard, sizeof(hang_guard));
  return fd;
}

TEST_F(ExporterTest, TellsSystemdReadyOnlyOnceBootsAreCounted) {
  const auto env = find_program("env");
  ASSERT_TRUE(env) << "env (coreutils) not found";
  for (int attempt = 1; attempt <= kReadyTries && !HasFailure(); ++attempt) {
    SCOPED_TRACE("try " + std::to_string(attempt));
    const auto path = dir() / ("notify-" + std::to_string(attempt));
    const auto notifications = notification_socket(path);
    ASSERT_TRUE(notifications.valid()) << "cannot bind " << path << ": " << std::strerror(errno);
    // As systemd starts a Type=notify service: NOTIFY_SOCKET in its environment.
    auto argv = sampler_argv({"--serve", "127.0.0.1:0", "--format", "json", app().string()});
    argv.insert(argv.begin(), {env->string(), "NOTIFY_SOCKET=" + path.string()});
    Process tool(argv, dir());
    std::array<char, 256> message{};
    const ssize_t received = ::recv(notifications.get(), message.data(), message.size(), 0);
    ASSERT_GT(received, 0) << "no notification: " << std::strerror(errno) << "\nstderr: " << tool.err();
    EXPECT_EQ(std::string_view(message.data(), static_cast<std::size_t>(received)), "READY=1");
    expect_boots_started_now_counted(tool, kBootsWhenReady);
    EXPECT_EQ(line_containing(tool.err(), "warning"), "") << tool.err();
  }
}

// ---------------------------------------------------------------------------
// A Haconiwa upgrade: a new binary renamed over the old one while the
// exporter runs, and a boot of the old one still in flight then
// ---------------------------------------------------------------------------
// The value of the unlabelled sample `name` in an exposition; kAbsent when none.
std::uint64_t sample_of(const std::string& exposition, const std::string& name) {
  const auto line = line_starting(exposition, name + " ");
  return line.empty() ? kAbsent : std::stoull(line.substr(name.size() + 1));
}

// Both ways of attaching the probe take a second file.
class UpgradeTest : public ExporterTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(UpgradeTest, BootsOfAnUpgradedBinaryAndOfTheOldOneAreAllCounted) {
  constexpr int kOldBoots = 3;
  constexpr int kNewBoots = 4;
  // The path the tool watches, as a package puts haconiwa there.
  const auto bin = dir() / "bin";
  std::filesystem::create_directory(bin);
  const auto haconiwa = bin / "haconiwa";
  std::filesystem::copy_file(launcher(), haconiwa);
  Process tool({sampler().string(), "--haconiwa", haconiwa.string(), "--btf-cache", test::btf_cache().string(),
                "--serve", "127.0.0.1:0", "--format", "json", app().string()},
               dir());
  ASSERT_TRUE(tool.wait_for_text("/metrics\n", true, 90s)) << tool.err();
  const auto port = served_port(tool.err());
  ASSERT_NE(port, 0) << tool.err();

  const auto boot_argv = [&](const std::filesystem::path& truth, const std::vector<std::string>& args) {
    std::vector<std::string> argv{haconiwa.string(), "--truth", truth.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", app().string(), "--hold-ms", "0"});
    return argv;
  };
  const auto old_truth = new_file("old-truth.tsv");
  const auto old_boots = run_process(boot_argv(old_truth, {"-n", std::to_string(kOldBoots)}), dir(), 120s);
  ASSERT_TRUE(old_boots.status.exited && old_boots.status.code == 0) << old_boots.err;
  // One more boot of the old file, its container held after phase 12 while
  // the upgrade happens: it runs the old file to its listen.
  const auto held_truth = new_file("held-truth.tsv");
  Process held(boot_argv(held_truth, {"--phase-delay", "12:3000"}), dir());
  ASSERT_TRUE(wait_until([&] { return read_file(held_truth).find("\tcontainer_pid\t") != std::string::npos; }, 60s))
      << "the held boot never forked its container: " << read_file(held_truth);

  // The upgrade: a new file written beside it, renamed over it.
  const auto staged = bin / ".haconiwa.dpkg-new";
  std::filesystem::copy_file(launcher(), staged);
  std::filesystem::rename(staged, haconiwa);
  ASSERT_TRUE(tool.wait_for_text("is a new file (inode ", true, 30s)) << tool.err();
  EXPECT_NE(line_containing(tool.err(), "the probe is attached to it too"), "") << tool.err();

  const auto new_truth = new_file("new-truth.tsv");
  const auto new_boots = run_process(boot_argv(new_truth, {"-n", std::to_string(kNewBoots)}), dir(), 120s);
  ASSERT_TRUE(new_boots.status.exited && new_boots.status.code == 0) << new_boots.err;
  const auto held_end = held.wait_or_kill(60s);
  ASSERT_TRUE(held_end.exited && held_end.code == 0) << held_end.describe();

  constexpr std::uint64_t kAll = kOldBoots + 1 + kNewBoots;
  std::string metrics;
  ASSERT_TRUE(wait_until(
      [&] {
        metrics = http_get(port, "/metrics").body;
        return sample_of(metrics, "hacoboot_boots_completed_total") == kAll;
      },
      30s))
      << line_starting(metrics, "hacoboot_boots_");
  EXPECT_EQ(sample_of(metrics, "hacoboot_boots_started_total"), kAll);
  EXPECT_EQ(sample_of(metrics, "hacoboot_boots_incomplete_total"), 0U);
  EXPECT_EQ(sample_of(metrics, "hacoboot_events_lost_total"), 0U);
  EXPECT_EQ(sample_of(metrics, "hacoboot_haconiwa_files_attached"), 2U);
  EXPECT_EQ(sample_of(metrics, "hacoboot_haconiwa_replacements_total"), 1U);
  stop_tracer(tool);
  const auto summary = nlohmann::json::parse(tool.out());
  expect_boot_counts(summary, kAll, kAll, kAll, 0);
}

INSTANTIATE_TEST_SUITE_P(Attach, UpgradeTest, ::testing::Values("uprobe_multi", "perf"));

// ---------------------------------------------------------------------------
// The HTTP module: installed with the tool, loaded only for --serve
// ---------------------------------------------------------------------------
// What the process `pid` has mapped, /proc/PID/maps.
std::string mapped_files(pid_t pid) {
  return read_file("/proc/" + std::to_string(pid) + "/maps");
}

TEST_F(ExporterTest, InstalledToolLoadsItsHttpModuleOnlyToServe) {
  const auto prefix = dir() / "prefix";
  const auto install = run_process(
      {test::cmake_command().string(), "--install", test::build_dir().string(), "--prefix", prefix.string()}, dir(),
      120s);
  ASSERT_TRUE(install.status.exited && install.status.code == 0) << install.status.describe() << "\n" << install.err;
  const auto installed = prefix / "bin" / "hacoboot-sampler";

  // Without --serve: tracing, and neither cpp-httplib nor OpenSSL in memory.
  {
    auto argv = sampler_argv({});
    argv[0] = installed.string();
    Process tool(argv, dir());
    ASSERT_TRUE(tool.wait_for_text("Hit Ctrl-C to end.", true, 90s)) << tool.err();
    const auto maps = mapped_files(tool.pid());
    EXPECT_EQ(line_containing(maps, "httplib"), "");
    EXPECT_EQ(line_containing(maps, "libssl"), "");
    EXPECT_EQ(line_containing(maps, "hacoboot-sampler-http"), "");
    stop_tracer(tool);
  }
  // With --serve: the module from the installed library directory, serving.
  auto argv = sampler_argv({"--serve", "127.0.0.1:0"});
  argv[0] = installed.string();
  Process tool(argv, dir());
  ASSERT_TRUE(tool.wait_for_text("/metrics\n", true, 90s)) << tool.err();
  const auto port = served_port(tool.err());
  ASSERT_NE(port, 0) << "no port in: " << tool.err();
  const auto module = line_containing(mapped_files(tool.pid()), "hacoboot-sampler-http.so");
  EXPECT_NE(module.find((prefix / "lib").string()), std::string::npos) << "mapped: " << module;
  const auto answer = http_get(port, "/metrics");
  EXPECT_TRUE(answer.ok()) << answer.describe();
  EXPECT_NE(line_starting(answer.body, "hacoboot_build_info"), "") << answer.body;
  stop_tracer(tool);
}

// The module runs as root as soon as the tool loads it: a copy beside the
// tool that others can write is refused before anything is loaded, and the
// run fails (exit 1) naming it. The installed module loads (above).
TEST_F(ExporterTest, ServeRefusesAModuleOthersCanWrite) {
  const auto planted = dir() / "planted";
  std::filesystem::create_directories(planted);
  std::filesystem::permissions(planted, std::filesystem::perms(0755));
  std::filesystem::copy_file(sampler(), planted / "hacoboot-sampler");
  const auto module = planted / "hacoboot-sampler-http.so";
  std::filesystem::copy_file(sampler().parent_path() / "hacoboot-sampler-http.so", module);
  std::filesystem::permissions(module, std::filesystem::perms(0777));

  auto argv = sampler_argv({"--serve", "127.0.0.1:0"});
  argv[0] = (planted / "hacoboot-sampler").string();
  const auto result = run_process(argv, dir(), 90s);
  EXPECT_TRUE(result.status.exited && result.status.code == 1) << result.status.describe() << "\n" << result.err;
  EXPECT_NE(
      result.err.find("refusing to load the HTTP module: " + module.string() + ": writable by its group and others"),
      std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("Serving Prometheus metrics"), std::string::npos) << result.err;
}

// ---------------------------------------------------------------------------
// --textfile, read by node_exporter's textfile collector
// ---------------------------------------------------------------------------
TEST_F(ExporterTest, NodeExporterReadsTheTextfile) {
  constexpr int kBoots = 4;
  const auto node_exporter_path = find_program("prometheus-node-exporter");
  if (!node_exporter_path) {
    if (bpf_required()) FAIL() << "prometheus-node-exporter not found (HACOBOOT_REQUIRE_BPF=1: not skipping)";
    GTEST_SKIP() << "prometheus-node-exporter not found (Debian package prometheus-node-exporter)";
  }
  const auto textfile_dir = dir() / "textfile";
  std::filesystem::create_directory(textfile_dir);

  std::unique_ptr<Process> node_exporter;
  std::uint16_t port = 0;
  for (int attempt = 0; attempt < 3 && !node_exporter; ++attempt) {
    port = free_loopback_port();
    ASSERT_NE(port, 0) << "no free loopback port";
    auto started = std::make_unique<Process>(
        std::vector<std::string>{node_exporter_path->string(), "--collector.disable-defaults", "--collector.textfile",
                                 "--collector.textfile.directory=" + textfile_dir.string(),
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
        dir());
    if (wait_until([&] { return !started->running() || http_get(port, "/metrics").ok(); }, 60s, 200ms) &&
        started->running()) {
      node_exporter = std::move(started);
    } else {
      std::cout << "[   NOTE   ] node_exporter did not come up on port " << port << ": " << started->err() << "\n";
    }
  }
  ASSERT_TRUE(node_exporter) << "node_exporter never answered";

  const auto truth_path = new_file("truth.tsv");
  const auto prom = textfile_dir / "hacoboot.prom";
  const auto r =
      run_sampler({"--textfile", prom.string(), "--textfile-interval", "1s", "--format", "json", "--run",
                   launcher_command({"--truth", truth_path.string(), "-n", std::to_string(kBoots)}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  expect_boot_counts(nlohmann::json::parse(r.out), kBoots, kBoots, kBoots, 0);

  const auto expected = "hacoboot_boot_listen_seconds_count " + std::to_string(kBoots);
  HttpAnswer scraped;
  EXPECT_TRUE(wait_until(
      [&] {
        scraped = http_get(port, "/metrics");
        return scraped.ok() && has_line(scraped.body, expected);
      },
      60s))
      << "no '" << expected
      << "' line from node_exporter: " << line_starting(scraped.body, "hacoboot_boot_listen_seconds_count")
      << "\nthe file holds:\n"
      << read_file(prom);
  EXPECT_TRUE(has_line(scraped.body, "node_textfile_scrape_error 0"))
      << line_starting(scraped.body, "node_textfile_scrape_error") << "\n"
      << node_exporter->err();
  stop_daemon(*node_exporter);

  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(textfile_dir)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"hacoboot.prom"}) << "no temporary file may be left behind";
}

// The loader takes a boot's syscalls when it ends, after it settled (when
// the other figures are counted): they reach the metrics all the same.
TEST_F(ExporterTest, TextfileHasTheStepsSyscallSeconds) {
  constexpr int kBoots = 2;
  const auto prom = dir() / "hacoboot.prom";
  const auto r = run_sampler({"--syscalls", "--textfile", prom.string(), "--format", "json", "--run",
                              launcher_command({"-n", std::to_string(kBoots), "--sleep", "13:5"}), app().string()});
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.status.describe() << "\nstderr: " << r.err;
  const auto text = read_file(prom);
  const std::string series = R"(hacoboot_step_syscall_seconds_count{lane="container",phase="13",)"
                             R"(phase_name="CONTAINER_FILESYSTEM_SETUP",syscall="clock_nanosleep"})";
  EXPECT_TRUE(has_line(text, series + " " + std::to_string(kBoots)))
      << "one clock_nanosleep per boot in step 13: " << line_starting(text, series) << "\nthe file holds:\n"
      << text;
}

}  // namespace
}  // namespace hacoboot::it
