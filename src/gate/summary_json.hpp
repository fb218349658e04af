#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "model/sample_stats.hpp"
#include "util/expected.hpp"

namespace hacoboot {

// The JSON of a saved summary (--baseline, compare), read within bounds
// checked as it is read, before any value is kept: parsed whole, a file of
// 16 MiB of '[' or of a long flat array takes many times its size in memory.
// The bounds hold every summary the tool writes.
struct SummaryJsonBounds {
  // Nesting of arrays and objects: a summary's deepest value is a sample
  // pair, six levels down.
  static constexpr std::size_t kMaxDepth = 16;
  // Members of an object or items of an array: a figure's samples are its
  // longest array, and SampleStats keeps at most this many pairs (exact
  // samples; its histogram has fewer buckets).
  static constexpr std::size_t kMaxItems = SampleStats::kExactSamples;
  // What the parsed document may take in memory, by an estimate of each
  // value's share (ReadCost): about twice what forty figures of kMaxItems
  // distinct samples each take.
  static constexpr std::size_t kMaxDocumentBytes = std::size_t{64} << 20;
};

// The document, or why it is none in the tool's words ("not JSON at line 3,
// column 7", "arrays or objects nested deeper than 16 levels"): the caller
// names the file.
Expected<nlohmann::json> read_summary_json(std::string_view text);

}  // namespace hacoboot
