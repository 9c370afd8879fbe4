#pragma once

// File › Compare with…: the open run as the baseline against one or more other runs. The comparison
// (analysis::compareRunFiles over each run's steady state) is computed on a worker; CompareWindow shows it in five
// tabs (the metric rows, the findings gone / still there / new, the functions whose share of the stack samples grew
// or shrank, the differential flame graph of the two windows, and charts: the loss curves against step, tokens or wall
// time, and a metric's line per run aligned by time or by step), exports the current tab as PNG or SVG or the whole
// comparison as PDF (the compare report), and copies the tables as text. The runs are opened read-only; nothing is
// written to them.

#include "analysis/compare/run_comparison.h"

#include <QColor>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QCustomPlot;
class QTabWidget;
class QTableWidget;

namespace runlens::widgets {
class FlameGraphWidget;
}

namespace runlens::app {

// The comparison shown, or why there is none (error names the file).
struct RunComparison : analysis::RunComparison
{
    QString error;
    bool cancelled = false;
};

// Which window of a run to compare: its steady state, the whole run, or FROM..TO as runlens compare's --window-a
// reads it (ISO 8601, epoch seconds, +offset from the run's start, or a UTC time of day).
struct WindowChoice
{
    enum class Kind
    {
        SteadyState,
        WholeRun,
        Given,
    };
    Kind kind = Kind::SteadyState;
    QString range; // Given: "FROM..TO"
};

// Synchronous (the worker's body): paths[0] is the baseline; each run over its window (windows may be shorter
// than paths: the rest over their steady state). cancel: checked between runs and while stack samples are read.
RunComparison compareRunFiles(const QStringList& paths, const std::vector<WindowChoice>& windows = {},
                              const std::atomic<bool>* cancel = nullptr);
// What a comparison whose worker threw shows: "Cannot compare: " and the error.
RunComparison failedComparison(const QString& error);

class CompareWindow : public QWidget
{
    Q_OBJECT
public:
    explicit CompareWindow(RunComparison comparison, QWidget* parent = nullptr);
    ~CompareWindow() override;

    // Compare again over the windows chosen above the tabs (on a worker; Cancel stops it). False when the
    // windows cannot be read (the reason shows beside them) or a comparison is running.
    bool recompare();
    bool recomparing() const { return m_cancel != nullptr; }
    QComboBox* windowBox(size_t run) const { return run < m_windowBoxes.size() ? m_windowBoxes[run] : nullptr; }
    QLineEdit* rangeEdit(size_t run) const { return run < m_rangeEdits.size() ? m_rangeEdits[run] : nullptr; }

Q_SIGNALS:
    void recompared(bool ok); // a new comparison is shown (true), or it failed or was cancelled (false)

public:
    const RunComparison& comparison() const { return m_comparison; }
    QTabWidget* tabs() const { return m_tabs; }
    QTableWidget* metricsTable() const { return m_metrics; }
    QTableWidget* findingsTable() const { return m_findings; }
    QTableWidget* stacksTable() const { return m_stacks; }

    widgets::FlameGraphWidget* flameGraph() const { return m_flame; }
    QCustomPlot* lossPlot() const { return m_lossPlot; }
    QCustomPlot* linePlot() const { return m_linePlot; }
    QComboBox* lossAxisBox() const { return m_lossAxis; }
    QComboBox* metricBox() const { return m_metric; }
    QComboBox* alignBox() const { return m_align; }

    bool exportPng(const QString& path) const; // the current tab as shown
    bool exportSvg(const QString& path) const; // the current tab as shown, as vectors
    bool exportPdf(const QString& path) const; // the whole comparison, as runlens compare -o draws it
    QString text() const;                      // all three tables, tab-separated

private:
    void display(RunComparison comparison); // fills the tabs and the run lines from a comparison
    void fillMetrics();
    void fillFindings();
    void fillStacks();
    QWidget* makeCharts();
    QWidget* makeFlame();
    void chooseExport();

    RunComparison m_comparison;
    QTabWidget* m_tabs;
    QTableWidget* m_metrics;
    QTableWidget* m_findings;
    QTableWidget* m_stacks;
    QComboBox* m_lossAxis = nullptr;
    QComboBox* m_metric = nullptr;
    QComboBox* m_align = nullptr;
    QCustomPlot* m_lossPlot = nullptr;
    QCustomPlot* m_linePlot = nullptr;
    widgets::FlameGraphWidget* m_flame = nullptr;
    QStringList m_paths;                   // the runs, baseline first
    std::vector<QComboBox*> m_windowBoxes; // per run: steady state / whole run / given
    std::vector<QLineEdit*> m_rangeEdits;  // per run: FROM..TO
    std::vector<QLabel*> m_runLines;       // per run: its window and step source
    QLabel* m_windowNote = nullptr;        // why the windows cannot be read, or progress
    QPushButton* m_recompare = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel; // while a comparison runs
};

} // namespace runlens::app
