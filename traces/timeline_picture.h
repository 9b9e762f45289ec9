// Timeline pictures of an executed run: an SVG, and a self-contained HTML page (the same SVG with
// hover details and zoom). One row per compute stream (a rank of a replica), a box per compute
// action coloured by op kind and shaded by the virtual stage it belongs to, the microbatch number
// inside the box when it fits, empty idle gaps, a time axis with units, a legend, and under each
// row, a thin lane per kind of communication the run has (pipeline sends and receives,
// collectives, all-to-alls) with a bar per transfer the rank sends, and the rank's memory as a
// step curve (static + reserve + live activations) with the GPU's capacity as a dashed line. When a
// rank is out of memory, a red line under the title names the ranks, their rows' labels are red and
// the part of their curves above the capacity too.
//
// The picture is plain data (traces/trace.h fills it from a run); the writers are pure functions of
// it, so equal pictures give byte-identical files.
#ifndef PPSIM_TRACES_TIMELINE_PICTURE_H_
#define PPSIM_TRACES_TIMELINE_PICTURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/embedded.h"

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

// What a transfer is: its lane under the compute row and its colour.
enum class TransferKind : uint8_t {
  kP2p,         // a pipeline boundary's send/receive (activation, gradient)
  kCollective,  // an all-reduce step, a tensor- or context-parallel ring
  kAllToAll,    // an expert-parallel all-to-all
};
inline constexpr int kTransferKindCount = 3;

// A transfer drawn in its sender's row, in the lane of its kind.
struct PictureTransfer {
  int32_t row = 0;  // index into TimelinePicture::rows
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // >= start_ns
  TransferKind kind = TransferKind::kP2p;
  std::string details;  // hover text, e.g. "activation · rank 0 → rank 1 · microbatch 3 · 32 MiB"
};

// A dependency, drawn on demand as an arrow: from where its producer ends (a box's row, or a
// transfer's lane) to where its consumer starts: an action to the transfer that carries its
// output, the transfer to the action that uses it.
struct PictureFlow {
  int32_t from_row = 0;                   // index into TimelinePicture::rows
  std::optional<TransferKind> from_lane;  // the row's transfer lane; none: its boxes
  int64_t from_ns = 0;
  int32_t to_row = 0;
  std::optional<TransferKind> to_lane;
  int64_t to_ns = 0;
};

// A memory step: `bytes` from `time_ns` until the next point.
struct MemoryPoint {
  int64_t time_ns = 0;
  int64_t bytes = 0;
};

struct PictureRow {
  std::string name;  // "rank 0 · stages 0, 4"
  // The rank's memory, in time order: drawn from the first point on, the last held to the end of
  // the axis. Empty: no curve.
  std::vector<MemoryPoint> memory;
  int64_t static_bytes = 0;  // weights, gradients and optimizer state (for hover)
  // What the memory is made of at the rank's peak (for hover and the OOM line): the reserve, the
  // activations and their sum with static_bytes. The run's figures, also when `memory` covers a
  // window of it only.
  int64_t reserve_bytes = 0;
  int64_t peak_activation_bytes = 0;
  int64_t peak_memory_bytes = 0;
  // The GPU's memory: a dashed line across the curve (the curves' scale covers it). 0: unlimited,
  // no line.
  int64_t capacity_bytes = 0;
  bool oom = false;  // peak_memory_bytes > capacity_bytes: flagged in red
  int32_t rank = 0;  // the rank the OOM line names
};

struct TimelinePicture {
  std::string title;                  // "1F1B · pp 4 · 8 microbatches · h100-node"
  std::vector<std::string> subtitle;  // extra lines under the title (makespan, bubble, ...)
  int64_t end_ns = 0;                 // the time axis runs from 0 to end_ns
  std::vector<PictureRow> rows;
  std::vector<PictureBox> boxes;  // any order
  // Any order. Each row gets a thin lane per kind of transfer the picture has, under its boxes.
  std::vector<PictureTransfer> transfers;
  std::vector<PictureFlow> flows;  // any order; only the HTML page draws them
};

// The picture as a standalone SVG document.
std::string TimelineSvg(const TimelinePicture& picture);
// The picture as one HTML page with no external references: the SVG, a tooltip with each box's
// details on hover, and zoom/pan on the time axis (wheel, drag, a reset button). It opens on the
// whole iteration; its legend wraps within 640 px so that it fits any window; a checkbox hides
// and shows the transfer lanes, and (when the picture has flows) another shows the dependencies
// as arrows, hidden at first.
std::string TimelineHtml(const TimelinePicture& picture);

// The page's style and script, "timeline.css" and "timeline.js" (traces/), which TimelineHtml
// inlines byte for byte (generated by ppsim_embed from traces/CMakeLists.txt).
EmbeddedFiles TimelinePageFiles();

}  // namespace ppsim

#endif  // PPSIM_TRACES_TIMELINE_PICTURE_H_
