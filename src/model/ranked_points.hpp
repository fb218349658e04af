#pragma once

#include <algorithm>
#include <iterator>
#include <vector>

namespace hacoboot {

// After the point at `grown` gained weight (or was added at the end): moves
// it ahead of the points with less, where a stable sort by weight, the most
// first, would put it, without sorting them all again (a step may have
// thousands of points, and they come one by one).
template <typename Point, typename Weight>
void move_up_ranked(std::vector<Point>& points, typename std::vector<Point>::iterator grown, Weight weight) {
  for (; grown != points.begin() && weight(*std::prev(grown)) < weight(*grown); --grown) {
    std::iter_swap(grown, std::prev(grown));
  }
}

}  // namespace hacoboot
