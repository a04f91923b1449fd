#include "src/eval/perplexity.h"

#include <algorithm>
#include <cmath>

#include "src/base/error.h"

namespace lila {

double log_prob(const float* logits, int64_t n_vocab, int32_t target) {
    const float max = *std::max_element(logits, logits + n_vocab);
    double sum = 0;
    for (int64_t i = 0; i < n_vocab; i++) sum += std::exp(double(logits[i]) - max);
    return double(logits[target]) - max - std::log(sum);
}

PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens,
                            const PerplexityParams& params, const PerplexityCallbacks& cb) {
    const int64_t n_ctx = params.n_ctx, n_vocab = model.hp.n_vocab;
    const int64_t n_tokens = static_cast<int64_t>(tokens.size());
    if (n_ctx < 4) throw Error("perplexity needs a context of at least 4 tokens");
    if (n_tokens < 2 * n_ctx) {
        throw Error("the text has " + std::to_string(n_tokens) +
                    " tokens; perplexity with a context of " + std::to_string(n_ctx) +
                    " needs at least " + std::to_string(2 * n_ctx));
    }
    const int64_t max_chunks = n_tokens / n_ctx;
    const int64_t n_chunks =
        params.n_chunks < 0 ? max_chunks : std::min(params.n_chunks, max_chunks);
    const int64_t first = n_ctx / 2;
    const Vocab& vocab = model.tokenizer().vocab();

    SessionParams sp = params.session;
    sp.n_ctx = n_ctx;
    Session session(model, sp);

    PerplexityResult r;
    double nll = 0, nll2 = 0;
    std::vector<int32_t> chunk(n_ctx);
    for (int64_t c = 0; c < n_chunks; c++) {
        const int32_t* start = tokens.data() + c * n_ctx;
        std::copy(start, start + n_ctx, chunk.begin());
        if (vocab.add_bos && vocab.bos >= 0) chunk[0] = vocab.bos;

        session.truncate(0);
        // Logits only for the scored half: row j - first predicts token j+1 of the original
        // text (not the BOS-replaced copy).
        const float* logits = session.eval_from(chunk, first);
        for (int64_t j = first; j < n_ctx - 1; j++) {
            const float* row = logits + (j - first) * n_vocab;
            const double lp = log_prob(row, n_vocab, start[j + 1]);
            nll -= lp;
            nll2 += lp * lp;
            r.n_scored++;
            if (cb.on_token) cb.on_token(row, start[j + 1]);
        }
        r.ppl = std::exp(nll / r.n_scored);
        r.running.push_back(r.ppl);
        // llama.cpp's uncertainty: the standard error of the mean NLL, scaled by PPL.
        const double mean = nll / r.n_scored, var = nll2 / r.n_scored - mean * mean;
        r.ppl_err = var > 0 && r.n_scored > 1 ? std::sqrt(var / (r.n_scored - 1)) * r.ppl : 0;
        if (cb.on_chunk) cb.on_chunk(c, n_chunks, r);
    }
    return r;
}

}  // namespace lila
