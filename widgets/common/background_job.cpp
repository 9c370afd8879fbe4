#include "widgets/common/background_job.h"

#include <QCoreApplication>
#include <new>

namespace runlens::widgets {

QString jobFailureText(const std::exception_ptr& error)
{
    try {
        std::rethrow_exception(error);
    } catch (const std::bad_alloc&) {
        return QCoreApplication::translate("BackgroundJob", "out of memory");
    } catch (const std::exception& e) {
        return QCoreApplication::translate("BackgroundJob", "internal error: %1").arg(QString::fromUtf8(e.what()));
    } catch (...) {
        return QCoreApplication::translate("BackgroundJob", "internal error");
    }
}

} // namespace runlens::widgets
