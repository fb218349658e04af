#include "model/event.hpp"

#include <cstring>

#include "hacoboot/contract.h"

namespace hacoboot {
namespace {

static_assert(HACOBOOT_SCHED_STATES == 4, "SchedTotals has one field per hacoboot_sched_state");

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
    case HACOBOOT_EV_WAKEUP: return EventKind::Wakeup;
    case HACOBOOT_EV_THREAD: return EventKind::Thread;
    default: return std::nullopt;
  }
}

SchedTotals decode_totals(const hacoboot_sched_totals& raw) {
  return SchedTotals{.cpu = raw.ns[HACOBOOT_SCHED_CPU],
                     .run_queue = raw.ns[HACOBOOT_SCHED_RUN_QUEUE],
                     .sleep = raw.ns[HACOBOOT_SCHED_SLEEP],
                     .io = raw.ns[HACOBOOT_SCHED_IO]};
}

std::optional<Wakee> decode_wakee(const hacoboot_wakee& raw) {
  const auto role = decode_role(raw.role);
  if (!role) return std::nullopt;
  return Wakee{.pid = raw.pid,
               .tid = raw.tid,
               .hpid = raw.hpid,
               .launch = raw.launch,
               .role = *role,
               .sched = decode_totals(raw.sched)};
}

// The bytes a record of this kind must have at least.
std::size_t record_size(EventKind kind) {
  switch (kind) {
    case EventKind::Exec: return sizeof(hacoboot_event);
    case EventKind::Wakeup: return HACOBOOT_WAKEUP_EVENT_SIZE;
    default: return HACOBOOT_EVENT_BASE_SIZE;
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
  if (record.size() < record_size(*kind)) return std::nullopt;

  Event e;
  e.kind = *kind;
  e.ts_ns = raw.ts_ns;
  e.pid = raw.pid;
  e.hpid = raw.hpid;
  e.launch = raw.launch;
  e.role = *role;
  e.cgroup_id = raw.cgroup_id;
  e.tid = raw.tid;
  if ((raw.flags & HACOBOOT_EVENT_SCHED) != 0) e.sched = decode_totals(raw.sched);
  switch (*kind) {
    case EventKind::Phase: e.phase = raw.arg; break;
    case EventKind::Fork:
    case EventKind::Thread: e.child_pid = static_cast<std::uint32_t>(raw.arg); break;
    // NOLINTBEGIN(cppcoreguidelines-pro-type-union-access): the kind says which member the record holds
    case EventKind::Exec: e.filename.assign(raw.filename, strnlen(raw.filename, sizeof raw.filename)); break;
    case EventKind::Wakeup:
      e.wakee = decode_wakee(raw.wakee);
      if (!e.wakee) return std::nullopt;
      break;
      // NOLINTEND(cppcoreguidelines-pro-type-union-access)
    case EventKind::Exit: e.exit_status = static_cast<int>(raw.arg); break;
    case EventKind::Listen: break;
  }
  return e;
}

}  // namespace hacoboot
