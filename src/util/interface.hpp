#pragma once

namespace hacoboot {

// The base of an interface, used through a pointer to it (unique_ptr): the
// destructor is virtual, so deleting through the base is right, and copies
// and moves are deleted, since through a base they would slice.
class Interface {
 public:
  Interface(const Interface&) = delete;
  Interface& operator=(const Interface&) = delete;
  Interface(Interface&&) = delete;
  Interface& operator=(Interface&&) = delete;
  virtual ~Interface() = default;

 protected:
  Interface() = default;
};

}  // namespace hacoboot
