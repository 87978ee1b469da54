# Script mode helper of occ_embed_file(): writes the file as a raw byte array (no string
# literal length limits, any content allowed).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR n_bytes "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT_H}" "#pragma once\n#include <string_view>\nextern const std::string_view ${SYMBOL};\n")
file(WRITE "${OUT_CC}" "#include \"${SYMBOL}.h\"\nnamespace {\nconstexpr char kData[] = {\n${body}\n0};\n}  // namespace\nconst std::string_view ${SYMBOL}(kData, ${n_bytes});\n")
