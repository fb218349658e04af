#pragma once

#include <string>
#include <vector>

#include "capture/usdt_probe.hpp"
#include "util/expected.hpp"

namespace hacoboot {

// The USDT probes of a native ELF binary, in note order. Throws UsageError
// naming the file when it is missing, not a regular file, not ELF, or built
// for another architecture or word size.
std::vector<UsdtProbe> read_usdt_probes(const std::string& path);
// The same from an open file (read from its start with pread: the offset of
// `fd` is left alone), or why it has none (`path` names it): a new file
// found mid-run that is no binary the tool reads is a warning, not the end.
Expected<std::vector<UsdtProbe>> read_usdt_probes(int fd, const std::string& path);

}  // namespace hacoboot
