// Numbers and colours as the timeline and the findings show them: values scaled with their units (never in
// exponent notation), axis ticks, offsets from the run's start, a finding's evidence with readable names and
// units, and the GPUs of a node each in a shade of the node's colour that tells them apart.

#include "analysis/rules/finding.h"
#include "widgets/common/node_colors.h"
#include "widgets/common/value_format.h"
#include "widgets/findings/findings_panel.h"

#include <QApplication>
#include <QColor>
#include <QTest>
#include <QTextDocument>
#include <cmath>
#include <cstdint>

using namespace runlens;
using namespace runlens::widgets;

namespace {

constexpr int64_t kSec = 1'000'000'000;

} // namespace

class ValueFormatTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void numbersAreReadable_data();
    void numbersAreReadable();
    void evidenceHasNamesAndUnits();
    void gpusOfANodeLookDifferent();
};

void ValueFormatTest::numbersAreReadable_data()
{
    QTest::addColumn<QString>("got");
    QTest::addColumn<QString>("want");
    QTest::newRow("bytes") << formatValue(3.92178e10, "bytes") << QStringLiteral("36.5 GiB");
    QTest::newRow("bytes per second") << formatValue(7.2e9, "B/s") << QStringLiteral("7.20 GB/s");
    QTest::newRow("seconds, days") << formatValue(7.377e5, "s") << QStringLiteral("8 d 12 h");
    QTest::newRow("seconds, short") << formatValue(0.0123, "s") << QStringLiteral("12.3 ms");
    QTest::newRow("long unit") << formatValue(152300, "tokens/s") << QStringLiteral("152 k tokens/s");
    QTest::newRow("long unit on a tick") << formatTick(150000, "tokens/s") << QStringLiteral("150 k");
    QTest::newRow("short unit on a tick") << formatTick(2e9, "B/s") << QStringLiteral("2.00 GB/s");
    QTest::newRow("huge, no unit") << formatValue(3.5e13, "") << QStringLiteral("35.0 T");
    QTest::newRow("tiny") << formatValue(0.0000123, "") << QStringLiteral("0.000012");
    QTest::newRow("ratio") << formatValue(0.2066, "ratio") << QStringLiteral("0.207 ratio");
    QTest::newRow("offset, hours") << formatOffset((1679LL * 60 + 59) * kSec + 250'000'000)
                                   << QStringLiteral("+27:59:59.250");
    QTest::newRow("offset, minutes") << formatOffset(185 * kSec + 125'000'000) << QStringLiteral("+3:05.125");
    QTest::newRow("offset, before") << formatOffset(-kSec) << QStringLiteral("−0:01.000");
}

void ValueFormatTest::numbersAreReadable()
{
    QFETCH(QString, got);
    QFETCH(QString, want);
    QCOMPARE(got, want);
    QVERIFY(!got.contains(QStringLiteral("e+")) && !got.contains(QStringLiteral("e-")));
}

void ValueFormatTest::evidenceHasNamesAndUnits()
{
    analysis::Finding f;
    f.rule = "COMM_BOUND";
    f.evidence.insert(QStringLiteral("link_capacity_bytes_per_s"), 1e11);
    f.evidence.insert(QStringLiteral("illusion_share"), 0.42);
    f.evidence.insert(QStringLiteral("backward_comm_fraction"), 0.733);
    f.evidence.insert(QStringLiteral("median_step_s"), 50.2);
    f.evidence.insert(QStringLiteral("total_stall_s"), 1689.0);
    f.evidence.insert(QStringLiteral("write_burst_threshold_bytes_per_s"), 3.92178e10);
    QTextDocument doc;
    doc.setHtml(findingEvidenceHtml(f));
    const QString text = doc.toPlainText();
    for (const QString& want :
         {QStringLiteral("Link capacity"), QStringLiteral("100 GB/s"), QStringLiteral("Illusion share"),
          QStringLiteral("42.0 %"), QStringLiteral("Median step"), QStringLiteral("50.2 s"),
          QStringLiteral("Total stall"), QStringLiteral("1689 s (28 min 9 s)"), QStringLiteral("Write burst threshold"),
          QStringLiteral("39.2 GB/s")})
        QVERIFY2(text.contains(want), qPrintable(QStringLiteral("no \"%1\" in:\n%2").arg(want, text)));
    QVERIFY2(!text.contains(QStringLiteral("bytes per s")) && !text.contains(QStringLiteral("e+")), qPrintable(text));
}

void ValueFormatTest::gpusOfANodeLookDifferent()
{
    // The 8 GPUs of a node: the node's hue, each clearly lighter or darker than every other.
    for (int node = 0; node < 4; ++node) {
        for (int a = 0; a < 8; ++a)
            for (int b = a + 1; b < 8; ++b) {
                const QColor ca = deviceColor(node, a), cb = deviceColor(node, b);
                const int dl = std::abs(ca.lightness() - cb.lightness()) + std::abs(ca.value() - cb.value());
                QVERIFY2(dl >= 16, qPrintable(QStringLiteral("node %1: gpu%2 %3 and gpu%4 %5")
                                                  .arg(node)
                                                  .arg(a)
                                                  .arg(ca.name())
                                                  .arg(b)
                                                  .arg(cb.name())));
            }
        QVERIFY(std::abs(deviceColor(node, 5).hslHue() - nodeColor(node).hslHue()) <= 12);
    }
}

QTEST_MAIN(ValueFormatTest)
#include "tst_value_format.moc"
