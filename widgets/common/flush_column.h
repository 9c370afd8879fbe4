#pragma once

// A column of widgets that touch, such as a bar above the view it belongs to (the problems bar above the timeline,
// the flame graph's filters above it): no margins around them and no spacing between them.

#include <QVBoxLayout>

namespace runlens::widgets {

// A vertical layout on owner without margins or spacing.
inline QVBoxLayout* flushColumn(QWidget* owner)
{
    auto* layout = new QVBoxLayout(owner);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    return layout;
}

} // namespace runlens::widgets
