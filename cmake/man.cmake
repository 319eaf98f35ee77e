# Man pages, built from markdown with pandoc at build time (MH_MAN=ON, the
# default): memhist.1 (tools/memhist.1.md, the CLI) and memhist.3
# (src/memhist.3.md, the library). The footer carries the project's version
# so a page cannot lag behind a version bump.
if(MH_MAN)
  find_program(MH_PANDOC pandoc)
  if(NOT MH_PANDOC)
    message(FATAL_ERROR "pandoc not found: it builds the man pages memhist.1 and memhist.3 "
            "(tools/scripts/deps.sh installs it; apt-get install pandoc). "
            "Configure with -DMH_MAN=OFF to build and install without them.")
  endif()
endif()

# mh_man_page(SOURCE SECTION): builds NAME.SECTION (NAME = SOURCE's name
# without .SECTION.md) into the current binary directory and installs it in
# share/man/manSECTION. Does nothing with MH_MAN=OFF.
function(mh_man_page source section)
  if(NOT MH_MAN)
    return()
  endif()
  get_filename_component(file ${source} NAME)
  string(REGEX REPLACE "\\.md$" "" page ${file})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${page})
  add_custom_command(OUTPUT ${out}
    COMMAND ${MH_PANDOC} -s -t man -V "footer=memhist ${PROJECT_VERSION}" -o ${out} ${source}
    DEPENDS ${source}
    COMMENT "pandoc: ${page}"
    VERBATIM)
  string(REPLACE "." "_" target man_${page})
  add_custom_target(${target} ALL DEPENDS ${out})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endfunction()
