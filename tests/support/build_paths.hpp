// Where the tests find the programs the build made, the files of the source
// tree they read and the host tools configure found.
//
// Defined in one translation unit that CMake generates from
// build_paths.cpp.in into the build tree (part of test_support): no other
// test source has a path of the checkout or of the build tree in its compile
// flags, so a compiler cache kept outside the checkout serves them to every
// clone, wherever it lies.
#pragma once

#include <filesystem>

namespace hacoboot::test {

// Built by this project.
std::filesystem::path sampler();                     // hacoboot-sampler
std::filesystem::path http_module();                 // its HTTP module (hacoboot-sampler-http.so)
std::filesystem::path launcher();                    // hacoboot-launcher (demo/)
std::filesystem::path demo_app();                    // hacoboot-demo-app (demo/)
std::filesystem::path semaphore_probes();            // usdt-semaphore-probes (support/)
std::filesystem::path sched_workload();              // sched-workload (integration/)
std::filesystem::path launcher_variant();            // hacoboot-launcher-variant: the launcher built otherwise
std::filesystem::path attach_race_shim();            // attach-race-shim (support/), preloaded into the tool
std::filesystem::path misaligned_semaphore_probe();  // its semaphore at an odd address (integration/)
std::filesystem::path reenact();                     // hacoboot-reenact (support/): plays a capture again

// In the source tree.
std::filesystem::path fixtures_dir();   // tests/fixtures
std::filesystem::path golden_dir();     // tests/support/golden
std::filesystem::path junit_cases();    // tests/support/junit_cases.py
std::filesystem::path reference_bt();   // bench/reference.bt
std::filesystem::path tracefs_state();  // scripts/tracefs-state.sh

// In the build tree.
std::filesystem::path build_dir();  // its top, what `cmake --install` takes
std::filesystem::path btf_cache();  // the integration tests' own --btf-cache

// Host tools.
std::filesystem::path cmake_command();  // the cmake that configured the build
std::filesystem::path readelf();

}  // namespace hacoboot::test
