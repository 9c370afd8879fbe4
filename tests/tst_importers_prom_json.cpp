// Prometheus HTTP API JSON import (docs/formats.md §6): bad inputs that leave the run as it was, exact times,
// detection and the node, API warnings, then the real node_exporter query_range fixtures checked against an
// independent reading of their JSON. The responses of each behaviour are folders under tests/golden/prom_json.

#include "analysis/store/run_database.h"
#include "analysis/store/run_reader.h"
#include "importers/import_session.h"
#include "tests/import_support.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace runlens;
using namespace runlens::importers;
using namespace runlens::test;

namespace {

const QString kFormat = QStringLiteral("prometheus-json");
constexpr int64_t kT0 = 1700000000; // seconds; generated samples are at kT0 + offset

// {"status":"success","data":{"resultType":TYPE,"result":[RESULT]}}
QByteArray response(const QByteArray& result, const QByteArray& type = "matrix")
{
    return R"({"status":"success","data":{"resultType":")" + type + R"(","result":[)" + result + "]}}";
}
// One matrix series: labels as JSON members, values as "offset:value" pairs ("1.5:\"10\"").
QByteArray series(const QByteArray& labels, const QList<QByteArray>& values)
{
    QByteArray out = R"({"metric":{)" + labels + R"(},"values":[)";
    for (const QByteArray& v : values) {
        const qsizetype colon = v.indexOf(':');
        const double t = static_cast<double>(kT0) + v.left(colon).toDouble();
        out += (out.endsWith('[') ? "[" : ",[") + QByteArray::number(t, 'f', 3) + "," + v.mid(colon + 1) + "]";
    }
    return out + "]}";
}

// Options from "key=value" items separated by ';'.
ImportOptions optionsFrom(const QString& spec)
{
    return test::keyedOptions(spec.split(QLatin1Char(';'), Qt::SkipEmptyParts));
}

// "node|kind|device|metric" → its points as "offset=value", a missing one as "offset=?token".
QString seriesText(const std::string& dbPath, const QString& spec)
{
    const QStringList p = spec.split(QLatin1Char('|'));
    return test::pointsText(
        test::readSeries(dbPath, p.value(0), p.value(1) + QLatin1Char(':') + p.value(2), p.value(3), true),
        [](int64_t ns) { return secondsAfter(ns, kT0); }, num17);
}

const std::string kCountsSql = countsSql({"node", "device", "series", "point_chunk", "import", "diagnostic"});

// The samples of one series of a query_range response, read with Qt's JSON parser.
struct Counter
{
    std::vector<std::pair<double, double>> samples; // (seconds, value)
};
Counter readCounter(const QString& path, const QString& device)
{
    QFile f(path);
    Counter c;
    if (!f.open(QIODevice::ReadOnly)) return c;
    const QJsonArray result =
        QJsonDocument::fromJson(f.readAll())[QLatin1String("data")][QLatin1String("result")].toArray();
    for (const auto& s : result) {
        if (s[QLatin1String("metric")][QLatin1String("device")].toString() != device) continue;
        for (const auto& v : s[QLatin1String("values")].toArray())
            c.samples.emplace_back(v[0].toDouble(), v[1].toString().toDouble());
    }
    return c;
}

} // namespace

class TestPromJson : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void failures_data();
    void failures();
    void exactTimes();
    void detectionAndNode();
    void apiWarningsAsNotes();
    void fixtures_data();
    void fixtures();
};

void TestPromJson::failures_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error"); // expected in the error text, with the file:line prefix

    QTest::newRow("status error")
        << QByteArray(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: )"
                      R"(parse error: unexpected end of input"})")
        << str("prom.json:1:1: the Prometheus API returned an error (bad_data): invalid parameter \"query\": 1:5: "
               "parse error: unexpected end of input");
    QTest::newRow("status error after data")
        << QByteArray(R"({"data":{"resultType":"matrix","result":[]},"status":"error","error":"timeout"})")
        << str("returned an error (no errorType): timeout");
    QTest::newRow("empty file") << QByteArray() << str("prom.json:1:1: empty file: no JSON");
    QTest::newRow("only blanks") << QByteArray(" \n\n ") << str("empty file");
    QTest::newRow("truncated") << response(series(R"("__name__":"node_memory_MemAvailable_bytes","instance":"vm:9100")",
                                                  {"0:\"1\""}))
                                      .replace("[[", "[\n[")
                                      .chopped(5)
                               << str("prom.json:2:20: the JSON ends inside an object or array (file truncated?)");
    QTest::newRow("truncated inside a string")
        << QByteArray("{\"status\":\"success\",\n\"data\":{\"resultType\":\"matr") << str("never closed");
    QTest::newRow("garbage") << QByteArray("hello world\n") << str("prom.json:1:1: expected a JSON object");
    QTest::newRow("missing comma")
        << QByteArray("{\"status\":\"success\",\n\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{},"
                      "\n\"values\":[[1,\"1\"] [2,\"2\"]]}]}}")
        << str("prom.json:3:");
    QTest::newRow("trailing content") << response("") + "}" << str("unexpected content after the end");
    QTest::newRow("not a response") << QByteArray(R"({"foo":1})") << str("no \"data\"");
    QTest::newRow("a scalar document") << QByteArray("42") << str("expected a JSON object");
    QTest::newRow("labels endpoint") << QByteArray(R"({"status":"success","data":["__name__","job"]})")
                                     << str("\"data\" is not a query result");
    QTest::newRow("Loki streams") << response("", "streams") << str("resultType \"streams\"");
    QTest::newRow("invalid UTF-8") << QByteArray("{\"status\":\"success\",\"data\":{\"x\":\"\xff\"}}")
                                   << str("not valid UTF-8");
}

// A failed import leaves the run exactly as it was.
void TestPromJson::failures()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string dbPath = dir.filePath(QStringLiteral("run.runlens")).toStdString();
    const std::string good = test::writeFile(
        dir, QStringLiteral("good.json"),
        response(series(R"("__name__":"node_memory_MemAvailable_bytes","instance":"vm:9100")", {"0:\"1\""}))
            .toStdString());
    QCOMPARE(importWith(dbPath, good, {}).outcome, FileOutcome::Imported);
    const QStringList before = test::queryRows(dbPath, kCountsSql);

    const std::string path = test::writeFile(dir, QStringLiteral("prom.json"), json.toStdString());
    const Imported r = importWith(dbPath, path, optionsFrom(str("format=prometheus-json")));
    QCOMPARE(r.outcome, FileOutcome::Failed);
    if (!QString::fromStdString(r.error).contains(error))
        QFAIL(qPrintable(QStringLiteral("error \"%1\" lacks \"%2\"").arg(QString::fromStdString(r.error), error)));
    QCOMPARE(test::queryRows(dbPath, kCountsSql), before);
}

// Float seconds become exact nanoseconds (decimal text, not a double); other spellings to the microsecond.
void TestPromJson::exactTimes()
{
    QTemporaryDir dir;
    const QByteArray json = response(
        R"({"metric":{"__name__":"node_memory_MemAvailable_bytes","instance":"vm"},"values":[[1795941722.812,"1"],)"
        R"([1795941723.8125,"2"],[1795941724.123456789,"3"],[1795941725.1234567895,"4"],[1.7959417261e9,"5"],)"
        R"([1795941727,"6"]]})");
    const std::string path = test::writeFile(dir, QStringLiteral("t.json"), json.toStdString());
    const std::string dbPath = dir.filePath(QStringLiteral("run.runlens")).toStdString();
    QCOMPARE(importWith(dbPath, path, {}).outcome, FileOutcome::Imported);
    const QStringList expected{str("1795941722812000000"), str("1795941723812500000"), str("1795941724123456789"),
                               str("1795941725123456790"), str("1795941726100000000"), str("1795941727000000000")};
    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    auto s = reader.findSeries("vm", "host", "", "host.mem_available");
    QVERIFY(s && *s);
    auto points = reader.readPoints((**s).id, {});
    QVERIFY(points);
    QStringList got;
    for (const store::Point& p : *points)
        got << QString::number(p.tsNs);
    QCOMPARE(got, expected);
}

// Detected from its head; the node is the host label (hostname before instance, port dropped).
void TestPromJson::detectionAndNode()
{
    QTemporaryDir dir;
    const std::string dbPath = dir.filePath(QStringLiteral("run.runlens")).toStdString();
    const QByteArray a =
        response(series(R"("__name__":"node_load1","instance":"10.0.0.7:9100","job":"node")", {"0:\"1\""}));
    const QByteArray b = response(series(
        R"("Hostname":"gpu-a","__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"3","instance":"10.0.0.7:9400")", {"0:\"87\""}));
    const Imported ra = importWith(dbPath, test::writeFile(dir, str("a.json"), a.toStdString()), {});
    const Imported rb = importWith(dbPath, test::writeFile(dir, str("b.json"), b.toStdString()), {});
    QCOMPARE(ra.importer, kFormat.toStdString());
    QCOMPARE(ra.node, std::string("10.0.0.7"));
    QCOMPARE(rb.node, std::string("gpu-a"));
    QCOMPARE(rb.outcome, FileOutcome::Imported);
    QCOMPARE(seriesText(dbPath, str("gpu-a|gpu|3|gpu.util")), str("0=87"));
    QCOMPARE(test::queryRows(dbPath, "SELECT name FROM node ORDER BY name"),
             QStringList({str("10.0.0.7"), str("gpu-a")}));
    QCOMPARE(importWith(dbPath, test::writeFile(dir, str("a2.json"), a.toStdString()), {}).outcome,
             FileOutcome::AlreadyImported);
}

void TestPromJson::apiWarningsAsNotes()
{
    QTemporaryDir dir;
    const QByteArray json =
        R"({"status":"success","warnings":["partial response: store A down"],"infos":["metric might not be a counter"],)"
        R"("data":{"resultType":"matrix","result":[]}})";
    const Imported r = importWith(dir.filePath(QStringLiteral("run.runlens")).toStdString(),
                                  test::writeFile(dir, str("w.json"), json.toStdString()), {});
    QCOMPARE(r.outcome, FileOutcome::Imported);
    const QStringList notes = [&] {
        QStringList out;
        for (const std::string& n : r.result.notes)
            out << QString::fromStdString(n);
        return out;
    }();
    QVERIFY2(notes.contains(str("Prometheus warning: partial response: store A down")),
             qPrintable(notes.join(QLatin1Char('\n'))));
    QVERIFY2(notes.contains(str("Prometheus info: metric might not be a counter")),
             qPrintable(notes.join(QLatin1Char('\n'))));
    QVERIFY2(notes.contains(str("0 series")), qPrintable(notes.join(QLatin1Char('\n'))));
}

void TestPromJson::fixtures_data()
{
    QTest::addColumn<QString>("run");
    QTest::addColumn<int>("minBursts");  // runs of disk.write > 500 MB/s on vda
    QTest::addColumn<double>("minLoTx"); // peak net.tx on lo, bytes/s
    QTest::newRow("h200-gloo-small") << str("h200-gloo-small") << 3 << 0.0;
    QTest::newRow("h200x2-fsdp-hang") << str("h200x2-fsdp-hang") << 0 << 1e9;
}

// Every prometheus/*.json of the real runs imports as node vm; the stored disk.write rate integrates to the
// counter's increase read independently from the JSON.
void TestPromJson::fixtures()
{
    QFETCH(QString, run);
    QFETCH(int, minBursts);
    QFETCH(double, minLoTx);
    if (test::fixturesDir().isEmpty()) QSKIP("../shared/fixtures is absent: real Prometheus captures not tested");
    const QString folder = test::fixturesDir() + QLatin1Char('/') + run + QStringLiteral("/prometheus");
    const QStringList files = QDir(folder).entryList({str("*.json")}, QDir::Files, QDir::Name);
    QVERIFY2(files.size() >= 5, qPrintable(folder));
    QTemporaryDir dir;
    const std::string dbPath = dir.filePath(QStringLiteral("run.runlens")).toStdString();
    for (const QString& f : files) {
        const Imported r = importWith(dbPath, (folder + QLatin1Char('/') + f).toStdString(), {});
        QVERIFY2(r.outcome == FileOutcome::Imported,
                 (f + QStringLiteral(": ") + QString::fromStdString(r.error)).toUtf8());
        QCOMPARE(r.importer, kFormat.toStdString());
        QCOMPARE(r.node, std::string("vm"));
        QCOMPARE(r.result.diagnostics.dataLoss(), int64_t(0));
    }
    QCOMPARE(test::queryRows(dbPath, "SELECT DISTINCT node FROM series_summary"), QStringList{str("vm")});
    QCOMPARE(test::queryRows(dbPath, "SELECT count(*) FROM series_summary WHERE metric = 'cpu.util'"),
             QStringList{str("1")});

    auto db = store::RunDatabase::open(dbPath, store::OpenMode::ReadOnly);
    QVERIFY(db);
    store::RunReader reader(**db);
    auto read = [&](const char* kind, const char* device, const char* metric) {
        auto s = reader.findSeries("vm", kind, device, metric);
        std::vector<store::Point> out;
        if (s && *s)
            if (auto p = reader.readPoints((**s).id, {})) out = std::move(*p);
        return out;
    };

    const Counter c = readCounter(folder + QStringLiteral("/node_disk_written_bytes_total.json"), str("vda"));
    QVERIFY(c.samples.size() > 10);
    double increase = 0;
    for (size_t i = 1; i < c.samples.size(); ++i) {
        const double d = c.samples[i].second - c.samples[i - 1].second;
        increase += d < 0 ? c.samples[i].second : d;
    }
    const std::vector<store::Point> write = read("disk", "vda", "disk.write");
    QCOMPARE(write.size(), c.samples.size() - 1);
    // The mean rate over time (each rate weighted by its interval: scrapes are 1 s apart give or take a few ms)
    // times the seconds covered.
    double weighted = 0;
    for (size_t i = 0; i < write.size(); ++i)
        weighted += write[i].value * (c.samples[i + 1].first - c.samples[i].first);
    const double covered = c.samples.back().first - c.samples.front().first;
    const double integrated = weighted / covered * covered;
    QVERIFY2(std::fabs(integrated - increase) <= 1e-6 * increase,
             qPrintable(QStringLiteral("%1 vs %2").arg(integrated, 0, 'f', 3).arg(increase, 0, 'f', 3)));

    int bursts = 0;
    bool inBurst = false;
    for (const store::Point& p : write) {
        if (p.value > 500e6 && !inBurst) ++bursts;
        inBurst = p.value > 500e6;
    }
    QVERIFY2(bursts >= minBursts, qPrintable(QString::number(bursts)));

    const std::vector<store::Point> lo = read("nic", "lo", "net.tx");
    QVERIFY(!lo.empty());
    double peak = 0;
    for (const store::Point& p : lo)
        peak = std::max(peak, p.value);
    QVERIFY2(peak > minLoTx, qPrintable(QString::number(peak)));
}

QTEST_MAIN(TestPromJson)
#include "tst_importers_prom_json.moc"
