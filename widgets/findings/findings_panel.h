#pragma once

// The findings of a run: a list (severity, rule, impact, saving, confidence, title), primary findings first,
// and below it the selected finding in full: where, when, the evidence behind it and what to change. Selecting
// a finding (click, arrows, Enter) emits findingSelected; the window wires that to the timeline and flame graph.

#include "analysis/rules/finding.h"

#include <QColor>
#include <QWidget>
#include <vector>

class QLabel;
class QPushButton;
class QTextBrowser;
class QTreeWidget;

namespace runlens::widgets {

// The colour of a severity, shared by the list and the spans on the timeline.
QColor severityColor(const std::string& severity);

// The parts of a finding's description as HTML, shared by the details pane and the report: where, when, impact,
// saving, confidence and role; the evidence table; what to change.
QString findingFactsHtml(const analysis::Finding& f);
QString findingEvidenceHtml(const analysis::Finding& f);
QString findingRecommendationHtml(const analysis::Finding& f);
// "14:03:27" (UTC).
QString clockTime(int64_t ns);

class FindingsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);

    // The findings in report order, and a line about the analysis (when it ran, what was missing).
    void setFindings(std::vector<analysis::Finding> findings, const QString& status);
    void setStatus(const QString& status);
    // Whether "Keep in run" is offered (findings analysed now and not yet written to the run).
    void setKeepable(bool keepable);
    bool keepable() const;
    const std::vector<analysis::Finding>& findings() const { return m_findings; }
    int current() const; // -1 when none
    void select(int index);
    // The details pane's text (for tests).
    QString detailsText() const;

Q_SIGNALS:
    void findingSelected(int index);
    void analyzeRequested();
    void keepRequested();

private:
    void showDetails(int index);
    std::vector<analysis::Finding> m_findings;
    QTreeWidget* m_list;
    QTextBrowser* m_details;
    QLabel* m_status;
    QPushButton* m_keep;
};

} // namespace runlens::widgets
