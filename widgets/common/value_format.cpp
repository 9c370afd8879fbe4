#include "widgets/common/value_format.h"

#include <cmath>
#include <cstdlib>

namespace runlens::widgets {

namespace {

constexpr int kTickUnitMaxLength = 4; // "GB/s" stays on a tick, "tokens/s" goes to the axis title

const char* const kDecimal[] = {"", "k", "M", "G", "T", "P", "E", nullptr};
const char* const kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", nullptr};

int decimalsFor(double v)
{
    const double a = std::abs(v);
    return a >= 100 || a == 0 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 1e-3 ? 3 : 6;
}

// v scaled by base until below it, with the prefix: "12.5 G" + suffix.
QString scaled(double value, const char* const* prefixes, double base, const QString& suffix)
{
    double v = value;
    int i = 0;
    while (std::abs(v) >= base && prefixes[i + 1] != nullptr) {
        v /= base;
        ++i;
    }
    const int decimals = std::abs(v) >= 100 || v == 0 ? 0 : std::abs(v) >= 10 ? 1 : 2;
    const QString number = QString::number(v, 'f', i == 0 ? std::min(decimals, decimalsFor(v)) : decimals);
    const QString unit = QString::fromUtf8(prefixes[i]) + suffix;
    return unit.isEmpty() ? number : number + QLatin1Char(' ') + unit;
}

} // namespace

QString formatValue(double value, const std::string& unit)
{
    if (!std::isfinite(value)) return QStringLiteral("–");
    if (unit == "B/s" || unit == "bytes/s") return scaled(value, kDecimal, 1000, QStringLiteral("B/s"));
    if (unit == "bytes" || unit == "B") return scaled(value, kBinary, 1024, QStringLiteral("B"));
    if (unit == "Hz") return scaled(value, kDecimal, 1000, QStringLiteral("Hz"));
    if (unit == "W") return QStringLiteral("%1 W").arg(value, 0, 'f', std::abs(value) >= 100 ? 0 : 1);
    if (unit == "%") return QStringLiteral("%1 %").arg(value, 0, 'f', std::abs(value) >= 10 ? 0 : 1);
    if (unit == "s") return formatDuration(static_cast<int64_t>(std::llround(value * 1e9)));
    const QString u = QString::fromStdString(unit);
    // Other units: plain up to 10,000, then decimal prefixes ("150 k tokens/s").
    if (std::abs(value) >= 1e4) {
        QString text = scaled(value, kDecimal, 1000, QString());
        return u.isEmpty() ? text : text + QLatin1Char(' ') + u;
    }
    const QString number = QString::number(value, 'f', decimalsFor(value));
    return u.isEmpty() ? number : number + QLatin1Char(' ') + u;
}

QString formatTick(double value, const std::string& unit)
{
    if (QString::fromStdString(unit).size() <= kTickUnitMaxLength || unit == "bytes" || unit == "bytes/s")
        return formatValue(value, unit);
    return formatValue(value, {});
}

QString formatDuration(int64_t ns)
{
    const double s = static_cast<double>(ns) / 1e9;
    const double a = std::abs(s);
    if (a >= 86400) return QStringLiteral("%1 d %2 h").arg(ns / 86'400'000'000'000).arg((ns / 3'600'000'000'000) % 24);
    if (a >= 3600) return QStringLiteral("%1 h %2 min").arg(ns / 3'600'000'000'000).arg((ns / 60'000'000'000) % 60);
    if (a >= 60) return QStringLiteral("%1 min %2 s").arg(ns / 60'000'000'000).arg((ns / 1'000'000'000) % 60);
    if (a >= 1) return QStringLiteral("%1 s").arg(s, 0, 'f', a >= 10 ? 1 : 2);
    if (a >= 1e-3) return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', a >= 1e-2 ? 1 : 2);
    return QStringLiteral("%1 µs").arg(s * 1e6, 0, 'f', 1);
}

QString formatOffset(int64_t ns)
{
    const int64_t ms = std::llabs(ns / 1'000'000);
    const QString sign = ns < 0 ? QStringLiteral("−") : QStringLiteral("+");
    const QString secondsMs =
        QStringLiteral("%1.%2").arg((ms / 1000) % 60, 2, 10, QLatin1Char('0')).arg(ms % 1000, 3, 10, QLatin1Char('0'));
    if (ms >= 3'600'000)
        return QStringLiteral("%1%2:%3:%4")
            .arg(sign)
            .arg(ms / 3'600'000)
            .arg((ms / 60'000) % 60, 2, 10, QLatin1Char('0'))
            .arg(secondsMs);
    return QStringLiteral("%1%2:%3").arg(sign).arg(ms / 60'000).arg(secondsMs);
}

} // namespace runlens::widgets
