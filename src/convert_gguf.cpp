#include <memory>

#include "convert.h"
#include "quantize.h"

namespace lila {

void requantize_gguf(const std::string& in, const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress) {
    std::shared_ptr<const GGUFFile> src = GGUFFile::open(in);
    GGUFWriter gw;
    for (const auto& [key, value] : src->metadata()) gw.set(key, value);
    gw.set("general.file_type", GGUFValue::u32(gguf_file_type(opts.type)));
    if (!opts.name.empty()) gw.set("general.name", GGUFValue::string(opts.name));

    for (const GGUFTensorInfo& t : src->tensors()) {
        const ggml_lite::Type type = storage_type(opts.type, t.shape);
        const int n_threads = opts.n_threads;
        gw.add_tensor(t.name, type, t.shape, [src, &t, type, n_threads](std::vector<uint8_t>& bytes) {
            if (type == t.type) {
                const auto* p = static_cast<const uint8_t*>(t.data);
                bytes.assign(p, p + t.nbytes);
                return;
            }
            const int64_t cols = t.shape[0], rows = t.n_elements() / cols;
            std::vector<float> f(t.n_elements());
            ggml_lite::traits(t.type).to_float(t.data, f.data(), t.n_elements());
            quantize_rows(f.data(), type, rows, cols, n_threads, bytes);
        });
    }
    gw.write(out, progress);
}

}  // namespace lila
