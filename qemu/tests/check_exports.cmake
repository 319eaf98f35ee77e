# The plugin must export exactly qemu_plugin_version and qemu_plugin_install:
# anything else could collide with qemu's or another plugin's symbols.
execute_process(COMMAND nm -D --defined-only ${PLUGIN}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${PLUGIN}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${out}")
set(names "")
foreach(l IN LISTS lines)
  string(REGEX REPLACE "^.* " "" name "${l}")
  list(APPEND names ${name})
endforeach()
list(SORT names)
if(NOT names STREQUAL "qemu_plugin_install;qemu_plugin_version")
  message(FATAL_ERROR "plugin exports '${names}', expected only qemu_plugin_install;qemu_plugin_version")
endif()
message(STATUS "exports: ${names}")
