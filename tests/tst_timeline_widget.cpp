// The timeline widget and its controller, offscreen: one time axis for every lane, range selection, the
// envelope of many GPUs showing a single GPU's dip, gaps drawn as gaps, exports and saved layouts.

#include "analysis/store/run_database.h"
#include "analysis/store/run_writer.h"
#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_envelope.h"
#include "analysis/timeline/timeline_source.h"
#include "tests/test_support.h"
#include "widgets/common/qcp.h"
#include "widgets/timeline/envelope_band.h"
#include "widgets/timeline/timeline_controller.h"
#include "widgets/timeline/timeline_lane.h"
#include "widgets/timeline/timeline_widget.h"

#include <QApplication>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>
#include <cmath>
#include <functional>

using namespace runlens;
using namespace runlens::widgets;

namespace {

constexpr int64_t kStart = 1'793'606'400'000'000'000; // 2026-11-02 08:00 UTC
constexpr int64_t kSec = 1'000'000'000;

// value(node, gpu, second) -> value, NaN = no point at all, -1 = an explicit missing point.
using ValueFn = std::function<double(int, int, int64_t)>;

bool writeRun(const std::string& path, int nodes, int gpus, int64_t seconds, int64_t stepS,
              const std::vector<std::pair<std::string, ValueFn>>& metrics)
{
    auto db = store::RunDatabase::open(path, store::OpenMode::Create);
    if (!db) return false;
    store::RunWriter w(**db);
    auto tx = (*db)->transaction();
    if (!tx) return false;
    store::ImportRecord rec;
    rec.path = "generated";
    rec.contentHash = "generated-" + path;
    rec.format = "test";
    if (!w.beginImport(rec)) return false;
    for (int n = 0; n < nodes; ++n) {
        auto node = w.node("node" + std::to_string(n), "option", "UTC");
        if (!node) return false;
        for (int g = 0; g < gpus; ++g) {
            auto dev = w.device(*node, "gpu", std::to_string(g));
            if (!dev) return false;
            for (const auto& [metric, fn] : metrics) {
                const bool ratio = metric == "gpu.sm_active";
                auto sink = w.series(*dev, metric, ratio ? "" : "%", metric);
                if (!sink) return false;
                for (int64_t s = 0; s < seconds; s += stepS) {
                    const double v = fn(n, g, s);
                    if (std::isnan(v)) continue;
                    if (v < 0)
                        (*sink)->appendMissing(kStart + s * kSec, "[N/A]");
                    else
                        (*sink)->append(kStart + s * kSec, v);
                    if (!w.flushIfNeeded(**sink)) return false;
                }
            }
        }
    }
    store::ImportTotals totals;
    totals.contentHash = rec.contentHash;
    return w.finishImport(totals, store::Diagnostics()).ok() && tx->commit().ok();
}

struct Opened
{
    std::shared_ptr<const timeline::RunCatalog> catalog;
    std::shared_ptr<timeline::TimelineSource> source;
};

Opened openRun(const std::string& path)
{
    Opened o;
    auto catalog = timeline::loadRunCatalog(path);
    if (!catalog) qFatal("catalog: %s", catalog.error().toString().c_str());
    o.catalog = *catalog;
    auto source = timeline::TimelineSource::open(path, o.catalog);
    if (!source) qFatal("source: %s", source.error().toString().c_str());
    o.source = std::shared_ptr<timeline::TimelineSource>(std::move(*source));
    return o;
}

// A widget showing the run, laid out offscreen at a fixed size, with its first frame shown.
struct Shown
{
    TimelineController controller;
    TimelineWidget widget{&controller};
    Opened run;
    explicit Shown(const std::string& path, QSize size = {1200, 700})
    {
        run = openRun(path);
        widget.resize(size);
        widget.show();
        QSignalSpy shown(&widget, &TimelineWidget::frameShown);
        widget.setSource(run.source, run.catalog);
        widget.setLanes(timeline::laneSpecs(*run.catalog));
        controller.setFullRange({run.catalog->firstNs, run.catalog->lastNs});
        settle();
    }
    // With RUNLENS_TIMELINE_SHOTS=DIR the widget is saved as DIR/name.png and exported as DIR/name.pdf, for looking
    // at both.
    void shot(const char* name)
    {
        const QString dir = qEnvironmentVariable("RUNLENS_TIMELINE_SHOTS");
        if (dir.isEmpty()) return;
        const QString base = dir + QLatin1Char('/') + QLatin1String(name);
        widget.grab().save(base + QStringLiteral(".png"));
        widget.exportPdf(base + QStringLiteral(".pdf"));
    }
    // Waits until no fetch is pending and every queued replot ran.
    void settle()
    {
        QTRY_VERIFY_WITH_TIMEOUT(!widget.busy(), 20000);
        QCoreApplication::processEvents();
        QCoreApplication::processEvents();
    }
};

double xRangeLower(QCustomPlot* p)
{
    return p->xAxis->range().lower;
}

// The lane drawn without its grid, so only data is ink.
QImage dataImage(QCustomPlot* lane)
{
    lane->xAxis->grid()->setVisible(false);
    lane->yAxis->grid()->setVisible(false);
    return lane->toPixmap(lane->width(), lane->height(), 1.0).toImage();
}

// Column x of the lane's axis rect: does any pixel differ clearly from the background?
int inkRows(const QImage& img, int x, int top, int bottom, QColor background)
{
    int n = 0;
    for (int y = top; y < bottom; ++y) {
        const QColor c = img.pixelColor(x, y);
        if (std::abs(c.red() - background.red()) + std::abs(c.green() - background.green()) +
                std::abs(c.blue() - background.blue()) >
            90)
            ++n;
    }
    return n;
}

} // namespace

class TimelineWidgetTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void controllerZoomPanHistory();
    void zoomOneLaneMovesEveryLane();
    void shiftDragSelectsWindow();
    void keysWorkFromALane();
    void envelopeShowsSingleGpuDip();
    void headerFitsNarrowLanes();
    void readoutStaysInsideAndCountsTheRest();
    void envelopeBandCoversItsColumns_data();
    void envelopeBandCoversItsColumns();
    void missingDataIsAGap();
    void exportsAndLayout();
    void laneOutOfViewRedrawsWhenShown();

private:
    QTemporaryDir m_dir;
};

void TimelineWidgetTest::controllerZoomPanHistory()
{
    TimelineController c;
    QSignalSpy ranges(&c, &TimelineController::rangeChanged);
    c.setFullRange({0, 1000 * kSec});
    QCOMPARE(c.range(), (TimeRange{0, 1000 * kSec}));
    c.zoom(0.5, 500 * kSec);
    QCOMPARE(c.range(), (TimeRange{250 * kSec, 750 * kSec}));
    c.pan(0.5);
    QCOMPARE(c.range(), (TimeRange{500 * kSec, 1000 * kSec}));
    QVERIFY(c.canGoBack());
    c.back();
    QCOMPARE(c.range(), (TimeRange{250 * kSec, 750 * kSec}));
    c.back();
    QCOMPARE(c.range(), (TimeRange{0, 1000 * kSec}));
    QVERIFY(!c.canGoBack());
    c.forward();
    QCOMPARE(c.range(), (TimeRange{250 * kSec, 750 * kSec}));
    // Zooming in never goes below the minimum span; panning stops at the margin without shrinking.
    c.zoom(1e-12);
    QCOMPARE(c.range().span(), TimelineController::kMinSpanNs);
    c.setRange({0, 100 * kSec});
    c.pan(-100);
    QCOMPARE(c.range(), (TimeRange{-100 * kSec, 0}));
    QSignalSpy sel(&c, &TimelineController::selectionChanged);
    c.setSelection(TimeRange{30 * kSec, 10 * kSec});
    QCOMPARE(sel.count(), 1);
    QCOMPARE(c.selection()->fromNs, 10 * kSec);
    QVERIFY(ranges.count() >= 6);
}

void TimelineWidgetTest::zoomOneLaneMovesEveryLane()
{
    const std::string path = m_dir.filePath(QStringLiteral("two.runlens")).toStdString();
    QVERIFY(writeRun(path, 2, 2, 7200, 1,
                     {{"gpu.util", [](int, int g, int64_t s) { return 50.0 + 40 * std::sin(s / 60.0 + g); }},
                      {"gpu.power", [](int, int, int64_t s) { return 300.0 + (s % 600); }}}));
    Shown view(path);
    view.shot("two-lanes");
    QCustomPlot* util = view.widget.lanePlot("gpu_util");
    QCustomPlot* power = view.widget.lanePlot("gpu_power");
    QVERIFY(util && power);
    const double before = xRangeLower(util);
    QCOMPARE(xRangeLower(power), before);
    // A wheel step over the utilization lane zooms every lane around the same time.
    const QPointF at(util->width() / 2.0, util->height() / 2.0);
    QWheelEvent wheel(at, util->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(util, &wheel);
    view.settle();
    QVERIFY(xRangeLower(util) > before);
    QCOMPARE(xRangeLower(power), xRangeLower(util));
    QCOMPARE(view.widget.lanePlot("axis")->xAxis->range().upper, util->xAxis->range().upper);
    // One time maps to the same horizontal position in the ruler and in every lane, also when the widget is too
    // narrow for a lane's title and legend.
    for (int width : {1200, 330}) {
        view.widget.resize(width, 700);
        view.settle();
        QCustomPlot* ruler = view.widget.lanePlot("axis");
        const double mid = (util->xAxis->range().lower + util->xAxis->range().upper) / 2;
        const int want = ruler->mapTo(&view.widget, QPoint(int(ruler->xAxis->coordToPixel(mid)), 0)).x();
        for (QCustomPlot* p : {util, power}) {
            QCOMPARE(p->mapTo(&view.widget, QPoint(int(p->xAxis->coordToPixel(mid)), 0)).x(), want);
            QCOMPARE(p->xAxis->axisRect()->right(), ruler->xAxis->axisRect()->right());
        }
    }
    view.widget.resize(1200, 700);
    view.settle();
    QVERIFY(view.controller.range().span() < 7199 * kSec);
    // The frame shown is of the new range, and every lane has data from it.
    QCOMPARE(view.widget.shownFrame()->fromNs, view.controller.range().fromNs);
    QVERIFY(util->graphCount() > 0 && power->graphCount() > 0);
    // Back returns every lane to the full range; a keyboard zoom (W) moves them again.
    view.controller.back();
    view.settle();
    QCOMPARE(xRangeLower(power), before);
    QTest::keyClick(&view.widget, Qt::Key_W);
    view.settle();
    QVERIFY(xRangeLower(power) > before);
    QCOMPARE(xRangeLower(util), xRangeLower(power));
}

void TimelineWidgetTest::shiftDragSelectsWindow()
{
    const std::string path = m_dir.filePath(QStringLiteral("sel.runlens")).toStdString();
    QVERIFY(writeRun(path, 1, 1, 3600, 1, {{"gpu.util", [](int, int, int64_t) { return 90.0; }}}));
    Shown view(path);
    QCustomPlot* util = view.widget.lanePlot("gpu_util");
    QVERIFY(util);
    QSignalSpy sel(&view.controller, &TimelineController::selectionChanged);
    const int y = util->height() / 2;
    const int x0 = static_cast<int>(util->xAxis->coordToPixel(static_cast<double>(kStart + 600 * kSec) / 1e9));
    const int x1 = static_cast<int>(util->xAxis->coordToPixel(static_cast<double>(kStart + 1800 * kSec) / 1e9));
    const TimeRange rangeBefore = view.controller.range();
    QTest::mousePress(util, Qt::LeftButton, Qt::ShiftModifier, QPoint(x0, y));
    QTest::mouseMove(util, QPoint((x0 + x1) / 2, y));
    QTest::mouseMove(util, QPoint(x1, y));
    QTest::mouseRelease(util, Qt::LeftButton, Qt::ShiftModifier, QPoint(x1, y));
    QCOMPARE(sel.count(), 1);
    const auto window = view.controller.selection();
    QVERIFY(window.has_value());
    const int64_t pixelNs = rangeBefore.span() / util->axisRect()->width();
    QVERIFY2(std::abs(window->fromNs - (kStart + 600 * kSec)) <= 2 * pixelNs, "selection start off by > 2 px");
    QVERIFY2(std::abs(window->toNs - (kStart + 1800 * kSec)) <= 2 * pixelNs, "selection end off by > 2 px");
    QCOMPARE(view.controller.range(), rangeBefore); // selecting does not pan
    // A plain drag pans instead, and Esc clears the selection.
    QTest::mousePress(util, Qt::LeftButton, Qt::NoModifier, QPoint(x1, y));
    QTest::mouseMove(util, QPoint(x0, y));
    QTest::mouseRelease(util, Qt::LeftButton, Qt::NoModifier, QPoint(x0, y));
    QVERIFY(view.controller.range().fromNs > rangeBefore.fromNs);
    QTest::keyClick(&view.widget, Qt::Key_Escape);
    QVERIFY(!view.controller.selection().has_value());
}

// Every key the README and Help name for the timeline, pressed as a user does: after clicking into a lane, so the
// lane has the focus and the keys pass through the scroll area of the lanes on their way up.
void TimelineWidgetTest::keysWorkFromALane()
{
    const std::string path = m_dir.filePath(QStringLiteral("keys.runlens")).toStdString();
    QVERIFY(writeRun(path, 1, 2, 3600, 1,
                     {{"gpu.util", [](int, int, int64_t) { return 90.0; }},
                      {"gpu.power", [](int, int, int64_t) { return 300.0; }}}));
    Shown view(path);
    QApplication::setActiveWindow(&view.widget);
    QVERIFY(QTest::qWaitForWindowActive(&view.widget));
    QCustomPlot* util = view.widget.lanePlot("gpu_util");
    QVERIFY(util);
    const TimeRange full = view.controller.range();
    view.controller.setRange({full.fromNs + full.span() / 4, full.toNs - full.span() / 4});
    view.settle();
    QTest::mouseClick(util, Qt::LeftButton, Qt::NoModifier, QPoint(util->width() / 2, util->height() / 2));
    QWidget* focus = QApplication::focusWidget();
    QVERIFY(focus == &view.widget || view.widget.isAncestorOf(focus));
    // The focus frame: the timeline's edge is drawn in the highlight colour while the focus is inside it.
    QCoreApplication::processEvents();
    QCOMPARE(view.widget.grab().toImage().pixelColor(1, view.widget.height() / 2),
             view.widget.palette().color(QPalette::Highlight));

    auto press = [&](Qt::Key key, Qt::KeyboardModifiers mods = Qt::NoModifier) {
        const TimeRange before = view.controller.range();
        QTest::keyClick(QApplication::focusWidget(), key, mods);
        return std::pair{before, view.controller.range()};
    };
    for (Qt::Key key : {Qt::Key_Left, Qt::Key_A}) {
        const auto [before, after] = press(key);
        QVERIFY2(after.fromNs < before.fromNs && after.span() == before.span(), "Left / A pan to earlier times");
    }
    for (Qt::Key key : {Qt::Key_Right, Qt::Key_D}) {
        const auto [before, after] = press(key);
        QVERIFY2(after.fromNs > before.fromNs && after.span() == before.span(), "Right / D pan to later times");
    }
    for (Qt::Key key : {Qt::Key_Up, Qt::Key_W}) {
        const auto [before, after] = press(key);
        QVERIFY2(after.span() < before.span(), "Up / W zoom in");
    }
    TimeRange zoomedOut;
    for (Qt::Key key : {Qt::Key_Down, Qt::Key_S}) {
        const auto [before, after] = press(key);
        QVERIFY2(after.span() > before.span(), "Down / S zoom out");
        zoomedOut = after;
    }
    {
        const auto [before, after] = press(Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(before, zoomedOut);
        QVERIFY2(after.span() < before.span(), "Alt+Left goes back to the range before the last zoom out");
        const auto [again, forward] = press(Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(forward, zoomedOut); // Alt+Right forward again
        const auto [b2, back] = press(Qt::Key_Backspace);
        QCOMPARE(back, after); // Backspace goes back too
    }
    for (Qt::Key key : {Qt::Key_F, Qt::Key_0}) {
        press(Qt::Key_W);
        const auto [before, after] = press(key);
        QCOMPARE(after, full); // fit the run
    }
    // Z zooms to a selection, Esc clears it.
    view.controller.setSelection(TimeRange{full.fromNs + 600 * kSec, full.fromNs + 1200 * kSec});
    QCOMPARE(press(Qt::Key_Z).second, (TimeRange{full.fromNs + 600 * kSec, full.fromNs + 1200 * kSec}));
    press(Qt::Key_Escape);
    QVERIFY(!view.controller.selection().has_value());
    // Page Down scrolls the lanes when they do not fit, from a lane and from the timeline itself.
    view.widget.resize(1200, 140);
    view.settle();
    QScrollBar* bar = view.widget.findChild<QScrollArea*>()->verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    for (QWidget* target : {static_cast<QWidget*>(util), static_cast<QWidget*>(&view.widget)}) {
        bar->setValue(0);
        target->setFocus();
        const TimeRange before = view.controller.range();
        QTest::keyClick(target, Qt::Key_PageDown);
        QVERIFY(bar->value() > 0);
        QCOMPARE(view.controller.range(), before);
        QTest::keyClick(target, Qt::Key_PageUp);
        QCOMPARE(bar->value(), 0);
    }
}

void TimelineWidgetTest::envelopeShowsSingleGpuDip()
{
    // 4 nodes × 8 GPUs over 28 h; GPU 5 of node 2 drops to 0 for 5 s in the middle (a blip: in the band, not an
    // outlier); GPU 3 of node 1 runs 8 points below the others for 20 min later on (a lasting deviation: flagged).
    const std::string path = m_dir.filePath(QStringLiteral("dip.runlens")).toStdString();
    const int64_t seconds = int64_t{28} * 3600, dipAt = 15 * 3600 + 17, lowFrom = int64_t{20} * 3600,
                  lowTo = lowFrom + 1200;
    QVERIFY(writeRun(path, 4, 8, seconds, 1, {{"gpu.util", [&](int n, int g, int64_t s) {
                                                   if (n == 2 && g == 5 && s >= dipAt && s < dipAt + 5) return 0.0;
                                                   const double v = 97.0 + static_cast<double>((s + g) % 3);
                                                   return n == 1 && g == 3 && s >= lowFrom && s < lowTo ? v - 8 : v;
                                               }}}));
    Shown view(path, {1600, 500});
    view.controller.setCursor(kStart + (dipAt + 2) * kSec);
    view.shot("envelope-dip");
    view.controller.setCursor(std::nullopt);
    auto* lane = view.widget.lanePlot("gpu_util");
    QVERIFY(lane);
    const auto frame = view.widget.shownFrame();
    QVERIFY(frame);
    QCOMPARE(frame->lanes.size(), size_t(1));
    const auto& lf = frame->lanes[0];
    QCOMPARE(lf.envelopes.size(), size_t(1));
    QCOMPARE(lf.envelopes[0].members, 32);
    // Only the lasting deviation is drawn on its own, and the legend says why: 8 points below the median.
    QCOMPARE(lf.lines.size(), size_t(1));
    QVERIFY(lf.lines[0].outlier);
    QCOMPARE(lf.lines[0].label, std::string("node1 gpu3 GPU utilization"));
    QStringList legend;
    for (int i = 0; i < lane->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(lane->legend->item(i)))
            legend << item->plottable()->name();
    QVERIFY2(legend.contains(QStringLiteral("⚠ node1 gpu3 GPU utilization -8.0 %, %1 σ")
                                 .arg(std::abs(lf.lines[0].outlierSigma), 0, 'f', 1)),
             qPrintable(legend.join(QStringLiteral(" | "))));
    QVERIFY(lf.lines[0].outlierSigma < -timeline::kOutlierK);
    // Pixels: in the column of the blip something is drawn near value 0; a column far away has nothing there.
    const QImage img = dataImage(lane);
    const double dipKey = static_cast<double>(kStart + (dipAt + 2) * kSec) / 1e9;
    const int xDip = static_cast<int>(lane->xAxis->coordToPixel(dipKey));
    const int yLow = static_cast<int>(lane->yAxis->coordToPixel(0.0));
    const int yHigh = static_cast<int>(lane->yAxis->coordToPixel(40.0));
    const QColor bg = lane->palette().color(QPalette::Base);
    int inkAtDip = 0;
    for (int dx = -1; dx <= 1; ++dx)
        inkAtDip += inkRows(img, xDip + dx, yHigh, yLow - 1, bg);
    QVERIFY2(inkAtDip >= 10, qPrintable(QStringLiteral("only %1 drawn pixels below 40 % at the dip").arg(inkAtDip)));
    const int xFar =
        static_cast<int>(lane->xAxis->coordToPixel(static_cast<double>(kStart + int64_t{5} * 3600 * kSec) / 1e9));
    QCOMPARE(inkRows(img, xFar, yHigh, yLow - 1, bg), 0);
    // Zoomed in to fewer samples than pixels, the band is still continuous (no pixel without a value) and still
    // reaches 0 at the blip, which is still no outlier.
    view.controller.setRange({kStart + (dipAt - 90) * kSec, kStart + (dipAt + 90) * kSec});
    view.settle();
    {
        const auto& zoomed = view.widget.shownFrame()->lanes.at(0);
        const auto& env = zoomed.envelopes.at(0);
        QVERIFY(!env.median.empty());
        QVERIFY2(std::none_of(env.median.begin(), env.median.end(), [](double v) { return std::isnan(v); }),
                 "the envelope has holes where there is data");
        QCOMPARE(*std::min_element(env.lo.begin(), env.lo.end()), 0.0);
        QVERIFY(zoomed.lines.empty());
    }
    view.shot("envelope-zoomed");
    // Zoomed to the deviation, node1 gpu3 is still the one flagged.
    view.controller.setRange({kStart + (lowFrom + 300) * kSec, kStart + (lowFrom + 900) * kSec});
    view.settle();
    {
        const auto& zoomed = view.widget.shownFrame()->lanes.at(0);
        QCOMPARE(zoomed.lines.size(), size_t(1));
        QCOMPARE(zoomed.lines[0].label, std::string("node1 gpu3 GPU utilization"));
    }
    view.controller.fit();
    view.settle();
    // The cursor readout over the blip names the envelope's spread; over the deviation, the outlier with its
    // reason.
    view.controller.setCursor(kStart + (dipAt + 2) * kSec);
    QString readout = static_cast<TimelineLane*>(lane)->cursorText();
    QVERIFY2(readout.contains(QStringLiteral("median")), qPrintable(readout));
    view.controller.setCursor(kStart + (lowFrom + 600) * kSec);
    readout = static_cast<TimelineLane*>(lane)->cursorText();
    QVERIFY2(readout.contains(QStringLiteral("⚠ node1 gpu3")) && readout.contains(QStringLiteral("σ)")),
             qPrintable(readout));
    view.shot("envelope-outlier");
}

void TimelineWidgetTest::headerFitsNarrowLanes()
{
    // A lane of three metrics: wide, its title and legend are whole; narrow, legend entries go into "+N" and the
    // title is elided only as far as needed, never overlapping; the header's tooltip names everything.
    const std::string path = m_dir.filePath(QStringLiteral("header.runlens")).toStdString();
    const auto ramp = [](int, int, int64_t s) { return static_cast<double>(s % 10) / 10; };
    QVERIFY(writeRun(path, 2, 1, 600, 1,
                     {{"gpu.kernel_busy", ramp}, {"gpu.comm_busy", ramp}, {"trace.collective_busy", ramp}}));
    Shown view(path, {1200, 300});
    auto* lane = static_cast<TimelineLane*>(view.widget.lanePlot("trace_busy"));
    QVERIFY(lane);
    const QString title = QStringLiteral("Kernel / communication busy");
    auto entries = [&] {
        QStringList names;
        int more = 0;
        for (int i = 0; i < lane->legend->itemCount(); ++i) {
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(lane->legend->item(i)))
                names << item->plottable()->name();
            else
                ++more;
        }
        return std::pair{names, more};
    };
    QCOMPARE(lane->titleText(), title);
    QCOMPARE(entries().first, (QStringList{QStringLiteral("Kernel busy"), QStringLiteral("Communication busy"),
                                           QStringLiteral("Collective busy")}));
    QCOMPARE(entries().second, 0);
    QVERIFY(lane->headerToolTip().isEmpty());
    view.shot("header-wide");

    for (int width : {560, 420, 330}) {
        view.widget.resize(width, 300);
        view.settle();
        lane->replot();
        const auto [names, more] = entries();
        const QString context = QStringLiteral("%1 px: title \"%2\", legend %3 +%4")
                                    .arg(width)
                                    .arg(lane->titleText(), names.join(QStringLiteral(", ")))
                                    .arg(more);
        QVERIFY2(more == 1 && names.size() < 3, qPrintable(context));
        // Side by side without overlap: the title's text ends before the legend starts.
        const QFont titleFont = [&] {
            QFont f = lane->font();
            f.setBold(true);
            f.setPointSizeF(f.pointSizeF() * 0.9);
            return f;
        }();
        const int titleEnd = lane->axisRect()->left() + QFontMetrics(titleFont).horizontalAdvance(lane->titleText());
        QVERIFY2(titleEnd <= lane->legend->outerRect().left(),
                 qPrintable(QStringLiteral("%1; title ends at %2, legend starts at %3")
                                .arg(context)
                                .arg(titleEnd)
                                .arg(lane->legend->outerRect().left())));
        QVERIFY2(lane->titleText() == title || lane->titleText().endsWith(QStringLiteral("…")), qPrintable(context));
        for (const QString& part : {title, QStringLiteral("Kernel busy"), QStringLiteral("Collective busy")})
            QVERIFY2(lane->headerToolTip().contains(part), qPrintable(lane->headerToolTip()));
        if (width == 420) view.shot("header-narrow");
    }
    // Wide again: everything back.
    view.widget.resize(1200, 300);
    view.settle();
    QCOMPARE(lane->titleText(), title);
    QCOMPARE(entries().first.size(), 3);
    QCOMPARE(entries().second, 0);
}

void TimelineWidgetTest::readoutStaysInsideAndCountsTheRest()
{
    // 8 GPUs × 3 metrics in one short lane: at either edge the readout box stays inside the plot, and it lists
    // what fits and says how many more there are.
    const std::string path = m_dir.filePath(QStringLiteral("readout.runlens")).toStdString();
    const auto level = [](int n, int g, int64_t s) { return 0.1 * (n * 2 + g) + 0.001 * static_cast<double>(s % 7); };
    QVERIFY(writeRun(path, 4, 2, 600, 1,
                     {{"gpu.kernel_busy", level}, {"gpu.comm_busy", level}, {"trace.collective_busy", level}}));
    Shown view(path, {900, 260});
    auto* lane = static_cast<TimelineLane*>(view.widget.lanePlot("trace_busy"));
    QVERIFY(lane);
    for (double at : {0.02, 0.5, 0.98}) {
        view.controller.setCursor(kStart + static_cast<int64_t>(at * 600) * kSec);
        lane->replot();
        const QString text = lane->cursorText();
        const QRectF box = lane->readoutRect();
        const QRect plot = lane->axisRect()->rect();
        const QString context = QStringLiteral("cursor at %1: box %2,%3 %4×%5 in plot %6..%7\n%8")
                                    .arg(at)
                                    .arg(box.left())
                                    .arg(box.top())
                                    .arg(box.width())
                                    .arg(box.height())
                                    .arg(plot.left())
                                    .arg(plot.right())
                                    .arg(text);
        QVERIFY2(box.left() >= plot.left() - 1 && box.right() <= plot.right() + 1 && box.bottom() <= plot.bottom() + 1,
                 qPrintable(context));
        const QStringList lines = text.split(QLatin1Char('\n'));
        QVERIFY2(lines.size() >= 2 && lines.back().startsWith(QStringLiteral("…")), qPrintable(context));
        const int more = lines.back().section(QLatin1Char(' '), 1, 1).toInt();
        QCOMPARE(lines.size() - 1 + more, 24); // every series is shown or counted
        if (at > 0.9) view.shot("readout-right-edge");
    }
}

void TimelineWidgetTest::envelopeBandCoversItsColumns_data()
{
    QTest::addColumn<double>("keysPerPixel");
    QTest::newRow("a key per pixel column (strokes)") << 1.0;
    QTest::newRow("two keys per column (strokes)") << 2.0;
    QTest::newRow("a key every 1.7 columns (strokes, joined)") << 1 / 1.7;
    QTest::newRow("a key every 6 columns (polygons)") << 1 / 6.0;
}

void TimelineWidgetTest::envelopeBandCoversItsColumns()
{
    // A band from 40 to 60 over [0, 1000] with no data in [400, 500]: every column outside the hole is painted
    // between 40 and 60 and nothing above or below it; the hole stays empty.
    QFETCH(double, keysPerPixel);
    QCustomPlot plot;
    plot.resize(900, 240);
    plot.axisRect()->setAutoMargins(QCP::msNone);
    plot.axisRect()->setMargins(QMargins(50, 20, 50, 20));
    plot.xAxis->setRange(0, 1000);
    plot.yAxis->setRange(0, 100);
    for (QCPAxis* axis : {plot.xAxis, plot.yAxis}) {
        axis->grid()->setVisible(false);
        axis->setTicks(false); // no tick marks inside the rect
    }
    plot.replot();
    const int columns = plot.axisRect()->width();
    auto data = std::make_shared<BandData>();
    const int n = static_cast<int>(std::lround(columns * keysPerPixel));
    for (int i = 0; i < n; ++i) {
        const double key = (i + 0.5) * 1000.0 / n;
        data->keys.push_back(key);
        const bool hole = key > 400 && key < 500;
        data->lo.push_back(hole ? NAN : 40.0);
        data->hi.push_back(hole ? NAN : 60.0);
    }
    auto* band = new EnvelopeBand(plot.xAxis, plot.yAxis, data, QColor(40, 80, 200, 120));
    band->removeFromLegend();
    plot.replot();
    const QImage img = plot.toPixmap(plot.width(), plot.height(), 1.0).toImage();
    if (const QString dir = qEnvironmentVariable("RUNLENS_TIMELINE_SHOTS"); !dir.isEmpty())
        img.save(dir + QStringLiteral("/band-%1.png")
                           .arg(QLatin1String(QTest::currentDataTag()))
                           .replace(QLatin1Char(' '), QLatin1Char('-')));
    const QColor bg(Qt::white);
    const int yTop = static_cast<int>(plot.yAxis->coordToPixel(58)),
              yBottom = static_cast<int>(plot.yAxis->coordToPixel(42));
    const int yAbove = static_cast<int>(plot.yAxis->coordToPixel(63)),
              yBelow = static_cast<int>(plot.yAxis->coordToPixel(37));
    const double firstKey = data->keys.front(), lastKey = data->keys.back();
    int holes = 0, spills = 0, inGap = 0;
    for (int x = plot.axisRect()->left() + 1; x < plot.axisRect()->right() - 1; ++x) {
        const double key = plot.xAxis->pixelToCoord(x);
        if (key < firstKey + 2 || key > lastKey - 2) continue; // before the first and after the last key
        spills += inkRows(img, x, plot.axisRect()->top() + 1, yAbove, bg) +
                  inkRows(img, x, yBelow, plot.axisRect()->bottom() - 1, bg);
        const int ink = inkRows(img, x, yTop, yBottom, bg);
        // Columns within a key spacing of the hole's edges may go either way.
        const double edge = 1000.0 / n + 2;
        if (key > 400 + edge && key < 500 - edge)
            inGap += ink;
        else if (key < 400 - edge || key > 500 + edge)
            holes += ink == 0 ? 1 : 0;
    }
    QCOMPARE(holes, 0);
    QCOMPARE(spills, 0);
    QCOMPARE(inGap, 0);
}

void TimelineWidgetTest::missingDataIsAGap()
{
    // One GPU, 2 h at 1 s: no points from 40 to 50 min, explicit missing points from 80 to 85 min.
    const std::string path = m_dir.filePath(QStringLiteral("gap.runlens")).toStdString();
    QVERIFY(writeRun(path, 1, 1, 7200, 1, {{"gpu.util", [](int, int, int64_t s) {
                                                if (s >= 2400 && s < 3000) return double(NAN);
                                                if (s >= 4800 && s < 5100) return -1.0;
                                                return 60.0 + 30 * std::sin(s / 30.0);
                                            }}}));
    Shown view(path, {1200, 400});
    auto* lane = view.widget.lanePlot("gpu_util");
    QVERIFY(lane);
    auto checkGap = [&](int64_t gapFrom, int64_t gapTo) {
        const QImage img = dataImage(lane);
        const QColor bg = lane->palette().color(QPalette::Base);
        const int top = static_cast<int>(lane->yAxis->coordToPixel(100.0)),
                  bottom = static_cast<int>(lane->yAxis->coordToPixel(20.0));
        const int64_t middleS = (gapFrom + gapTo) / 2; // whole seconds
        const int xIn = static_cast<int>(lane->xAxis->coordToPixel(static_cast<double>(kStart + middleS * kSec) / 1e9));
        const int xOut =
            static_cast<int>(lane->xAxis->coordToPixel(static_cast<double>(kStart + (gapFrom - 200) * kSec) / 1e9));
        QCOMPARE(inkRows(img, xIn, top, bottom, bg), 0);
        QVERIFY(inkRows(img, xOut, top, bottom, bg) > 0);
    };
    view.shot("gaps");
    checkGap(2400, 3000);
    checkGap(4800, 5100);
    // Zoomed into the hole, it is still a gap.
    view.controller.setRange({kStart + 2200 * kSec, kStart + 3200 * kSec});
    view.settle();
    checkGap(2400, 3000);
}

void TimelineWidgetTest::exportsAndLayout()
{
    const std::string path = m_dir.filePath(QStringLiteral("exp.runlens")).toStdString();
    QVERIFY(writeRun(path, 1, 2, 1800, 1,
                     {{"gpu.util", [](int, int, int64_t s) { return double(s % 100); }},
                      {"gpu.power", [](int, int, int64_t s) { return 200.0 + s % 50; }},
                      {"gpu.temp", [](int, int, int64_t) { return 60.0; }}}));
    Shown view(path, {1000, 600});
    const QString png = m_dir.filePath(QStringLiteral("t.png")), pdf = m_dir.filePath(QStringLiteral("t.pdf"));
    QVERIFY(view.widget.exportPng(png, 1.0));
    const QImage img(png);
    QCOMPARE(img.width(), view.widget.lanePlot("axis")->width());
    QVERIFY(img.height() > 3 * 64);
    QVERIFY(view.widget.exportPdf(pdf));
    QFile f(pdf);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().startsWith("%PDF"));
    // SVG: vectors in a view box the size of the stacked lanes; a folder that does not exist fails.
    const QString svg = m_dir.filePath(QStringLiteral("t.svg"));
    QVERIFY(view.widget.exportSvg(svg));
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray text = s.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY2(text.contains(QStringLiteral("viewBox=\"0 0 %1 %2\"").arg(img.width()).arg(img.height()).toUtf8()),
             text.left(600).constData());
    QVERIFY(text.contains("<path") || text.contains("<polyline"));
    // The figure says what it shows: the run's file, the window in UTC and its length, the node key.
    for (const char* part : {"exp.runlens", "2026-11-02 08:00:00", "UTC (29 min 59 s)", "Nodes:", "node0"})
        QVERIFY2(text.contains(part), part);
    view.controller.setSelection(TimeRange{kStart + 60 * kSec, kStart + 120 * kSec});
    QVERIFY(view.widget.exportSvg(svg));
    QVERIFY(s.seek(0));
    QVERIFY(s.readAll().contains("selection 2026-11-02 08:01:00"));
    view.controller.setSelection(std::nullopt);
    const QImage header = QImage(png).copy(0, 0, img.width(), TimelineWidget::kExportHeaderHeight);
    int ink = 0;
    for (int y = 0; y < header.height(); ++y)
        for (int x = 0; x < header.width(); ++x)
            ink += header.pixelColor(x, y) != header.pixelColor(0, 0) ? 1 : 0;
    QVERIFY2(ink > 300, qPrintable(QString::number(ink))); // the header is drawn in the PNG too
    view.shot("export-with-header");
    QVERIFY(!view.widget.exportSvg(m_dir.filePath(QStringLiteral("missing/t.svg"))));
    // Move the temperature lane to the top and hide power: the layout comes back in a new widget.
    view.widget.moveLane("gpu_temp", -1);
    view.widget.moveLane("gpu_temp", -1);
    view.widget.setLaneVisible("gpu_power", false);
    const std::vector<std::string> expected = {"gpu_temp", "gpu_util"};
    QCOMPARE(view.widget.visibleLaneIds(), expected);
    const QByteArray saved = view.widget.saveLayout();
    TimelineController c2;
    TimelineWidget w2(&c2);
    w2.setLanes(timeline::laneSpecs(*view.run.catalog));
    QVERIFY(w2.restoreLayout(saved));
    QCOMPARE(w2.visibleLaneIds(), expected);
    QVERIFY(!w2.restoreLayout(QByteArray("garbage")));
}

void TimelineWidgetTest::laneOutOfViewRedrawsWhenShown()
{
    const std::string path = m_dir.filePath(QStringLiteral("scroll.runlens")).toStdString();
    QVERIFY(writeRun(path, 1, 2, 3600, 1,
                     {{"gpu.util", [](int, int, int64_t s) { return double(s % 100); }},
                      {"gpu.power", [](int, int, int64_t s) { return 200.0 + s % 300; }},
                      {"gpu.temp", [](int, int, int64_t s) { return 40.0 + (s / 60) % 30; }}}));
    Shown view(path, {900, 150}); // room for about one lane: the others are scrolled out of view
    auto* temp = view.widget.lanePlot("gpu_temp");
    QVERIFY(temp && temp->visibleRegion().isEmpty());
    view.controller.zoom(0.25);
    view.settle();
    auto* scroll = view.widget.findChild<QScrollArea*>();
    QVERIFY(scroll);
    scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->maximum());
    view.settle();
    QVERIFY2(!temp->visibleRegion().isEmpty(), qPrintable(QStringLiteral("scroll range %1, lane at %2")
                                                              .arg(scroll->verticalScrollBar()->maximum())
                                                              .arg(temp->mapTo(scroll->widget(), QPoint()).y())));
    // What the lane shows on screen now is its drawing of the zoomed frame: it matches a fresh rendering as closely
    // as the lane that was in view all along does.
    auto mismatch = [](QCustomPlot* lane) {
        const QImage a = lane->grab().toImage().convertToFormat(QImage::Format_RGB32);
        const QImage b =
            lane->toPixmap(lane->width(), lane->height(), 1.0).toImage().convertToFormat(QImage::Format_RGB32);
        if (a.size() != b.size()) return 1.0;
        int64_t differ = 0;
        for (int y = 0; y < a.height(); ++y)
            for (int x = 0; x < a.width(); ++x)
                differ += a.pixel(x, y) != b.pixel(x, y);
        return double(differ) / (double(a.width()) * a.height());
    };
    const double shownLate = mismatch(temp);
    scroll->verticalScrollBar()->setValue(0);
    view.settle();
    const double alwaysShown = mismatch(view.widget.lanePlot("gpu_util"));
    QVERIFY2(
        shownLate <= alwaysShown + 0.002,
        qPrintable(QStringLiteral("lane scrolled into view differs from a fresh drawing in %1 of its pixels (%2 for "
                                  "a lane in view)")
                       .arg(shownLate)
                       .arg(alwaysShown)));
}

QTEST_MAIN(TimelineWidgetTest)
#include "tst_timeline_widget.moc"
