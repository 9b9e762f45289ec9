#include "schedules/action.h"

#include <gtest/gtest.h>

namespace ppsim {
namespace {

TEST(Action, Placeholder) { EXPECT_EQ(OpKindLetter(OpKind::kForward), 'F'); }

}  // namespace
}  // namespace ppsim
