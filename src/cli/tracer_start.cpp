#include "cli/tracer_start.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "capture/capture_errors.hpp"
#include "capture/preload_checks.hpp"
#include "capture/syscall_tracepoints.hpp"
#include "cli/capture_hints.hpp"
#include "util/errors.hpp"
#include "util/expected.hpp"
#include "util/text.hpp"

namespace hacoboot {
namespace {

// Notes on stderr while the programs load: the choices made (-v only) and the
// fallbacks taken. They quote paths (--btf, --btf-cache) and errors: escaped.
class StartLog {
 public:
  StartLog(std::ostream& out, bool verbose) : out_(out), verbose_(verbose) {}
  void say(const std::string& what) const {
    if (verbose_) out_ << "hacoboot-sampler: " << printable(what, kUncut) << '\n';
  }
  void warn(const std::string& what) const { out_ << "hacoboot-sampler: warning: " << printable(what, kUncut) << '\n'; }

 private:
  std::ostream& out_;
  bool verbose_;
};

// Loads and attaches the programs, execve/listen through the per-syscall
// tracepoints when allowed. Ids that prove wrong break no later start: cached
// ones are removed and looked up again, once; after that, raw_syscalls if
// allowed.
class Attacher {
 public:
  Attacher(Tracer::Config config, SyscallTracepointLookup* lookup, const Tracer::RecordSink& sink, const StartLog& log)
      : config_(std::move(config)), lookup_(lookup), sink_(sink), log_(log) {
    if (!lookup_) why_raw_syscalls_ = "--syscall-hooks raw_syscalls";
  }

  // A BTF file with the kernel types; empty: the kernel's own BTF.
  void use_kernel_types(const std::string& core_btf) { config_.core_btf = core_btf; }

  // The tracer, or the load its kernel types failed (for the caller to try
  // others or give up): unusable syscall tracepoints are got past here.
  Expected<std::unique_ptr<Tracer>, StartFailure> attach() {
    auto tracer = Tracer::start(config_, sink_);
    while (!tracer && tracer.error().kind == StartFailureKind::SyscallTracepoints) {
      get_past(tracer.error().why);
      tracer = Tracer::start(config_, sink_);
    }
    if (tracer) attached(**tracer);
    return tracer;
  }

 private:
  void attached(const Tracer& tracer) {
    if (tracer.per_syscall_tracepoints()) lookup_->keep();
    // A lookup that found no ids leaves every syscall of the host paying for
    // a program: worth a warning, not only -v (a service without the
    // privilege to read tracefs would slow its host in silence).
    if (!tracer.per_syscall_tracepoints() && why_raw_syscalls_.empty()) {
      log_.warn("execve/listen through raw_syscalls, a program on every syscall of the host: " +
                lookup_->result().error() + " (hacoboot-sampler check says more)");
    }
    log_.say(
        "execve/listen through " +
        (tracer.per_syscall_tracepoints()
             ? "syscalls:* tracepoints (ids from " + lookup_->source() + ")"
             : "raw_syscalls (" + (why_raw_syscalls_.empty() ? lookup_->result().error() : why_raw_syscalls_) + ")"));
    log_.say("the probe through " + describe(tracer.usdt_attachment()));
  }

  // The syscall tracepoints were unusable: why.
  void get_past(const std::string& why) {
    if (lookup_->from_cache()) {
      log_.warn("the syscall tracepoint ids from " + lookup_->source() + " are wrong (" + why +
                "): removed; looking them up again");
      lookup_->look_up_again();
    } else if (config_.raw_syscalls_fallback) {
      log_.warn("syscalls:* tracepoints unusable (" + why + "): execve/listen through raw_syscalls");
      why_raw_syscalls_ = why;
      config_.syscall_tracepoints = nullptr;
    } else {
      throw RuntimeError("--syscall-hooks tracepoints: " + why);
    }
  }

  Tracer::Config config_;
  SyscallTracepointLookup* lookup_;
  std::string why_raw_syscalls_;
  const Tracer::RecordSink& sink_;
  const StartLog& log_;
};

// An attach with the kernel types of --btf: a load they fail names the file.
std::unique_ptr<Tracer> attach_with_btf_file(Attacher& attacher, const std::string& btf) {
  attacher.use_kernel_types(btf);
  auto tracer = attacher.attach();
  if (!tracer) {
    throw RuntimeError("--btf " + btf + ": the BPF programs do not load with its kernel types (are they this " +
                       "kernel's?): " + tracer.error().why);
  }
  return std::move(*tracer);
}

}  // namespace

std::unique_ptr<Tracer> start_tracer(const Options& options, Tracer::Config config, CoreBtfCache* btf_cache,
                                     std::ostream& diagnostics, const Tracer::RecordSink& sink) {
  std::optional<SyscallTracepointLookup> lookup;
  // The tracepoint ids are cached beside the kernel types, or not at all.
  if (options.syscall_hooks != SyscallHooks::RawSyscalls) lookup.emplace(btf_cache ? options.btf_cache : "");
  auto* const syscall_tracepoints = lookup ? &*lookup : nullptr;
  config.syscall_tracepoints = syscall_tracepoints;
  const StartLog log(diagnostics, options.verbose);
  Attacher attacher(std::move(config), syscall_tracepoints, sink, log);

  if (!options.btf.empty()) {
    log.say("kernel types from " + options.btf + " (--btf)");
    return attach_with_btf_file(attacher, options.btf);
  }
  // A damaged cache must not stop the tool (the kernel's BTF is still there).
  // Only a failed load can be the cache's doing; any later failure (a probe
  // that cannot be attached) would fail the same way with the kernel's BTF,
  // throws, and leaves the cache as it is.
  if (const auto cached = btf_cache ? btf_cache->cached() : std::nullopt) {
    log.say("kernel types from " + cached->string() + " (cached)");
    attacher.use_kernel_types(cached->string());
    auto tracer = attacher.attach();
    if (tracer) return std::move(*tracer);
    log.warn(cached->string() + " is unusable (" + tracer.error().why + "): removed; reading the kernel's BTF");
    btf_cache->discard();
    attacher.use_kernel_types("");
  }
  log.say(std::string("kernel types from ") + kKernelBtf);
  auto tracer = attacher.attach();
  if (!tracer) throw RuntimeError(tracer.error().why);
  if (btf_cache) log.say(describe_btf_filling(btf_cache->start_filling()));
  return std::move(*tracer);
}

}  // namespace hacoboot
