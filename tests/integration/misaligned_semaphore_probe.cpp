// misaligned-semaphore-probe: Haconiwa's phase probe, guarded by a USDT
// semaphore at an odd address. The kernel refuses a uprobe whose reference
// counter is not aligned to its two bytes, so every attach of this probe
// fails, however it is made (uprobe_multi link or perf uprobe), after the
// programs have loaded: the tests' attach failure that depends on nothing
// racing.
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

// sdt.h names a probe's semaphore PROVIDER_NAME_semaphore and expects it in
// .probes: placed by hand one byte past an even address.
__asm__(
    ".pushsection .probes, \"aw\"\n"
    ".balign 2\n"
    ".byte 0\n"
    ".globl haconiwa_bootstrap_phase_pass_semaphore\n"
    "haconiwa_bootstrap_phase_pass_semaphore:\n"
    ".2byte 0\n"
    ".popsection\n");
extern "C" volatile unsigned short haconiwa_bootstrap_phase_pass_semaphore;

int main(int argc, char** /*argv*/) {
  if (haconiwa_bootstrap_phase_pass_semaphore != 0) {
    DTRACE_PROBE2(haconiwa, bootstrap_phase_pass, static_cast<long>(argc), 0L);
  }
  return 0;
}
