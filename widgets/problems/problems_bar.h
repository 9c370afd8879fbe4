#pragma once

// A slim bar above the timeline, like a browser's info bar: "12 problems in 3 imports" with a button that
// opens the problems list. Hidden when the run has none; closing it hides it until the next run or import.

#include <QFrame>
#include <cstdint>

class QLabel;
class QPushButton;

namespace runlens::widgets {

class ProblemsBar : public QFrame
{
    Q_OBJECT
public:
    explicit ProblemsBar(QWidget* parent = nullptr);

    // problems: diagnostics over every import; dataLoss: of them, those that dropped input; unanchored: sources
    // without wall-clock times that matched nothing (kept off the timeline).
    void setCounts(int64_t problems, int64_t dataLoss, int imports, int unanchored = 0);
    QString text() const;

Q_SIGNALS:
    void showRequested();

private:
    QLabel* m_icon;
    QLabel* m_text;
    QPushButton* m_show;
};

} // namespace runlens::widgets
