#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/atomic_file.hpp"
#include "util/expected.hpp"
#include "util/subprocess.hpp"

namespace hacoboot {

inline constexpr const char* kDefaultBtfCacheDir = "/var/cache/hacoboot-sampler";

// The bpftool the cache is filled with: the first of its fixed places
// (never PATH: it runs as root) that nobody but root or this user can
// change; or why there is none.
Expected<std::string> trusted_bpftool();

// CO-RE needs the running kernel's type layout. libbpf reads and indexes all
// of /sys/kernel/btf/vmlinux for it at every start (BENCHMARKS.md, row 1b);
// the handful of types the BPF object really uses, extracted once per kernel
// by `bpftool gen min_core_btf`, is a few hundred bytes. This cache keeps that
// extract per kernel build id and BPF object, in a directory only root may
// write to.
class CoreBtfCache {
 public:
  // No cache when the kernel has no build id (then cached() is always empty).
  CoreBtfCache(std::filesystem::path directory, std::span<const std::byte> bpf_object);
  // A filler still running is stopped and its temporary files removed.
  ~CoreBtfCache();
  CoreBtfCache(const CoreBtfCache&) = delete;
  CoreBtfCache& operator=(const CoreBtfCache&) = delete;
  CoreBtfCache(CoreBtfCache&&) = delete;
  CoreBtfCache& operator=(CoreBtfCache&&) = delete;

  // The extract for this kernel and object, when present and trustworthy
  // (a regular file in a root-owned directory nobody else can write to).
  [[nodiscard]] std::optional<std::filesystem::path> cached() const;

  // Removes this kernel's extract (found unusable), so the next run refills it.
  void discard() const;

  // Starts bpftool in the background, at low priority, to fill the cache for
  // the next runs. Returns the bpftool it runs, or why not ("bpftool not
  // found", ...): a cache, so the caller goes on either way.
  Expected<std::filesystem::path> start_filling();

  // Waits up to `patience` for the filler; the extract is installed (renamed
  // into place) only when bpftool succeeded.
  void finish_filling(std::chrono::milliseconds patience);

 private:
  // bpftool's input (the BPF object) in the cache directory, created if need
  // be, and its output: the command line of `bpftool` that fills the cache.
  Expected<std::vector<std::string>> write_object_copy(const std::string& bpftool);
  // bpftool's output renamed into place, superseding older objects' extracts.
  void install_extract();
  void drop_temporaries();  // bpftool's input and output, unless installed

  std::filesystem::path directory_;
  std::span<const std::byte> bpf_object_;
  std::optional<std::filesystem::path> file_;  // unset: no build id
  // bpftool's input and output while it runs; removed unless installed.
  std::optional<TemporaryFile> object_copy_;
  std::optional<TemporaryFile> extract_;
  std::optional<Subprocess> filler_;
};

}  // namespace hacoboot
