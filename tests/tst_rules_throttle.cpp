// THROTTLE on generated runs: a node whose GPUs run slower clocks at their power limit (or with a thermal reason
// in the clock-event bits) is throttled and its equal peers are not.

#include "analysis/rules/throttle_rule.h"
#include "analysis/store/run_database.h"
#include "tests/steps_support.h"
#include "tests/test_support.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <functional>
#include <limits>

using namespace runlens;
using namespace runlens::analysis;
using namespace runlens::test::steps;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A throttling run: `nodes` × 4 GPUs busy at 95 %, 1980 MHz and 650 W against a 700 W limit; `throttled` says
// which GPUs at which second run `mhz` at `watts` instead.
struct ThrottleCase
{
    int nodes = 2;
    double mhz = 1650, watts = 700;
    bool recordLimit = true;
    std::function<bool(int node, int gpu, int64_t s)> throttled;
};

Synthetic throttleRun(const ThrottleCase& c)
{
    Synthetic run;
    run.nodes = c.nodes;
    run.gpus = 4;
    run.seconds = 1800;
    auto hit = c.throttled;
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 95.0; }},
        {"gpu.sm_active", "ratio", [](int n, int g, int64_t s) { return 0.6 + 0.02 * gauss(n * 8 + g, s); }},
        {"gpu.sm_clock", "Hz",
         [=](int n, int g, int64_t s) {
             return (hit(n, g, s) ? c.mhz : 1980.0 + 10 * gauss(100 + n * 8 + g, s)) * 1e6;
         }},
        {"gpu.power", "W",
         [=](int n, int g, int64_t s) { return hit(n, g, s) ? c.watts : 650.0 + 5 * gauss(200 + n * 8 + g, s); }},
        {"gpu.temp", "C", [](int, int, int64_t) { return 70.0; }},
    };
    if (c.recordLimit) run.series.push_back({"gpu.power_limit", "W", [](int, int, int64_t) { return 700.0; }});
    return run;
}

} // namespace

class TestRulesThrottle : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void throttleAtPowerLimit_data();
    void throttleAtPowerLimit();
    void throttleFromReasonBits();
    void noThrottle_data();
    void noThrottle();
};

void TestRulesThrottle::throttleAtPowerLimit_data()
{
    QTest::addColumn<int>("fromS");
    QTest::addColumn<int>("toS");
    QTest::addColumn<bool>("recordLimit");
    QTest::addColumn<QString>("severity");
    QTest::newRow("the whole run, limit recorded") << 0 << 1800 << true << "critical";
    QTest::newRow("the whole run, limit from the most drawn") << 0 << 1800 << false << "critical";
    QTest::newRow("4 of 30 min: warn") << 600 << 840 << true << "warn";
    QTest::newRow("1 of 30 min: info") << 600 << 660 << true << "info";
}

void TestRulesThrottle::throttleAtPowerLimit()
{
    QFETCH(int, fromS);
    QFETCH(int, toS);
    QFETCH(bool, recordLimit);
    QFETCH(QString, severity);
    // node1's GPUs run 1650 MHz (17 % below their peers' 1980) at their 700 W limit.
    ThrottleCase c;
    c.recordLimit = recordLimit;
    c.throttled = [=](int n, int, int64_t s) { return n == 1 && s >= fromS && s < toS; };
    QTemporaryDir dir;
    auto db = writeRun(dir, throttleRun(c));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QVERIFY(!m->gpus[0].smClock.empty() && !m->gpus[0].power.empty() && !m->gpus[0].temp.empty());
    const auto found = throttleRule(*m, RuleParams::defaults());
    QCOMPARE(found.size(), size_t(1));
    const Finding& f = found[0];
    QCOMPARE(f.rule, std::string("THROTTLE"));
    QCOMPARE(f.nodes, std::vector<std::string>{"node1"});
    QCOMPARE(f.gpus, (std::vector<std::string>{"node1:gpu0", "node1:gpu1", "node1:gpu2", "node1:gpu3"}));
    QCOMPARE(QString::fromStdString(f.severity), severity);
    QCOMPARE(f.episodes.size(), size_t(1));
    QCOMPARE(f.episodes[0].startNs, kStart + fromS * kSecond);
    QCOMPARE(f.episodes[0].endNs, kStart + toS * kSecond);
    QVERIFY(std::abs(f.impact - (toS - fromS) / 1800.0) < 1e-9);
    // The clock deficit: 1 - 1650/1980 of the throttled time, within the peers' noise.
    const double deficit = (1 - 1650.0 / 1980.0) * (toS - fromS);
    QVERIFY2(std::abs(f.savingS - deficit) < 0.05 * deficit, qPrintable(QString::number(f.savingS)));
    QCOMPARE(f.evidence.value(QStringLiteral("cause")).toString(), QStringLiteral("power_cap"));
    const QJsonObject g0 = f.evidence.value(QStringLiteral("gpus")).toArray()[0].toObject();
    QVERIFY(std::abs(g0.value(QStringLiteral("median_sm_clock_mhz")).toDouble() - 1650) < 1e-6);
    QVERIFY(std::abs(g0.value(QStringLiteral("peers_median_sm_clock_mhz")).toDouble() - 1980) <
            20); // its throttled node-mates are peers too
    QVERIFY(std::abs(g0.value(QStringLiteral("median_power_w")).toDouble() - 700) < 1e-6);
    QCOMPARE(g0.value(QStringLiteral("power_limit_source")).toString(),
             recordLimit ? QStringLiteral("recorded") : QStringLiteral("max_seen"));
    QVERIFY(f.confidence < (recordLimit ? 0.8 : 0.7));
    QVERIFY(f.recommendation.find("nvidia-smi -pl") != std::string::npos);
}

void TestRulesThrottle::throttleFromReasonBits()
{
    // node0:gpu2 reports HW thermal slowdown (the nvidia-smi boolean) from 300 s to 900 s, at 1500 MHz and 88 °C;
    // node1:gpu0 reports the same through DCGM's reason mask. Power stays low: the reasons say why.
    Synthetic run;
    run.nodes = 2;
    run.gpus = 4;
    auto hot = [](int n, int g, int64_t s) {
        return s >= 300 && s < 900 && ((n == 0 && g == 2) || (n == 1 && g == 0));
    };
    run.series = {
        {"gpu.util", "%", [](int, int, int64_t) { return 95.0; }},
        {"gpu.sm_clock", "Hz", [&](int n, int g, int64_t s) { return (hot(n, g, s) ? 1500.0 : 1980.0) * 1e6; }},
        {"gpu.power", "W", [](int, int, int64_t) { return 450.0; }},
        {"gpu.power_limit", "W", [](int, int, int64_t) { return 700.0; }},
        {"gpu.temp", "C", [&](int n, int g, int64_t s) { return hot(n, g, s) ? 88.0 : 70.0; }},
        {"gpu.clock_event.hw_thermal_slowdown", "",
         [&](int n, int g, int64_t s) { return n == 0 ? (hot(n, g, s) ? 1.0 : 0.0) : kNaN; }},
        {"gpu.clock_event_reasons", "",
         [&](int n, int g, int64_t s) { return n == 1 ? (hot(n, g, s) ? 64.0 : 0.0) : kNaN; }},
    };
    QTemporaryDir dir;
    auto db = writeRun(dir, run);
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QCOMPARE(m->gpus[2].clockEventReasons[400], static_cast<double>(kClockEventHwThermal));
    QCOMPARE(m->gpus[2].clockEventReasons[100], 0.0);
    const auto found = throttleRule(*m, RuleParams::defaults());
    QCOMPARE(found.size(), size_t(2));
    QCOMPARE(found[0].gpus, std::vector<std::string>{"node0:gpu2"});
    QCOMPARE(found[1].gpus, std::vector<std::string>{"node1:gpu0"});
    for (const Finding& f : found) {
        QCOMPARE(f.evidence.value(QStringLiteral("cause")).toString(), QStringLiteral("thermal"));
        QVERIFY(f.evidence.value(QStringLiteral("reason_bits_recorded")).toBool());
        QCOMPARE(f.evidence.value(QStringLiteral("gpus"))
                     .toArray()[0]
                     .toObject()
                     .value(QStringLiteral("reasons"))
                     .toObject()
                     .value(QStringLiteral("thermal"))
                     .toDouble(),
                 1.0);
        QCOMPARE(f.episodes.size(), size_t(1));
        QCOMPARE(f.episodes[0].startNs, kStart + 300 * kSecond);
        QCOMPARE(f.episodes[0].endNs, kStart + 900 * kSecond);
        QCOMPARE(f.severity, std::string("critical")); // 600 of 1800 s
        QVERIFY(f.confidence >= 0.9);
        QVERIFY(f.recommendation.find("fans") != std::string::npos);
    }
}

void TestRulesThrottle::noThrottle_data()
{
    QTest::addColumn<double>("mhz");
    QTest::addColumn<double>("watts");
    QTest::addColumn<int>("throttledNodes");
    QTest::newRow("equal peers") << 1980.0 << 650.0 << 1;
    QTest::newRow("every GPU alike at the power limit") << 1650.0 << 700.0 << 2;
    QTest::newRow("slower clocks well below the power limit and cool (an application clock setting)")
        << 1650.0 << 400.0 << 1;
    QTest::newRow("8 % slower at the limit (above 0.85 ×)") << 1820.0 << 700.0 << 1;
}

void TestRulesThrottle::noThrottle()
{
    QFETCH(double, mhz);
    QFETCH(double, watts);
    QFETCH(int, throttledNodes);
    ThrottleCase c;
    c.mhz = mhz;
    c.watts = watts;
    c.throttled = [=](int n, int, int64_t) { return n < throttledNodes; };
    QTemporaryDir dir;
    auto db = writeRun(dir, throttleRun(c));
    QVERIFY(db);
    auto m = metricsOf(*db);
    QVERIFY_OK(m);
    QCOMPARE(throttleRule(*m, RuleParams::defaults()).size(), size_t(0));
}

QTEST_MAIN(TestRulesThrottle)
#include "tst_rules_throttle.moc"
