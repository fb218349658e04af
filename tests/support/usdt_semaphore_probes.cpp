// usdt-semaphore-probes: Haconiwa's three probes, each guarded by a USDT
// semaphore (the demo launcher's probe has none), with register, constant
// and memory operands, so that reading .note.stapsdt is checked against
// readelf on every kind of note the compiler writes, and so that a tracer
// is seen raising a semaphore (the phase probe fires only then).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <unistd.h>

extern "C" {
// sdt.h names a probe's semaphore PROVIDER_NAME_semaphore and expects it in .probes.
__attribute__((used, section(".probes"))) volatile unsigned short haconiwa_bootstrap_phase_pass_semaphore = 0;
__attribute__((used, section(".probes"))) volatile unsigned short haconiwa_probe_misc_semaphore = 0;
__attribute__((used, section(".probes"))) volatile unsigned short haconiwa_probe_misc_str_semaphore = 0;
}

namespace {
volatile long g_flag = 7;  // a memory operand (-8@g_flag(%rip) on x86-64)
}

int main(int argc, char** argv) {
  if (haconiwa_bootstrap_phase_pass_semaphore != 0) {
    DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, static_cast<long>(argc), static_cast<long>(getpid()));
  }
  if (haconiwa_probe_misc_semaphore != 0) DTRACE_PROBE2(haconiwa, probe_misc, 5L, g_flag);
  if (haconiwa_probe_misc_str_semaphore != 0) DTRACE_PROBE2(haconiwa, probe_misc_str, 1L, argv[0]);
  return 0;
}
