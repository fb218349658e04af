#pragma once

#include <cstdint>
#include <string_view>

namespace hacoboot {

// The process roles a boot's steps are grouped by (Haconiwa's numbering:
// phases 0-10 and 31+ are the supervisor's, 11-30 and execve the container
// child's). Apart from the analysis, so that a blocking point can name the
// role of the thread that woke it.
enum class Lane : std::uint8_t {
  Supervisor,  // the hpid
  Container,   // the container child: phases 11-30, execve, listen when it listened itself
  Listener,    // a descendant of the container that made the first listen
  Other,       // any other traced thread the critical path went through
};

// "supervisor", "container", "listener", "other".
constexpr std::string_view lane_name(Lane lane) {
  switch (lane) {
    case Lane::Supervisor: return "supervisor";
    case Lane::Container: return "container";
    case Lane::Listener: return "listener";
    case Lane::Other: break;
  }
  return "other";
}

}  // namespace hacoboot
