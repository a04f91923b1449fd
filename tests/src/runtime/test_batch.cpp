// Batches of tokens from several sequences (Session::eval_batch): a sequence's logits do not
// depend on what else is in its batch, and equal what the sequence gives alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "fixtures/stories.h"
#include "src/base/error.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"

namespace lila {
namespace {

using ggml_lite::Type;

std::vector<int32_t> reference_ids() {
    const auto doc = nlohmann::json::parse(
        test::read_file(test::shared_path("reference/stories260K_logits.json")));
    return doc["sequences"][0]["token_ids"].get<std::vector<int32_t>>();
}

int32_t argmax(const float* logits, int64_t n) {
    return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

SessionParams params(int n_seq, int64_t n_batch = 512) {
    SessionParams p;
    p.n_ctx = 128;
    p.n_seq = n_seq;
    p.n_batch = n_batch;
    p.n_threads = 2;
    return p;
}

// A sequence of the test: its prompt, the step at which it joins the batch, and the logits
// rows it got (its prompt's last token, then each greedy token).
struct Seq {
    std::vector<int32_t> prompt;
    int start;
    std::vector<std::vector<float>> rows;
};

constexpr int kGen = 6;  // greedy tokens per sequence

// Runs each sequence alone in its own session.
void run_alone(const Model& m, Seq& s) {
    Session session(m, params(1));
    const int64_t nv = m.hp.n_vocab;
    const float* l = session.eval(s.prompt);
    for (int i = 0; i <= kGen; i++) {
        s.rows.emplace_back(l, l + nv);
        const int32_t next = argmax(l, nv);
        if (i < kGen) l = session.eval({&next, 1});
    }
}

// Runs the sequences together: at its start step a sequence's whole prompt joins the batch,
// after that its greedy token of the previous step, beside whatever the others are doing.
void run_batched(const Model& m, std::vector<Seq>& seqs, int64_t n_batch) {
    Session session(m, params(static_cast<int>(seqs.size()), n_batch));
    const int64_t nv = m.hp.n_vocab;
    for (int step = 0;; step++) {
        std::vector<BatchToken> batch;
        std::vector<int> owner;  // the sequence of each logits row
        for (int i = 0; i < static_cast<int>(seqs.size()); i++) {
            Seq& s = seqs[i];
            if (step == s.start) {
                for (size_t t = 0; t < s.prompt.size(); t++) {
                    batch.push_back({s.prompt[t], i, t + 1 == s.prompt.size()});
                }
                owner.push_back(i);
            } else if (step > s.start && static_cast<int>(s.rows.size()) <= kGen) {
                batch.push_back({argmax(s.rows.back().data(), nv), i, true});
                owner.push_back(i);
            }
        }
        if (batch.empty()) break;
        const float* l = session.eval_batch(batch);
        for (size_t r = 0; r < owner.size(); r++) {
            seqs[owner[r]].rows.emplace_back(l + r * nv, l + (r + 1) * nv);
        }
    }
}

std::vector<Seq> three_sequences() {
    const std::vector<int32_t> ids = reference_ids();
    std::vector<int32_t> reversed(ids.rbegin(), ids.rend());
    std::vector<int32_t> half(ids.begin(), ids.begin() + ids.size() / 2);
    return {{ids, 0, {}}, {reversed, 0, {}}, {half, 2, {}}};
}

// The same kernels see the same rows whatever the batch: matmul results do not depend on how
// tokens are tiled (ggml-lite/kernels.h), and attention reads only the token's own sequence.
// So a sequence's logits in a batch are bit-identical to its logits alone.
TEST(Batch, EachSequenceAsAlone) {
    for (Type type : {Type::F32, Type::Q4_0, Type::Q8_0}) {
        auto m = Model::load(test::stories_model(type));
        std::vector<Seq> alone = three_sequences(), together = three_sequences();
        for (Seq& s : alone) run_alone(*m, s);
        run_batched(*m, together, 512);
        for (size_t i = 0; i < alone.size(); i++) {
            ASSERT_EQ(together[i].rows.size(), alone[i].rows.size());
            for (size_t r = 0; r < alone[i].rows.size(); r++) {
                EXPECT_EQ(together[i].rows[r], alone[i].rows[r])
                    << ggml_lite::type_name(type) << ": sequence " << i << ", row " << r;
            }
        }
    }
}

// A batch longer than n_batch runs as several passes; the results stay the same.
TEST(Batch, SplitIntoPassesOfNBatch) {
    auto m = Model::load(test::stories_model(Type::Q8_0));
    std::vector<Seq> whole = three_sequences(), split = three_sequences();
    run_batched(*m, whole, 512);
    run_batched(*m, split, 5);
    for (size_t i = 0; i < whole.size(); i++) EXPECT_EQ(split[i].rows, whole[i].rows) << i;
}

// No pass holds more tokens than the cache has cells, so the buffers are sized to that.
TEST(Batch, NBatchIsAtMostTheCacheCells) {
    auto m = Model::load(test::stories_model(Type::F32));
    EXPECT_EQ(Session(*m, params(1)).n_batch(), 128);
    EXPECT_EQ(Session(*m, params(3)).n_batch(), 384);
    EXPECT_EQ(Session(*m, params(3, 100)).n_batch(), 100);
}

// Sequences have their own positions: truncating one leaves the others alone.
TEST(Batch, SequencesHaveTheirOwnPositions) {
    auto m = Model::load(test::stories_model(Type::F32));
    Session s(*m, params(2));
    const std::vector<BatchToken> batch{{1, 0}, {2, 1}, {3, 0}, {4, 0, true}};
    s.eval_batch(batch);
    EXPECT_EQ(s.n_past(0), 3);
    EXPECT_EQ(s.n_past(1), 1);
    s.truncate(0, 1);
    EXPECT_EQ(s.n_past(0), 3);
    EXPECT_EQ(s.n_past(1), 0);
    EXPECT_THROW(s.truncate(4, 0), Error);
    EXPECT_THROW(s.truncate(0, 2), Error);
}

// A bad batch is rejected whole: no sequence moves.
TEST(Batch, RejectsBadBatchesWhole) {
    auto m = Model::load(test::stories_model(Type::F32));
    SessionParams p = params(2);
    p.n_ctx = 4;
    Session s(*m, p);
    const std::vector<BatchToken> ok{{1, 0}, {1, 1}};
    s.eval_batch(ok);
    const std::vector<BatchToken> overflow{{1, 0}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
    EXPECT_THROW(s.eval_batch(overflow), Error);
    const std::vector<BatchToken> bad_seq{{1, 0}, {1, 2}};
    EXPECT_THROW(s.eval_batch(bad_seq), Error);
    const std::vector<BatchToken> bad_id{{1, 0}, {512, 1}};
    EXPECT_THROW(s.eval_batch(bad_id), Error);
    EXPECT_EQ(s.n_past(0), 1);
    EXPECT_EQ(s.n_past(1), 1);
}

}  // namespace
}  // namespace lila
