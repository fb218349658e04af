#include "cli/capture_hints.hpp"

#include "util/text.hpp"

namespace hacoboot {

std::string with_option_hint(const HaconiwaMissing& missing) {
  const std::string hint =
      missing.in_current_directory
          ? "to use the file in the current directory, give --haconiwa ./" + printable(missing.name)
          : "give the haconiwa binary with --haconiwa PATH";
  return missing.why + ": " + hint;
}

std::string with_option_hint(const UprobeMultiError& error) {
  if (error.perf_uprobes_would_do()) return std::string(error.what()) + ": use --usdt-attach perf";
  return std::string("--usdt-attach uprobe_multi: ") + error.what();
}

std::string describe(const UsdtAttachment& attachment) {
  if (attachment.uprobe_multi) return "one uprobe_multi link";
  const auto& why_not = attachment.why_not_uprobe_multi;
  return "perf uprobes (" + (why_not.empty() ? std::string("--usdt-attach perf") : why_not) + ")";
}

std::string describe_btf_filling(const Expected<std::filesystem::path>& bpftool) {
  if (!bpftool) return bpftool.error();
  return "filling the BTF cache with " + bpftool->string() + " for the next runs";
}

}  // namespace hacoboot
