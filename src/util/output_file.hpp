#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "util/atomic_file.hpp"
#include "util/expected.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {

// An output the user named, or standard output for "" and "-". Its path was
// checked up front by the caller (the CLI's check_output_paths); the file is created without following
// a symlink planted at the path (the tool runs as root, often in shared
// directories), readable by its owner's group and others only as umask allows.
// No open waits: a FIFO no process reads is refused, not waited for (the
// event loop must go on draining the ring buffer).
class OutputFile {
 public:
  enum class Kind : std::uint8_t {
    // Written as it goes (--events): opened at the path, truncated; a
    // character device or a FIFO there is written in place.
    Streamed,
    // Written whole at the end (the summary, the pictures): into a temporary
    // file beside the path, renamed over it by finish() only once complete, so
    // a full disk or a crash leaves the previous file as it was. A character
    // device or a FIFO at the path is written in place.
    Replaced,
  };

  // Throws UsageError naming the path when it cannot be opened, RuntimeError
  // when the temporary file cannot be created.
  OutputFile(std::string path, Kind kind);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&&) = delete;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  std::ostream& stream() { return *stream_; }
  // Flushes (and puts a Replaced file in place); throws RuntimeError if
  // anything written was lost (full disk, closed pipe), saying why the
  // first lost write failed.
  void finish();
  // Finishes this file and goes on in a new one at the same path (appending
  // if one is there): after logrotate moved it away. Standard output stays.
  // When nothing usable can be opened there (a symbolic link, a FIFO no one
  // reads...), says why; what is written then goes nowhere until a later
  // reopen succeeds. Throws as finish() does.
  Expected<void> reopen();
  // Whether what is written goes to a file (not after a failed reopen).
  [[nodiscard]] bool open() const { return standard_output_ || buffer_ != nullptr; }

 private:
  class Buffer;  // a stream buffer writing a file descriptor

  void stream_to(UniqueFd fd);

  std::string name_;
  bool standard_output_ = false;
  std::unique_ptr<ReplacementFile> replacement_;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> owned_stream_;
  std::ostream* stream_ = nullptr;
};

// An output rendered whole at the end (the summary, the pictures, the gate's
// files): a Replaced OutputFile, put in place only once complete.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& render);

}  // namespace hacoboot
