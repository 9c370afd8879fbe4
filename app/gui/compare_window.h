#pragma once

// File › Compare with… (issue 19): the open run as the baseline against one or more other runs. The comparison
// (summarizeRun over each run's steady state, compareRuns, and per candidate compareFindings and compareRunFlames
// against the baseline) is computed by compareRunFiles on a worker; CompareWindow shows it in three tabs (the
// metric rows, the findings gone / still there / new, the functions whose share of the stack samples grew or
// shrank), exports the current tab as PNG or the metric table as PDF, and copies everything as text. The runs are
// opened read-only; nothing is written to them.

#include "analysis/compare/run_comparison.h"

#include <QColor>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <vector>

class QTabWidget;
class QTableWidget;

namespace runlens::app {

// The comparison shown, or why there is none (error names the file).
struct RunComparison : analysis::RunComparison
{
    QString error;
};

// Synchronous (the worker's body): paths[0] is the baseline; each run over its steady state.
RunComparison compareRunFiles(const QStringList& paths);

// The colour of run i in the headers: the baseline grey-blue, the candidates from a fixed palette.
QColor runColor(size_t i);

class CompareWindow : public QWidget
{
    Q_OBJECT
public:
    explicit CompareWindow(RunComparison comparison, QWidget* parent = nullptr);
    ~CompareWindow() override;

    const RunComparison& comparison() const { return m_comparison; }
    QTabWidget* tabs() const { return m_tabs; }
    QTableWidget* metricsTable() const { return m_metrics; }
    QTableWidget* findingsTable() const { return m_findings; }
    QTableWidget* stacksTable() const { return m_stacks; }

    bool exportPng(const QString& path) const; // the current tab as shown
    bool exportPdf(const QString& path) const; // the metric table
    QString text() const;                      // all three tables, tab-separated

private:
    void fillMetrics();
    void fillFindings();
    void fillStacks();
    void chooseExport();

    RunComparison m_comparison;
    QTabWidget* m_tabs;
    QTableWidget* m_metrics;
    QTableWidget* m_findings;
    QTableWidget* m_stacks;
};

} // namespace runlens::app
