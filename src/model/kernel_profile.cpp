#include "model/kernel_profile.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <numeric>
#include <string_view>
#include <tuple>

#include "hacoboot/contract.h"
#include "model/ranked_points.hpp"

namespace hacoboot {

namespace {

struct SampleHead {
  hacoboot_sample_key key;
  hacoboot_sample_entry entry;
};

bool is_generic_code(std::string_view name) {
  constexpr std::array<std::string_view, 26> kGeneric{"_raw_spin_",
                                                      "raw_spin_",
                                                      "queued_spin",
                                                      "native_queued_spin",
                                                      "__pv_queued_spin",
                                                      "mutex_",
                                                      "__mutex_",
                                                      "down_",
                                                      "up_",
                                                      "mem",
                                                      "__mem",
                                                      "clear_page",
                                                      "copy_",
                                                      "__copy_",
                                                      "rep_",
                                                      "kmem_cache_",
                                                      "kmalloc",
                                                      "__kmalloc",
                                                      "kfree",
                                                      "__kfree",
                                                      "alloc_pages",
                                                      "__alloc_pages",
                                                      "get_page_from_freelist",
                                                      "rcu_",
                                                      "__rcu_",
                                                      "_find_"};
  constexpr std::array<std::string_view, 7> kEntry{"entry_SYSCALL",  "do_syscall_", "x64_sys_call", "el0_",
                                                   "invoke_syscall", "asm_",        "__pi_"};
  // Where interrupts come back on: a CPU clock's sample lands there after a
  // stretch with them off (pvm_irq_enable, _raw_spin_unlock_irqrestore...).
  constexpr std::array<std::string_view, 6> kInterrupts{"native_", "pvm_",           "xen_",
                                                        "pv_",     "arch_local_irq", "finish_task_switch"};
  // And the scheduler's own frames, as blocking points leave them out.
  const bool interrupts_on = name.find("irq_enable") != std::string_view::npos ||
                             name.find("irqrestore") != std::string_view::npos ||
                             name.find("schedule") != std::string_view::npos;
  return is_tracer_frame(name) || interrupts_on || starts_with_any(name, kGeneric) || starts_with_any(name, kEntry) ||
         starts_with_any(name, kInterrupts);
}

void add_sample_point(std::vector<CpuSamplePoint>& points, const CpuSamplePoint& point) {
  auto same = std::find_if(points.begin(), points.end(),
                           [&point](const CpuSamplePoint& mine) { return mine.same_place(point); });
  if (same == points.end()) {
    points.push_back(point);
    same = std::prev(points.end());
  } else {
    same->samples += point.samples;
  }
  move_up_ranked(points, same, [](const CpuSamplePoint& mine) { return mine.samples; });
}

}  // namespace

std::optional<std::vector<CpuSampleAggregate>> decode_kernel_samples(std::span<const std::byte> bytes,
                                                                     const KernelSymbols& symbols) {
  std::vector<CpuSampleAggregate> aggregates;
  while (!bytes.empty()) {
    SampleHead head{};
    if (bytes.size() < sizeof head) return std::nullopt;
    std::memcpy(&head, bytes.data(), sizeof head);
    bytes = bytes.subspan(sizeof head);
    const std::size_t frame_bytes = std::size_t{head.entry.frames} * sizeof(std::uint64_t);
    if (head.entry.frames > HACOBOOT_STACK_DEPTH || bytes.size() < frame_bytes) return std::nullopt;
    aggregates.push_back({.tid = head.key.tid,
                          .segment_ns = head.key.segment_ns,
                          .nr = head.key.nr,
                          .user_mode = head.key.stack_id == HACOBOOT_USER_MODE,
                          .samples = head.entry.samples,
                          .frames = symbols.stack(bytes.first(frame_bytes), head.entry.frames)});
    bytes = bytes.subspan(frame_bytes);
  }
  // In a stable order whatever order the kernel's map gave them in.
  std::sort(aggregates.begin(), aggregates.end(), [](const CpuSampleAggregate& a, const CpuSampleAggregate& b) {
    return std::tie(a.tid, a.segment_ns, a.nr, a.user_mode, a.frames) <
           std::tie(b.tid, b.segment_ns, b.nr, b.user_mode, b.frames);
  });
  return aggregates;
}

std::uint64_t StepKernelCpu::samples() const {
  return std::accumulate(points.begin(), points.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const CpuSamplePoint& point) { return sum + point.samples; });
}

StepKernelCpu& StepKernelCpu::operator+=(const StepKernelCpu& other) {
  if (hz == 0) hz = other.hz;
  partly_sampled = partly_sampled || other.partly_sampled;
  for (const auto& point : other.points) add_sample_point(points, point);
  return *this;
}

std::optional<StepKernelCpu> kernel_cpu_between(const KernelProfile& profile, std::uint32_t tid, std::uint64_t begin_ns,
                                                std::uint64_t end_ns) {
  if (profile.hz == 0) return std::nullopt;
  StepKernelCpu step{.hz = profile.hz,
                     .partly_sampled = !profile.sampled_since_ns || *profile.sampled_since_ns > begin_ns,
                     .points = {}};
  for (const auto& aggregate : profile.samples) {
    if (aggregate.tid != tid || aggregate.segment_ns < begin_ns || aggregate.segment_ns >= end_ns) continue;
    add_sample_point(step.points, {.nr = aggregate.nr,
                                   .user_mode = aggregate.user_mode,
                                   .frames = aggregate.frames,
                                   .samples = aggregate.samples});
  }
  return step;
}

std::vector<KernelCpuSummary> summarize_kernel_cpu(const std::vector<CpuSamplePoint>& points) {
  std::vector<KernelCpuSummary> summaries;
  for (const auto& point : points) {
    KernelCpuSummary summary{.nr = point.nr,
                             .user_mode = point.user_mode,
                             .where = point.user_mode ? std::string() : cpu_frame(point.frames),
                             .samples = point.samples};
    auto same = std::find_if(summaries.begin(), summaries.end(), [&summary](const KernelCpuSummary& mine) {
      return std::tie(mine.nr, mine.user_mode, mine.where) == std::tie(summary.nr, summary.user_mode, summary.where);
    });
    if (same == summaries.end()) {
      summaries.push_back(std::move(summary));
    } else {
      same->samples += summary.samples;
    }
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const KernelCpuSummary& a, const KernelCpuSummary& b) { return a.samples > b.samples; });
  return summaries;
}

std::string cpu_frame(const std::vector<std::string>& frames) {
  return first_named_frame(frames, is_generic_code);
}

std::vector<std::string> cpu_path(const std::vector<std::string>& frames) {
  const auto entry = std::find_if(frames.begin(), frames.end(), is_syscall_entry);
  std::vector<std::string> path;
  for (auto frame = entry; frame != frames.begin();) path.emplace_back(symbol_of(*--frame));
  return path;
}

}  // namespace hacoboot
