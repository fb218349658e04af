#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "model/boot.hpp"
#include "model/event.hpp"
#include "model/phases.hpp"

namespace hacoboot {

// Reassembles Haconiwa launches from kernel events. A boot is keyed by its
// hpid; the kernel side has already tagged every container process with it.
// Events may arrive slightly out of time order across CPUs, but never before
// the events that caused them, which is all this relies on.
class BootTracker {
 public:
  struct Config {
    std::int64_t start_phase = kPhaseStartSupervisor;  // starts the clock
    std::string command;                               // execve filename that marks "execve"; empty: the first one
    std::size_t max_live_boots = 65536;
  };
  using Sink = std::function<void(const BootRecord&)>;

  BootTracker(Config config, Sink on_boot_done);

  // Also hand each started boot over once it settles: when it listens, or
  // when it ends without listening. A long-running exporter counts a
  // container that serves for days as soon as it is up, not when it exits.
  void on_settled(Sink sink) { settled_sink_ = std::move(sink); }

  void on_event(const Event& event);
  // Ends (as Vanished) every boot in flight whose processes are all gone
  // according to is_alive(pid): their exit events were lost.
  void expire_vanished(const std::function<bool(std::uint32_t pid)>& is_alive);
  // Tracing stops: every boot still in flight goes to the sink.
  void finish_all();

  [[nodiscard]] std::size_t live_boots() const { return live_.size(); }
  // Boots that reached listen, or ended without it: what --count counts.
  [[nodiscard]] std::uint64_t settled_boots() const { return settled_; }

 private:
  struct LiveBoot {
    BootRecord record;
    bool settled = false;      // counted in settled_
    std::size_t readings = 0;  // scheduler readings kept: samples and wakeups
  };

  [[nodiscard]] bool from_older_launch(const Event& event) const;
  void on_phase(const Event& event);
  void on_fork(const Event& event);
  void on_exec(const Event& event);
  void on_listen(const Event& event);
  void on_exit(const Event& event);
  void on_wakeup(const Event& event);
  void on_thread(const Event& event);
  // Keeps the event's scheduler totals as a reading of its thread, ending
  // `step` when it is one.
  static void record_reading(LiveBoot& boot, const Event& event, std::optional<Step> step = std::nullopt);
  static void record_fork_reading(LiveBoot& boot, const Event& event);

  LiveBoot& boot_of(std::uint32_t hpid);
  void settle(LiveBoot& boot);
  void finish(std::uint32_t hpid, BootEnd end);
  void finish_if_over(std::uint32_t hpid, const LiveBoot& boot);
  void evict_oldest();

  Config config_;
  Sink sink_;
  Sink settled_sink_;
  std::unordered_map<std::uint32_t, LiveBoot> live_;
  // live_'s hpids by sequence, kept in step with it: the oldest boot in
  // O(log n). A flood of unknown hpids evicts one boot per event.
  std::map<std::uint64_t, std::uint32_t> by_sequence_;
  // Haconiwa's CLI passes phase 0 under its own pid, then forks the
  // supervisor: CLI pid -> phase 0 time, then supervisor pid -> that time.
  std::unordered_map<std::uint32_t, std::uint64_t> cli_started_;
  std::unordered_map<std::uint32_t, std::uint64_t> supervisor_cli_started_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t settled_ = 0;
};

}  // namespace hacoboot
