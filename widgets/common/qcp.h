#pragma once

// QCustomPlot's header uses the Qt keywords (signals, foreach) that this project disables (QT_NO_KEYWORDS);
// include it through here.

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
