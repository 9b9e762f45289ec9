// Strongly typed indices: a stage, a rank and a microbatch are all small integers, and mixing
// them up is a bug the compiler should catch.
#ifndef PPSIM_SCHEDULES_INDEX_H_
#define PPSIM_SCHEDULES_INDEX_H_

#include <compare>
#include <cstdint>

namespace ppsim {

template <class Tag>
class Index {
 public:
  constexpr Index() = default;
  constexpr explicit Index(int32_t value) : value_(value) {}
  constexpr int32_t value() const { return value_; }
  constexpr auto operator<=>(const Index&) const = default;

 private:
  int32_t value_ = 0;
};

using StageIndex = Index<struct StageTag>;            // Global virtual-stage index.
using RankIndex = Index<struct RankTag>;              // Pipeline rank (one GPU here).
using MicrobatchIndex = Index<struct MicrobatchTag>;  // Microbatch number.

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_INDEX_H_
