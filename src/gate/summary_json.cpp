#include "gate/summary_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

#include "util/text.hpp"

namespace hacoboot {
namespace {

using SummaryJson = nlohmann::json;

// "line 3, column 7" of the byte nlohmann's parse error points at (1-based).
std::string line_and_column(std::string_view text, std::size_t byte) {
  const auto before = text.substr(0, std::min(byte, text.size() + 1) - 1);
  const auto line_start = before.rfind('\n');
  const auto column = line_start == std::string_view::npos ? before.size() + 1 : before.size() - line_start;
  return fmt::format("line {}, column {}", std::count(before.begin(), before.end(), '\n') + 1, column);
}

// What the DOM allocates per value, roughly: its slot in the array or
// object holding it (twice, for a vector's spare capacity), and what it
// allocates of its own, each allocation with the allocator's overhead.
struct ReadCost {
  static constexpr std::size_t kAllocation = 16;
  static constexpr std::size_t kValue = 2 * sizeof(SummaryJson);
  static constexpr std::size_t kString = sizeof(SummaryJson::string_t) + kAllocation;
  static constexpr std::size_t kArray = sizeof(SummaryJson::array_t) + kAllocation;
  static constexpr std::size_t kObject = sizeof(SummaryJson::object_t) + kAllocation;
  // A map node: its links and colour, the key and the value.
  static constexpr std::size_t kMember = 4 * sizeof(void*) + sizeof(SummaryJson::object_t::value_type) + kAllocation;
};

// nlohmann's SAX events, counted against SummaryJsonBounds before the DOM
// builder keeps them: the first value past a bound stops the parse.
class BoundedSummaryReader {
 public:
  BoundedSummaryReader(std::string_view text, SummaryJson& document) : text_(text), dom_(document, false) {}

  bool null() { return counted(0) && dom_.null(); }
  bool boolean(bool value) { return counted(0) && dom_.boolean(value); }
  bool number_integer(SummaryJson::number_integer_t value) { return counted(0) && dom_.number_integer(value); }
  bool number_unsigned(SummaryJson::number_unsigned_t value) { return counted(0) && dom_.number_unsigned(value); }
  bool number_float(SummaryJson::number_float_t value, const SummaryJson::string_t& text) {
    return counted(0) && dom_.number_float(value, text);
  }
  bool string(SummaryJson::string_t& value) { return counted(ReadCost::kString + value.size()) && dom_.string(value); }
  bool binary(SummaryJson::binary_t& value) { return counted(ReadCost::kString + value.size()) && dom_.binary(value); }
  bool start_object(std::size_t size) {
    members_.emplace_back();
    return opened(ReadCost::kObject) && dom_.start_object(size);
  }
  // A member counts where it is named: its value then counts as one of the
  // document's. A name twice in one object is refused: the DOM would keep the
  // last, and a reviewer reading the file the first ("schema": 8, ...,
  // "schema": 1).
  bool key(SummaryJson::string_t& name) {
    in_object_ = true;
    if (!members_.back().insert(name).second)
      return refuse("the member \"" + printable(name) + "\" twice in one object");
    return within_container() && kept(ReadCost::kMember + name.size()) && dom_.key(name);
  }
  bool end_object() {
    members_.pop_back();
    closed();
    return dom_.end_object();
  }
  bool start_array(std::size_t size) { return opened(ReadCost::kArray) && dom_.start_array(size); }
  bool end_array() {
    closed();
    return dom_.end_array();
  }
  bool parse_error(std::size_t byte, const std::string& /*token*/, const nlohmann::detail::exception& error) {
    // out_of_range 406: a number beyond a double (1e999), valid JSON that
    // no summary holds.
    fault_ = dynamic_cast<const SummaryJson::out_of_range*>(&error) != nullptr
                 ? std::string("a number too large for any figure")
                 : "not JSON at " + line_and_column(text_, byte);
    return false;
  }

  [[nodiscard]] const std::string& fault() const { return fault_; }

 private:
  // A value that allocates `own` bytes besides its slot: one more of its
  // array's items, and its share of the document's memory.
  bool counted(std::size_t own) {
    const bool member_value = in_object_;
    in_object_ = false;
    return (member_value || within_container()) && kept(ReadCost::kValue + own);
  }
  bool kept(std::size_t bytes) {
    bytes_ += bytes;
    if (bytes_ <= SummaryJsonBounds::kMaxDocumentBytes) return true;
    return refuse(
        fmt::format("values that would take more than {} MiB in memory", SummaryJsonBounds::kMaxDocumentBytes >> 20U));
  }
  bool within_container() {
    if (items_.empty() || ++items_.back() <= SummaryJsonBounds::kMaxItems) return true;
    return refuse(fmt::format("an array or object of more than {} items", SummaryJsonBounds::kMaxItems));
  }
  bool opened(std::size_t own) {
    if (!counted(own)) return false;
    if (items_.size() == SummaryJsonBounds::kMaxDepth) {
      return refuse(fmt::format("arrays or objects nested deeper than {} levels", SummaryJsonBounds::kMaxDepth));
    }
    items_.push_back(0);
    return true;
  }
  void closed() { items_.pop_back(); }
  bool refuse(std::string why) {
    fault_ = std::move(why);
    return false;
  }

  std::string_view text_;
  nlohmann::detail::json_sax_dom_parser<SummaryJson> dom_;
  std::vector<std::size_t> items_;                        // of each array or object open, outermost first
  std::vector<std::unordered_set<std::string>> members_;  // the names of each object open
  std::size_t bytes_ = 0;                                 // of the document so far, by ReadCost
  bool in_object_ = false;                                // the next value is a member's, counted at its key
  std::string fault_;
};

}  // namespace

Expected<SummaryJson> read_summary_json(std::string_view text) {
  SummaryJson document;
  BoundedSummaryReader reader(text, document);
  if (!SummaryJson::sax_parse(text.begin(), text.end(), &reader) || !reader.fault().empty()) {
    return Failure{reader.fault().empty() ? std::string("not JSON") : reader.fault()};
  }
  return document;
}

}  // namespace hacoboot
