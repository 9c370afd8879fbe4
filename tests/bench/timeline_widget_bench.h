#pragma once

// The timeline widget on a seed-scale run, offscreen: opening the run and showing its first full-range
// timeline, then scripted zoom and pan steps (fetch + reduce + replot of every visible lane), with the longest
// time the GUI thread was busy in one event while doing it.

#include <QApplication>
#include <optional>
#include <string>

namespace runlens::bench {

// A QApplication that can time every event it delivers from the event loop (the GUI thread's blocks).
class TimedApplication : public QApplication
{
public:
    TimedApplication(int& argc, char** argv) : QApplication(argc, argv) {}
    bool notify(QObject* receiver, QEvent* event) override;
    void startTiming();
    double longestMs() const { return m_longestMs; }
    int slowEvents() const { return m_slowEvents; } // over 16 ms
    double busyMs() const { return m_busyMs; }      // all events' time since startTiming

private:
    int m_depth = 0;
    bool m_timing = false;
    double m_longestMs = 0;
    int m_slowEvents = 0;
    double m_busyMs = 0;
};

// What the walk measured: the open, the zoom and pan steps (each until every visible lane replotted) and the GUI
// thread's longest event during the steps.
struct TimelineFigures
{
    double openMs = 0; // the catalog and source opened and the first full-range frame shown
    size_t lanes = 0, lines = 0, envelopes = 0;
    size_t steps = 0;
    double medianStepMs = 0, worstStepMs = 0;
    std::optional<double> medianFetchMs; // fetch + reduce on the worker
    double longestEventMs = 0;
    int slowEvents = 0; // over 16 ms
};

// The timeline widget opened on the run at dbPath and walked (fewer rounds when quick); nullopt when the work failed
// (the message is printed).
std::optional<TimelineFigures> measureTimelineWidget(TimedApplication& app, const std::string& dbPath, bool quick);

// Prints a table; returns false when the work failed (a fetch error, nothing drawn).
bool benchTimelineWidget(TimedApplication& app, const std::string& dbPath, bool quick);

} // namespace runlens::bench
