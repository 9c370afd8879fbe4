# Writes resources/rules/defaults.params (IN) into a C++ source (OUT) as a raw string literal.
file(READ "${IN}" text)
string(FIND "${text}" ")runlens_params\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "defaults.params contains the literal delimiter )runlens_params\"")
endif()
file(WRITE "${OUT}" "// Generated from resources/rules/defaults.params by embed_rule_defaults.cmake; do not edit.\n"
    "#include <string_view>\n\n"
    "namespace runlens::analysis::detail {\n\n"
    "std::string_view embeddedRuleDefaults()\n{\n    return R\"runlens_params(${text})runlens_params\";\n}\n\n"
    "} // namespace runlens::analysis::detail\n")
