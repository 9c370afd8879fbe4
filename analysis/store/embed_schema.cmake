# Writes schema.sql into a C++ source as a raw string literal.
file(READ ${IN} SQL)
file(WRITE ${OUT} "// Generated from schema.sql; do not edit.\n"
    "namespace runlens::store {\nconst char* schemaSql()\n{\n    return R\"runlens_sql(${SQL})runlens_sql\";\n}\n}\n")
