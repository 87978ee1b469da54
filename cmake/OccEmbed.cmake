# occ_embed_file(<target> <input> <symbol>): generates <symbol>.h/.cc defining
#   extern const std::string_view <symbol>;
# holding the file's bytes, and adds them to <target>. Used to compile the architecture table
# (text proto) and the SQL schema into the binaries: no file lookup at run time.
function(occ_embed_file target input symbol)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/embedded")
  set(out_cc "${out_dir}/${symbol}.cc")
  set(out_h "${out_dir}/${symbol}.h")
  add_custom_command(
    OUTPUT "${out_cc}" "${out_h}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUT_CC=${out_cc} -DOUT_H=${out_h} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/OccEmbedScript.cmake"
    DEPENDS "${input}" "${PROJECT_SOURCE_DIR}/cmake/OccEmbedScript.cmake"
    COMMENT "Embedding ${input} as ${symbol}")
  target_sources(${target} PRIVATE "${out_cc}" "${out_h}")
  target_include_directories(${target} PUBLIC "${out_dir}")
endfunction()
