#pragma once

#include <string>
#include <string_view>

namespace hacoboot {

// Replaces the file at `path` with `contents` so that a reader (node_exporter's
// textfile collector) sees the old file or the new one, never a torn one: the
// text goes to a temporary file in the same directory (`.NAME.XXXXXX`, which
// the collector ignores: it reads *.prom), is flushed to disk, then renamed
// over `path`. A symbolic link at `path` is replaced, never followed. The file
// is mode 0644: the collector runs as another user. Throws RuntimeError naming
// the path on failure, and leaves no temporary file behind.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace hacoboot
