// The real trained reference model (llama2.c stories260K), converted once per test process.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ggml-lite/type.h"
#include "src/llama2c.h"
#include "test_util.h"

namespace lila::test {

inline std::string stories_checkpoint() {
    return shared_path("models/stories260K.bin");
}
inline std::string stories_tokenizer() {
    return shared_path("models/tok512.bin");
}

// Path of stories260K converted to `type` (F32 is exact: the checkpoint is float32).
inline const std::string& stories_model(ggml_lite::Type type) {
    static TempDir dir;
    static std::map<ggml_lite::Type, std::string> paths;
    auto it = paths.find(type);
    if (it != paths.end()) return it->second;
    const std::string out =
        dir.path(std::string("stories260K-") + ggml_lite::type_name(type) + ".gguf");
    ConvertOptions opts;
    opts.type = type;
    convert_llama2c(stories_checkpoint(), stories_tokenizer(), out, opts);
    return paths[type] = out;
}

}  // namespace lila::test
