#pragma once

#include <iosfwd>
#include <memory>

#include "capture/core_btf_cache.hpp"
#include "capture/tracer.hpp"
#include "cli/options.hpp"

namespace hacoboot {

// Loads and attaches the BPF programs with config, falling back as the
// kernel and the caches allow: kernel types from btf_cache when it has them
// (a damaged cache file is removed, and the kernel's BTF read instead, which
// then fills the cache for the next runs); execve/listen through the
// per-syscall tracepoints (ids looked up again when cached ones prove wrong,
// then raw_syscalls as --syscall-hooks allows). Notes the choices on
// diagnostics with --verbose, the fallbacks always. Throws what the Tracer
// throws when no fallback is left.
std::unique_ptr<Tracer> start_tracer(const Options& options, Tracer::Config config, CoreBtfCache* btf_cache,
                                     std::ostream& diagnostics, const Tracer::RecordSink& sink);

}  // namespace hacoboot
