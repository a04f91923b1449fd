# Checks that every include in src/ and ggml-lite/ points down the layers (docs/DEVELOPING.md):
#
#   tools/ -> serve/ -> chat/ eval/ convert/ -> runtime/ -> tokenizer/ -> io/ -> base/ -> ggml-lite/
#
# A folder may include its own files and those of the folders below it; chat, eval and convert
# are siblings and do not include each other; serve (the server without its HTTP) builds on
# chat; ggml-lite knows nothing of src/ or tools/. Every file of src/ lives in a layer folder
# and names its includes from the project root ("src/io/gguf.h"), so the check sees every edge. Run by ctest as `layers`:
#   cmake -DROOT=<project root> -P cmake/check_layers.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT)
    message(FATAL_ERROR "usage: cmake -DROOT=<project root> -P check_layers.cmake")
endif()

set(below_base "")
set(below_io base)
set(below_tokenizer base io)
set(below_runtime base io tokenizer)
set(below_chat base io tokenizer runtime)
set(below_eval base io tokenizer runtime)
set(below_convert base io tokenizer runtime)
set(below_serve base io tokenizer runtime chat)
set(layers base io tokenizer runtime chat eval convert serve)

set(problems "")
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.h ${ROOT}/src/*.cpp
     ${ROOT}/ggml-lite/*.h ${ROOT}/ggml-lite/*.cpp)
foreach(f ${files})
    file(STRINGS ${ROOT}/${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    if(f MATCHES "^ggml-lite/")
        foreach(line ${includes})
            if(line MATCHES "\"(src|tools)/")
                list(APPEND problems "${f}: ggml-lite includes ${CMAKE_MATCH_1}/ (${line})")
            endif()
        endforeach()
        continue()
    endif()
    if(NOT f MATCHES "^src/([^/]+)/")
        list(APPEND problems "${f}: not in a layer folder of src/ (${layers})")
        continue()
    endif()
    set(layer ${CMAKE_MATCH_1})
    if(NOT layer IN_LIST layers)
        list(APPEND problems "${f}: src/${layer}/ is not a layer (${layers})")
        continue()
    endif()
    foreach(line ${includes})
        string(REGEX MATCH "\"([^\"]*)\"" _ "${line}")
        set(target ${CMAKE_MATCH_1})
        if(target MATCHES "^ggml-lite/")
            continue()
        elseif(target MATCHES "^src/([^/]+)/")
            set(to ${CMAKE_MATCH_1})
            if(NOT to STREQUAL layer AND NOT to IN_LIST below_${layer})
                list(APPEND problems "${f} includes ${target}: ${layer}/ may include only ${layer}/ ${below_${layer}} and ggml-lite/")
            endif()
        else()
            list(APPEND problems "${f} includes \"${target}\": name it from the project root (src/LAYER/...)")
        endif()
    endforeach()
endforeach()

if(problems)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR "includes against the layers:\n  ${text}")
endif()
list(LENGTH files n)
message(STATUS "layers: ${n} files of src/ and ggml-lite/ include only downwards")
