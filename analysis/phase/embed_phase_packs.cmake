# Writes the phase packs (DIR/<name>.phases for each name in the comma-separated PACKS) into a C++ source as raw
# string literals, in the order given.
string(REPLACE "," ";" names "${PACKS}")
set(body "")
foreach(name IN LISTS names)
    file(READ "${DIR}/${name}.phases" text)
    string(FIND "${text}" ")runlens_pack\"" clash)
    if(NOT clash EQUAL -1)
        message(FATAL_ERROR "${name}.phases contains the literal delimiter )runlens_pack\"")
    endif()
    string(APPEND body "    {\"${name}\", R\"runlens_pack(${text})runlens_pack\"},\n")
endforeach()
file(WRITE "${OUT}" "// Generated from resources/phases/*.phases by embed_phase_packs.cmake; do not edit.\n"
    "#include \"analysis/phase/embedded_packs.h\"\n\n"
    "namespace runlens::analysis::detail {\n\n"
    "namespace {\nconstexpr EmbeddedPack kPacks[] = {\n${body}};\n}\n\n"
    "std::span<const EmbeddedPack> embeddedPhasePacks()\n{\n    return kPacks;\n}\n\n"
    "} // namespace runlens::analysis::detail\n")
