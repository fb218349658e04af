#include "cli/tracer_start.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "capture/capture_errors.hpp"
#include "capture/preload_checks.hpp"
#include "capture/start_retries.hpp"
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

// Loads and attaches the programs, making the recoveries start_with_retries
// decides on: wrong cached tracepoint ids are removed and looked up again,
// once; unusable ones give way to raw_syscalls if allowed; cached kernel
// types that fail the load are discarded for the kernel's BTF. Tells each.
class Attacher {
 public:
  Attacher(Tracer::Config config, SyscallTracepointLookup* lookup, CoreBtfCache* btf_cache,
           const Tracer::RecordSink& sink, const StartLog& log)
      : config_(std::move(config)), lookup_(lookup), btf_cache_(btf_cache), sink_(sink), log_(log) {
    if (!lookup_) why_raw_syscalls_ = "--syscall-hooks raw_syscalls";
  }

  // The tracer with kernel types from `kernel_types` (a BTF file; empty: the
  // kernel's own BTF), or the failure no recovery got past.
  Expected<std::unique_ptr<Tracer>, StartFailure> attach(KernelTypesFrom from, const std::string& kernel_types) {
    config_.core_btf = kernel_types;
    auto tracer = start_with_retries(
        StartChoices{.kernel_types = from,
                     .ids_from_cache = lookup_ != nullptr && lookup_->from_cache(),
                     .raw_syscalls_allowed = config_.raw_syscalls_fallback,
                     .raw_syscalls = lookup_ == nullptr},
        [this](const StartChoices&) { return Tracer::start(config_, sink_); },
        [this](StartRecovery recovery, const StartFailure& failure) { recover(recovery, failure.why); });
    if (tracer) attached(**tracer);
    return tracer;
  }

  // Whether the last attempt read the kernel's own BTF.
  [[nodiscard]] bool read_kernel_btf() const { return config_.core_btf.empty(); }

 private:
  void recover(StartRecovery recovery, const std::string& why) {
    switch (recovery) {
      case StartRecovery::LookUpIdsAgain:
        log_.warn("the syscall tracepoint ids from " + lookup_->source() + " are wrong (" + why +
                  "): removed; looking them up again");
        lookup_->look_up_again();
        break;
      case StartRecovery::RawSyscalls:
        log_.warn("syscalls:* tracepoints unusable (" + why + "): execve/listen through raw_syscalls");
        why_raw_syscalls_ = why;
        config_.syscall_tracepoints = nullptr;
        break;
      case StartRecovery::DiscardCachedTypes:
        log_.warn(config_.core_btf + " is unusable (" + why + "): removed; reading the kernel's BTF");
        btf_cache_->discard();
        config_.core_btf.clear();
        log_.say(std::string("kernel types from ") + kKernelBtf);
        break;
      case StartRecovery::GiveUp: break;
    }
  }

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

  Tracer::Config config_;
  SyscallTracepointLookup* lookup_;
  CoreBtfCache* btf_cache_;
  std::string why_raw_syscalls_;
  const Tracer::RecordSink& sink_;
  const StartLog& log_;
};

// The failure no recovery got past, in the words of the option that chose.
[[noreturn]] void fail_to_start(const StartFailure& failure, const Options& options) {
  if (failure.kind == StartFailureKind::SyscallTracepoints) {
    throw RuntimeError("--syscall-hooks tracepoints: " + failure.why);
  }
  if (!options.btf.empty()) {
    throw RuntimeError("--btf " + options.btf + ": the BPF programs do not load with its kernel types (are they this " +
                       "kernel's?): " + failure.why);
  }
  throw RuntimeError(failure.why);
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
  Attacher attacher(std::move(config), syscall_tracepoints, btf_cache, sink, log);

  // A damaged cache must not stop the tool (the kernel's BTF is still there).
  // Only a failed load can be the cache's doing; any later failure (a probe
  // that cannot be attached) would fail the same way with the kernel's BTF,
  // throws, and leaves the cache as it is.
  const auto cached = options.btf.empty() && btf_cache ? btf_cache->cached() : std::nullopt;
  auto tracer = [&] {
    if (!options.btf.empty()) {
      log.say("kernel types from " + options.btf + " (--btf)");
      return attacher.attach(KernelTypesFrom::BtfFile, options.btf);
    }
    if (cached) {
      log.say("kernel types from " + cached->string() + " (cached)");
      return attacher.attach(KernelTypesFrom::Cache, cached->string());
    }
    log.say(std::string("kernel types from ") + kKernelBtf);
    return attacher.attach(KernelTypesFrom::Kernel, "");
  }();
  if (!tracer) fail_to_start(tracer.error(), options);
  // The kernel's whole BTF was read: it fills the cache for the next runs.
  if (btf_cache && attacher.read_kernel_btf()) log.say(describe_btf_filling(btf_cache->start_filling()));
  return std::move(*tracer);
}

}  // namespace hacoboot
