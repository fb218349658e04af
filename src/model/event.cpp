#include "model/event.hpp"

#include <cstring>

#include "hacoboot.h"

namespace hacoboot {
namespace {

std::optional<Role> decode_role(unsigned int role) {
  switch (role) {
    case 0: return Role::Untracked;
    case HACOBOOT_ROLE_LAUNCHER: return Role::Launcher;
    case HACOBOOT_ROLE_CONTAINER: return Role::Container;
    case HACOBOOT_ROLE_MEMBER: return Role::Member;
    default: return std::nullopt;
  }
}

std::optional<EventKind> decode_kind(unsigned int kind) {
  switch (kind) {
    case HACOBOOT_EV_PHASE: return EventKind::Phase;
    case HACOBOOT_EV_FORK: return EventKind::Fork;
    case HACOBOOT_EV_EXEC: return EventKind::Exec;
    case HACOBOOT_EV_LISTEN: return EventKind::Listen;
    case HACOBOOT_EV_EXIT: return EventKind::Exit;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Event> decode_event(std::span<const std::byte> record) {
  hacoboot_event raw{};
  if (record.size() < HACOBOOT_EVENT_BASE_SIZE) return std::nullopt;
  std::memcpy(&raw, record.data(), std::min(record.size(), sizeof raw));

  const auto kind = decode_kind(raw.kind);
  const auto role = decode_role(raw.role);
  if (!kind || !role) return std::nullopt;
  if (*kind == EventKind::Exec && record.size() < sizeof raw) return std::nullopt;

  Event e;
  e.kind = *kind;
  e.ts_ns = raw.ts_ns;
  e.pid = raw.pid;
  e.hpid = raw.hpid;
  e.launch = raw.boot;
  e.role = *role;
  e.cgroup_id = raw.cgroup_id;
  switch (*kind) {
    case EventKind::Phase: e.phase = raw.arg; break;
    case EventKind::Fork: e.child_pid = static_cast<std::uint32_t>(raw.arg); break;
    case EventKind::Exec: e.filename.assign(raw.filename, strnlen(raw.filename, sizeof raw.filename)); break;
    case EventKind::Listen:
    case EventKind::Exit: break;
  }
  return e;
}

}  // namespace hacoboot
