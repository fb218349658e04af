#pragma once

#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace hacoboot {

// A file the tool writes, as the user named it ("" or "-": standard output).
struct NamedOutput {
  std::string option;  // "-o", "--events"...: what messages name
  std::string path;
  // --textfile is replaced by renaming a new file over it: only a regular file
  // (or nothing) may be at its path. The other outputs write a character
  // device or a FIFO in place (/dev/null, a pipe someone reads).
  bool regular_file_only = false;
  // --events and --record are opened as the run starts and written in place
  // (a regular file truncated); the others are written at the end, a regular
  // file replaced by renaming a new one, written beside it, over it.
  bool streamed = false;
};

// A file the tool reads (--baseline, the haconiwa binary...).
struct NamedInput {
  std::string option;
  std::string path;
};

// Checks every output before anything is created, so that a run refused for
// any reason leaves the file system as it was: its directory exists and is
// writable (not on a read-only mount); at its path there is nothing, a regular
// file, or (see NamedOutput) a character device or FIFO, never a symbolic
// link (the tool runs as root, often in shared directories); no two outputs
// are the same file, and no output is an input. "The same file": the same
// device and inode where the file exists (a hard link, another spelling),
// the same normalised absolute path otherwise; a character device may be
// named twice (/dev/null); an existing file can be written (not immutable,
// not read-only for this user); a file replaced has a name that leaves room
// for the temporary one beside it; a streamed output that is a FIFO has a
// reader now. Throws UsageError naming the option(s).
//
// Returns the write ends of the streamed FIFOs, opened to see their readers:
// held until those outputs are open, they keep the readers from seeing the
// end of their input in between.
std::vector<UniqueFd> check_output_paths(const std::vector<NamedOutput>& outputs,
                                         const std::vector<NamedInput>& inputs);

}  // namespace hacoboot
