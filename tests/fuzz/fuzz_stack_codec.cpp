// The stack sample codec (analysis/store/stack_codec.h): the samples BLOB (zstd) and the per-callsite totals
// BLOB (plain varints) decoded from any bytes must give values or an Error, never undefined behaviour or an
// allocation the bytes made up. First byte, low two bits: 0 samples BLOB as stored, 1 samples before compression
// (wrapped in a zstd frame), 2 decodeCallsiteTotals, 3 addCallsiteTotals against a callsite count taken from the
// first byte's high bits (0..63), whose sums must only grow for ids below that count.

#include "analysis/store/stack_codec.h"
#include "tests/fuzz/fuzz_codec_support.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runlens;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) return 0;
    const uint8_t mode = data[0];
    const std::string_view rest = fuzz::bytesOf(data + 1, size - 1);
    switch (mode & 3) {
    case 0:
    case 1: {
        const std::string blob = (mode & 1) ? fuzz::zstdFrame(rest) : std::string(rest);
        auto samples = store::decodeStackSamples(blob.data(), blob.size());
        if (samples) {
            // A decoded BLOB encodes and decodes to the same samples when it is in time order.
            bool sorted = true;
            for (size_t i = 1; i < samples->size() && sorted; ++i)
                sorted = (*samples)[i - 1].tsNs <= (*samples)[i].tsNs;
            bool plain = true;
            for (const store::StackSample& s : *samples)
                plain = plain && s.count >= 0 && s.callsiteId >= 0 && s.weight == s.weight;
            if (sorted && plain) {
                const std::string again = store::encodeStackSamples(*samples);
                auto back = store::decodeStackSamples(again.data(), again.size());
                if (!back || back->size() != samples->size()) fuzz::roundTripBroken("fuzz_stack_codec", "sample count");
                for (size_t i = 0; i < samples->size(); ++i) {
                    const store::StackSample &a = (*samples)[i], &b = (*back)[i];
                    if (a.tsNs != b.tsNs || a.callsiteId != b.callsiteId || a.count != b.count || a.weight != b.weight)
                        fuzz::roundTripBroken("fuzz_stack_codec", "sample");
                }
            }
        }
        break;
    }
    case 2: {
        auto totals = store::decodeCallsiteTotals(rest.data(), rest.size());
        (void)totals;
        break;
    }
    case 3: {
        const int64_t callsites = mode >> 2;
        store::CallsiteSums sums;
        (void)store::addCallsiteTotals(rest.data(), rest.size(), sums, callsites);
        if (static_cast<int64_t>(sums.samples.size()) > callsites + callsites / 2 + 1)
            fuzz::roundTripBroken("fuzz_stack_codec", "sums grew past the callsite count");
        break;
    }
    default: // mode & 3 takes no other value
        break;
    }
    return 0;
}
