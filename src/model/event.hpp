#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "model/sched_totals.hpp"

namespace hacoboot {

// Thread: a thread of a tracked process made another (child_pid its tid).
enum class EventKind : std::uint8_t { Phase, Fork, Exec, Listen, Exit, Wakeup, Thread };

// What the kernel side knew of the emitting process (see hacoboot/contract.h).
enum class Role : std::uint8_t { Untracked, Launcher, Container, Member };

// The thread a Wakeup event woke (the event's own pid/tid are the waker's).
struct Wakee {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t hpid = 0;
  std::uint32_t launch = 0;
  Role role = Role::Untracked;
  SchedTotals sched;  // up to the event's ts_ns, the blocked time included

  bool operator==(const Wakee&) const = default;
};

// One kernel event, decoded. Fields that do not apply to a kind stay zero.
struct Event {
  EventKind kind = EventKind::Phase;
  std::uint64_t ts_ns = 0;  // CLOCK_MONOTONIC
  std::uint32_t pid = 0;
  std::uint32_t hpid = 0;    // boot key: the supervisor's pid
  std::uint32_t launch = 0;  // id of the launch under that hpid; 0: unknown (a CLI)
  Role role = Role::Untracked;
  std::uint64_t cgroup_id = 0;
  std::int64_t phase = 0;       // Phase
  std::uint32_t child_pid = 0;  // Fork; Thread: the new thread's tid
  std::string filename;         // Exec
  int exit_status = 0;          // Exit: the process's wait(2) status
  // Exec: the path of the cgroup cgroup_id names, filled in user space by
  // the enrichment step after decoding (empty when not resolvable).
  std::string cgroup_path;
  std::uint32_t tid = 0;  // the emitting thread
  // tid's totals up to ts_ns; nullopt when the kernel side does not account
  // that thread (it predates its process's tracking, or its map was full).
  std::optional<SchedTotals> sched;
  std::optional<Wakee> wakee;  // Wakeup

  bool operator==(const Event&) const = default;
};

// Decodes one ring-buffer record; nullopt when it is too short or of an
// unknown kind (a BPF object and a frontend out of step).
std::optional<Event> decode_event(std::span<const std::byte> record);

}  // namespace hacoboot
