#include "tests/bench/timeline_widget_bench.h"

#include "analysis/timeline/lane_catalog.h"
#include "analysis/timeline/run_catalog.h"
#include "analysis/timeline/timeline_source.h"
#include "widgets/timeline/timeline_lane.h"
#include "widgets/timeline/timeline_widget.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <random>
#include <vector>

namespace runlens::bench {

namespace {
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Runs the event loop until the widget has no fetch pending and its queued replots ran.
void settle(widgets::TimelineWidget& w)
{
    while (w.busy())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}
} // namespace

bool TimedApplication::notify(QObject* receiver, QEvent* event)
{
    if (!m_timing || m_depth > 0) {
        ++m_depth;
        const bool r = QApplication::notify(receiver, event);
        --m_depth;
        return r;
    }
    ++m_depth;
    const auto t0 = Clock::now();
    const bool r = QApplication::notify(receiver, event);
    const double ms = msSince(t0);
    --m_depth;
    m_longestMs = std::max(m_longestMs, ms);
    m_busyMs += ms;
    if (ms > 16) ++m_slowEvents;
    if (ms > 16 && qEnvironmentVariableIsSet("RUNLENS_BENCH_VERBOSE")) {
        QString what = QString::fromLatin1(receiver->metaObject()->className());
        if (auto* lane = qobject_cast<widgets::TimelineLane*>(receiver))
            what += QLatin1Char(' ') + QString::fromStdString(lane->spec().id) +
                    QStringLiteral(" (%1 graphs)").arg(lane->graphCount());
        fmt::print(stderr, "slow event: {:.1f} ms, type {}, {}\n", ms, int(event->type()), what.toStdString());
    }
    return r;
}

void TimedApplication::startTiming()
{
    m_timing = true;
    m_longestMs = 0;
    m_slowEvents = 0;
    m_busyMs = 0;
}

std::optional<TimelineFigures> measureTimelineWidget(TimedApplication& app, const std::string& dbPath, bool quick)
{
    widgets::TimelineController controller;
    widgets::TimelineWidget widget(&controller);
    widget.resize(1600, 1000);
    widget.show();
    QCoreApplication::processEvents();

    // Open: the catalog and the source on a worker (as the window does), then the first full-range frame.
    const auto t0 = Clock::now();
    auto catalog = timeline::loadRunCatalog(dbPath);
    if (!catalog) {
        fmt::print("timeline: {}\n", catalog.error().toString());
        return std::nullopt;
    }
    auto opened = timeline::TimelineSource::open(dbPath, *catalog);
    if (!opened) {
        fmt::print("timeline: {}\n", opened.error().toString());
        return std::nullopt;
    }
    std::shared_ptr<timeline::TimelineSource> source(std::move(*opened));
    bool failed = false;
    QObject::connect(&widget, &widgets::TimelineWidget::fetchFailed, [&](const QString& m) {
        fmt::print("timeline fetch failed: {}\n", m.toStdString());
        failed = true;
    });
    widget.setSource(source, *catalog);
    widget.setLanes(timeline::laneSpecs(**catalog));
    controller.setFullRange({(*catalog)->firstNs, (*catalog)->lastNs});
    settle(widget);
    TimelineFigures fig;
    fig.openMs = msSince(t0);
    if (failed || !widget.shownFrame()) return std::nullopt;
    for (const auto& lane : widget.shownFrame()->lanes) {
        fig.lines += lane.lines.size();
        fig.envelopes += lane.envelopes.size();
    }
    fig.lanes = widget.visibleLaneIds().size();

    // Scripted steps: zoom in by 2× around random times down to ~5 minutes, pan by a quarter at each depth,
    // then zoom back out; every step waits until every visible lane has replotted its new frame.
    std::mt19937_64 rng(7);
    std::vector<double> stepMs, fetchMs;
    QObject::connect(&widget, &widgets::TimelineWidget::frameShown, [&](quint64, double ms) { fetchMs.push_back(ms); });
    app.startTiming();
    const widgets::TimeRange full = controller.fullRange();
    int rounds = quick ? 1 : 3;
    for (int round = 0; round < rounds; ++round) {
        controller.fit();
        settle(widget);
        std::vector<std::pair<char, double>> steps;
        for (int64_t span = full.span(); span > 300'000'000'000LL; span /= 2) {
            steps.push_back({'z', 0.5});
            steps.push_back({'p', 0.25});
            steps.push_back({'p', -0.25});
        }
        for (size_t k = 0, n = steps.size() / 3; k < n; ++k)
            steps.push_back({'z', 2.0});
        for (auto [kind, amount] : steps) {
            const auto s0 = Clock::now();
            const double busy0 = app.busyMs();
            if (kind == 'z') {
                const widgets::TimeRange r = controller.range();
                std::uniform_int_distribution<int64_t> at(r.fromNs + r.span() / 4, r.toNs - r.span() / 4);
                controller.zoom(amount, at(rng));
            } else {
                controller.pan(amount);
            }
            settle(widget);
            stepMs.push_back(msSince(s0));
            if (qEnvironmentVariableIsSet("RUNLENS_BENCH_VERBOSE") && widget.shownFrame())
                fmt::print(stderr, "step {} span {:.0f} s: {:.1f} ms (fetch {:.1f} ms, GUI thread busy {:.1f} ms)\n",
                           kind, controller.range().span() / 1e9, stepMs.back(), widget.shownFrame()->fetchMs,
                           app.busyMs() - busy0);
            if (failed) return std::nullopt;
        }
    }
    fig.longestEventMs = app.longestMs();
    fig.slowEvents = app.slowEvents();
    std::sort(stepMs.begin(), stepMs.end());
    fig.steps = stepMs.size();
    fig.medianStepMs = stepMs[stepMs.size() / 2];
    fig.worstStepMs = stepMs.back();
    if (!fetchMs.empty()) {
        std::sort(fetchMs.begin(), fetchMs.end());
        fig.medianFetchMs = fetchMs[fetchMs.size() / 2];
    }
    return fig;
}

bool benchTimelineWidget(TimedApplication& app, const std::string& dbPath, bool quick)
{
    const std::optional<TimelineFigures> fig = measureTimelineWidget(app, dbPath, quick);
    if (!fig) return false;
    fmt::print("\nTimeline widget, offscreen 1600×1000, {} lanes ({} lines, {} envelopes at full range):\n\n",
               fig->lanes, fig->lines, fig->envelopes);
    fmt::print("| {:<58} | {:>10} | {:<12} |\n", "measure", "RunLens", "target");
    fmt::print("|{:-<60}|{:-<12}|{:-<14}|\n", "", "", "");
    fmt::print("| {:<58} | {:>10.0f} | {:<12} |\n", "open + first full-range timeline shown (ms)", fig->openMs,
               "≤ 1000 ms");
    fmt::print("| {:<58} | {:>10.1f} | {:<12} |\n",
               fmt::format("zoom/pan step, fetch + reduce + replot, median of {} (ms)", fig->steps), fig->medianStepMs,
               "≤ 50 ms");
    fmt::print("| {:<58} | {:>10.1f} | {:<12} |\n", "zoom/pan step, worst (ms)", fig->worstStepMs, "");
    if (fig->medianFetchMs)
        fmt::print("| {:<58} | {:>10.1f} | {:<12} |\n", "  of which fetch + reduce on the worker, median (ms)",
                   *fig->medianFetchMs, "");
    fmt::print("| {:<58} | {:>10.1f} | {:<12} |\n", "longest GUI-thread event during the steps (ms)",
               fig->longestEventMs, "≤ 16 ms");
    fmt::print("| {:<58} | {:>10} | {:<12} |\n", "GUI-thread events over 16 ms", fig->slowEvents, "0");
    return true;
}

} // namespace runlens::bench
