// Haconiwa's USDT probe, haconiwa:bootstrap_phase_pass(phase, hpid), for the
// programs that stand in for Haconiwa: the demo launcher and the tests'
// re-enactment of a real capture (tests/support/reenact.cpp).
#pragma once

#include <sys/sdt.h>

namespace hacoboot::demo {

// A single probe site, as in Haconiwa's mruby extension: noinline keeps it to
// exactly one stapsdt note in a program (include this header from one of its
// sources), so the tracer attaches one uprobe.
// clang (not g++ 12) flags sdt.h's internal variadic macro call under
// -Wpedantic (-Wgnu-zero-variadic-macro-arguments); the expansion is the
// header's business, so silence pedantic warnings for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
__attribute__((noinline)) inline void fire_phase_probe(long phase, long hpid) {
  DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, (long)phase, (long)hpid);
}
#pragma GCC diagnostic pop

}  // namespace hacoboot::demo
