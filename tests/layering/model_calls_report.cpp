// A model source that reaches into the report stage, which the model does not
// depend on: build.layering_wrong_way_fails_to_link expects the layering check
// of a library holding it not to link.
#include "report/report.hpp"

namespace hacoboot {

std::string wrong_way_duration(std::uint64_t ns) {
  return format_duration(ns);
}

}  // namespace hacoboot
