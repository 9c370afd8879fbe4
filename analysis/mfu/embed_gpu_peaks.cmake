# Writes resources/gpus/peaks.tsv (IN) into a C++ source (OUT) as a raw string literal.
file(READ "${IN}" text)
string(FIND "${text}" ")runlens_peaks\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "peaks.tsv contains the literal delimiter )runlens_peaks\"")
endif()
file(WRITE "${OUT}" "// Generated from resources/gpus/peaks.tsv by embed_gpu_peaks.cmake; do not edit.\n"
    "#include <string_view>\n\n"
    "namespace runlens::analysis::detail {\n\n"
    "std::string_view embeddedGpuPeaks()\n{\n    return R\"runlens_peaks(${text})runlens_peaks\";\n}\n\n"
    "} // namespace runlens::analysis::detail\n")
