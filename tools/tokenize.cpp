// lila tokenize: how a model's tokenizer splits a text.
#include <cstdio>

#include "common.h"
#include "src/base/error.h"

namespace lila::tools {

namespace {

struct TokenizeArgs {
    std::string model, prompt, file;
    bool ids_only = false, no_bos = false, special = false;
};

void run(const TokenizeArgs& a) {
    const std::string text = a.file.empty() ? a.prompt : read_utf8_file(a.file);
    require_utf8(text, "the text");
    // Only the vocabulary is needed, but a full load also validates the file.
    auto model = Model::load(a.model);
    const Tokenizer& tok = model->tokenizer();
    const std::vector<int32_t> ids = tok.encode(text, tok.vocab().add_bos && !a.no_bos, a.special);
    if (a.ids_only) {
        std::string out = "[";
        for (size_t i = 0; i < ids.size(); i++) out += (i ? ", " : "") + std::to_string(ids[i]);
        std::printf("%s]\n", out.c_str());
        return;
    }
    for (int32_t id : ids) {
        std::printf("%6d -> '%s'\n", id, tok.token_to_piece(id, true).c_str());
    }
}

}  // namespace

void register_tokenize(CLI::App& app) {
    auto a = std::make_shared<TokenizeArgs>();
    CLI::App* cmd = app.add_subcommand("tokenize", "print the tokens of a text");
    cmd->add_option("-m,--model", a->model, "model file (GGUF)")->required();
    auto* p = cmd->add_option("-p,--prompt", a->prompt, "text to tokenize");
    auto* f = cmd->add_option("-f,--file", a->file, "file to tokenize")->excludes(p);
    p->excludes(f);
    cmd->add_flag("--ids", a->ids_only, "print only the ids, as a JSON array");
    cmd->add_flag("--no-bos", a->no_bos, "do not add BOS");
    cmd->add_flag("--special", a->special, "parse special-token text into special tokens");
    // An empty text is a text (it has no tokens): only a missing one is an error.
    cmd->callback([a, p, f] {
        if (p->count() == 0 && f->count() == 0) throw Error("tokenize: give -p TEXT or -f FILE");
        run(*a);
    });
}

}  // namespace lila::tools
