// Timeline pictures of an executed run: an SVG, and a self-contained HTML page (the same SVG with
// hover details and zoom). One row per compute stream (a rank of a replica), a box per compute
// action coloured by op kind and shaded by the virtual stage it belongs to, the microbatch number
// inside the box when it fits, empty idle gaps, a time axis with units, a legend, and under each
// row the rank's live activation memory as a step curve.
//
// The picture is plain data (sim/trace.h fills it from a run); the writers are pure functions of
// it, so equal pictures give byte-identical files.
#ifndef PPSIM_SIM_TIMELINE_PICTURE_H_
#define PPSIM_SIM_TIMELINE_PICTURE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ppsim {

// Colour class of a box.
enum class BoxKind : uint8_t {
  kForward,         // F
  kBackwardInput,   // I
  kBackwardWeight,  // W
  kBackward,        // B
  kOverlap,         // an overlapped forward and backward (F&B)
};

struct PictureBox {
  int32_t row = 0;  // index into TimelinePicture::rows
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // >= start_ns
  BoxKind kind = BoxKind::kForward;
  int32_t chunk = 0;       // which of its rank's virtual stages (0-based): the shade
  int32_t num_chunks = 1;  // virtual stages on the rank (>= 1)
  int32_t microbatch = 0;  // written in the box when it fits (an overlap: the forward's)
  std::string details;     // hover text, e.g. "F3 · 1F3 · stage 1 · microbatch 3 · 1.2 ms"
};

// A live-activation step: `bytes` from `time_ns` until the next point.
struct MemoryPoint {
  int64_t time_ns = 0;
  int64_t bytes = 0;
};

struct PictureRow {
  std::string name;  // "rank 0 · stages 0, 4"
  std::vector<MemoryPoint> memory;  // in time order; empty: no curve
  int64_t static_bytes = 0;         // weights, gradients and optimizer state (for hover)
};

struct TimelinePicture {
  std::string title;                  // "1F1B · pp 4 · 8 microbatches · h100-node"
  std::vector<std::string> subtitle;  // extra lines under the title (makespan, bubble, ...)
  int64_t end_ns = 0;                 // the time axis runs from 0 to end_ns
  std::vector<PictureRow> rows;
  std::vector<PictureBox> boxes;      // any order
};

// The picture as a standalone SVG document.
std::string TimelineSvg(const TimelinePicture& picture);
// The picture as one HTML page with no external references: the SVG, a tooltip with each box's
// details on hover, and zoom/pan on the time axis (wheel, drag, a reset button).
std::string TimelineHtml(const TimelinePicture& picture);

}  // namespace ppsim

#endif  // PPSIM_SIM_TIMELINE_PICTURE_H_
