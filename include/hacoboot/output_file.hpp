#pragma once

#include <ext/stdio_filebuf.h>

#include <memory>
#include <ostream>
#include <string>

namespace hacoboot {

// An output the user named, or standard output for "" and "-". Opened before
// tracing starts, so a bad path fails fast; created without following a
// symlink planted at the path (the tool runs as root, often in shared
// directories) and readable by its owner's group and others only as umask allows.
class OutputFile {
 public:
  // Throws UsageError naming the path when it cannot be created.
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&&) = delete;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();

  std::ostream& stream() { return *stream_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  // Flushes; throws RuntimeError if anything written was lost (full disk, closed pipe).
  void finish();
  // Finishes this file and goes on in a new one at the same path (appending
  // if one is there): after logrotate moved it away. Standard output stays.
  void reopen();

 private:
  void open(int flags);

  std::string name_;
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buffer_;
  std::unique_ptr<std::ostream> owned_stream_;
  std::ostream* stream_ = nullptr;
};

}  // namespace hacoboot
