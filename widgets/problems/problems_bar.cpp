#include "widgets/problems/problems_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>

namespace runlens::widgets {

ProblemsBar::ProblemsBar(QWidget* parent)
    : QFrame(parent), m_icon(new QLabel(this)), m_text(new QLabel(this)),
      m_show(new QPushButton(tr("Show problems…"), this))
{
    // The palette's tooltip colours: an info bar that follows light and dark themes.
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::ToolTipBase);
    setForegroundRole(QPalette::ToolTipText);
    m_text->setForegroundRole(QPalette::ToolTipText);
    const int iconSize = style()->pixelMetric(QStyle::PM_SmallIconSize);
    m_icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(iconSize, iconSize));
    m_show->setObjectName(QStringLiteral("showProblems"));
    auto* close = new QToolButton(this);
    close->setAutoRaise(true);
    close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    close->setToolTip(tr("Hide this bar"));

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 2, 2);
    layout->addWidget(m_icon);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_show);
    layout->addWidget(close);
    connect(m_show, &QPushButton::clicked, this, &ProblemsBar::showRequested);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    hide();
}

void ProblemsBar::setCounts(int64_t problems, int64_t dataLoss, int imports, int unanchored)
{
    if (problems <= 0) {
        m_text->clear();
        hide();
        return;
    }
    QString text = problems == 1 ? tr("1 problem") : tr("%1 problems").arg(QLocale().toString(qlonglong(problems)));
    text += imports == 1 ? tr(" in 1 import") : tr(" in %1 imports").arg(imports);
    if (dataLoss > 0) text += tr(" (%1 dropped input)").arg(QLocale().toString(qlonglong(dataLoss)));
    if (unanchored > 0)
        text += unanchored == 1
                    ? tr("; 1 source without wall-clock times matched nothing: not on the timeline")
                    : tr("; %1 sources without wall-clock times matched nothing: not on the timeline").arg(unanchored);
    m_text->setText(text);
    show();
}

QString ProblemsBar::text() const
{
    return m_text->text();
}

} // namespace runlens::widgets
