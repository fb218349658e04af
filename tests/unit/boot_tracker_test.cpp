#include <gtest/gtest.h>

#include "hacoboot/boot_tracker.hpp"
