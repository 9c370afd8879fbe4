#include <QTest>
// Being written.
class T : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void placeholder() { QSKIP("being written"); }
};
QTEST_MAIN(T)
#include "tst_importers_prom_text.moc"
