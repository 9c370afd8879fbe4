#pragma once

// Drawing of a flame graph from its layout: blocks coloured by phase or by package, labels elided to fit and
// never overlapping, "other" blocks for merged narrow frames, ancestors of a focus lightened, a caption with
// the view state and a legend with the per-phase shares. The same drawing serves the PNG export and, later,
// the on-screen view and reports; the SVG export writes the same blocks with tooltips.

#include "analysis/flame/flame_diff.h"
#include "analysis/flame/flame_layout.h"
#include "analysis/flame/flame_search.h"
#include "analysis/flame/flame_tree.h"

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QString>
#include <QStringList>
#include <string>

namespace runlens::widgets {

enum class FlameColors
{
    Phase,   // comm / input / checkpoint / gpu_wait / idle / compute / other
    Package, // by the frame's package (first folder of its file) or module, stable across runs
};

struct FlamePaintOptions
{
    FlameColors colors = FlameColors::Phase;
    bool icicle = true;  // root at the top; false: root at the bottom (flamegraph.pl)
    QStringList caption; // lines drawn above the graph (run, window, nodes, threads, focus)
    int rowHeight = 17;
    int pointSize = 8;
    bool legend = true;
    // On screen: a search's matches highlighted and the rest dimmed; the hovered and the current (keyboard)
    // block outlined; only blocks meeting `clip` drawn (a null rect: all).
    const analysis::FlameSearch* search = nullptr;
    // A differential graph: the tree is diffAsFlameTree(*diff); blocks are coloured by the change of their share
    // of the total from side A to side B (red grew, blue shrank), hatched when only one side has them.
    const analysis::DiffTree* diff = nullptr;
    QString diffLegend;   // names the sides: "B: this selection vs A: baseline …"
    int32_t hover = -1;   // layout rect index
    int32_t current = -1; // layout rect index
    QRect clip;
};

QColor phaseColor(analysis::Phase phase);
QColor blockColor(const analysis::FlameTree& tree, int32_t node, FlameColors colors);

// The height a drawing of `layout` takes at `width` with options (caption, rows, legend).
int flameHeight(const analysis::FlameLayout& layout, const FlamePaintOptions& options);
void paintFlame(QPainter& painter, const QRect& area, const analysis::FlameTree& tree,
                const analysis::FlameLayout& layout, const FlamePaintOptions& options);
// The narrowest block a drawing `width` pixels wide shows on its own (one pixel), as a fraction of the width.
double flameMinWidth(int width);
// Where rect `index` of the layout is drawn in `area` (the same arithmetic as paintFlame), for hit tests.
QRect flameBlockRect(const QRect& area, const analysis::FlameLayout& layout, size_t index,
                     const FlamePaintOptions& options);
// The tooltip text of a block: label, samples and time, shares of total, parent and focus, phase.
QString flameTooltip(const analysis::FlameTree& tree, const analysis::FlameLayout& layout, size_t index,
                     const analysis::DiffTree* diff = nullptr);
// The colour of a node of a diff: neutral grey for no change, towards red as its share grew, blue as it shrank
// (full colour at 5 points of the total).
QColor diffColor(const analysis::DiffNode& node);

QImage renderFlameImage(const analysis::FlameTree& tree, int32_t focus, int width, const FlamePaintOptions& options);
std::string renderFlameSvg(const analysis::FlameTree& tree, int32_t focus, int width, const FlamePaintOptions& options);

} // namespace runlens::widgets
