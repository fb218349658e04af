#pragma once

#include <iosfwd>

#include "hacoboot/boot.hpp"

namespace hacoboot {

// Streams one TSV row per boot milestone (each phase, execve, listen), a
// boot at a time, flushed so that an interrupted run keeps every boot it saw.
class BootRowWriter {
 public:
  explicit BootRowWriter(std::ostream& out);

  void write(const BootRecord& boot);

 private:
  std::ostream& out_;
};

}  // namespace hacoboot
