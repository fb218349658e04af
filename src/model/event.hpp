#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace hacoboot {

enum class EventKind : std::uint8_t { Phase, Fork, Exec, Listen, Exit };

// What the kernel side knew of the emitting process (see hacoboot.h).
enum class Role : std::uint8_t { Untracked, Launcher, Container, Member };

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
  std::uint32_t child_pid = 0;  // Fork
  std::string filename;         // Exec
  // Exec: the path of the cgroup cgroup_id names, filled in user space by
  // the enrichment step after decoding (empty when not resolvable).
  std::string cgroup_path;

  bool operator==(const Event&) const = default;
};

// Decodes one ring-buffer record; nullopt when it is too short or of an
// unknown kind (a BPF object and a frontend out of step).
std::optional<Event> decode_event(std::span<const std::byte> record);

}  // namespace hacoboot
