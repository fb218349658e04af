#pragma once

#include <filesystem>
#include <string>

#include "capture/capture_errors.hpp"
#include "capture/tracer.hpp"
#include "util/expected.hpp"

namespace hacoboot {

// The capture stage names no command-line option (capture_errors.hpp): its
// messages, with the option that made the choice, or the one to change; and
// its -v lines.

// "'haconiwa' not found in PATH (...): give the haconiwa binary with --haconiwa PATH".
std::string with_option_hint(const HaconiwaMissing& missing);
// "--usdt-attach uprobe_multi: ...", or "...: use --usdt-attach perf".
std::string with_option_hint(const UprobeMultiError& error);
// For -v: "one uprobe_multi link", "perf uprobes (--usdt-attach perf)".
std::string describe(const UsdtAttachment& attachment);
// For -v: what CoreBtfCache::start_filling() did, or why it did not.
std::string describe_btf_filling(const Expected<std::filesystem::path>& bpftool);

}  // namespace hacoboot
