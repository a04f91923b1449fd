// Continuous batching with the real stories260K model, stepped by hand so every test is
// deterministic: each request's text is what it gives alone, slots keep their prefix,
// cancellation frees a slot at the next step, the queue is bounded.
#include <gtest/gtest.h>

#include "fixtures/stories.h"
#include "src/runtime/model.h"
#include "src/serve/scheduler.h"

namespace lila::serve {
namespace {

using ggml_lite::Type;
using std::chrono::milliseconds;

const Model& model() {
    static const auto m = Model::load(test::stories_model(Type::Q8_0));
    return *m;
}

SessionParams session_params(int slots, int64_t n_batch = 64) {
    SessionParams p;
    p.n_ctx = 256;
    p.n_seq = slots;
    p.n_batch = n_batch;
    p.n_threads = 2;
    return p;
}

Job job(const std::string& prompt, int64_t max_tokens, uint64_t seed = 0, float temp = 0) {
    Job j;
    j.prompt = model().tokenizer().encode(prompt, true, false);
    j.max_tokens = max_tokens;
    j.sampling.temp = temp;
    j.sampling.seed = seed;
    return j;
}

struct Result {
    std::string text, finish;
    Usage usage;
};

Result collect(Task& t) {
    Result r;
    for (;;) {
        Task::Progress p = t.take(milliseconds(0));
        r.text += p.text;
        if (p.done) {
            r.finish = p.finish;
            r.usage = p.usage;
            EXPECT_EQ(p.error, "");
            return r;
        }
    }
}

// Runs the jobs on a scheduler with `slots` slots until all are done.
std::vector<Result> run(const std::vector<Job>& jobs, int slots, int64_t n_batch = 64) {
    Session session(model(), session_params(slots, n_batch));
    Scheduler sched(session, {});
    std::vector<std::shared_ptr<Task>> tasks;
    for (const Job& j : jobs) {
        tasks.push_back(std::make_shared<Task>(j));
        EXPECT_TRUE(sched.submit(tasks.back()));
    }
    while (sched.step()) {
    }
    std::vector<Result> out;
    for (auto& t : tasks) out.push_back(collect(*t));
    return out;
}

// The reference: the prompt, then greedy tokens, through a plain one-sequence session; the
// tokens go to `ids` when given.
std::string greedy_alone(const Job& j, std::vector<int32_t>* ids = nullptr) {
    Session s(model(), session_params(1));
    const Tokenizer& tok = model().tokenizer();
    Sampler sampler(j.sampling, tok.n_vocab());
    StreamDecoder dec(tok);
    std::vector<float> logits(tok.n_vocab());
    const float* l = s.eval(j.prompt);
    std::string text;
    for (int64_t n = 0; n < j.max_tokens; n++) {
        std::copy(l, l + logits.size(), logits.begin());
        const int32_t id = sampler.sample(logits.data());
        if (tok.is_eog(id) || id == tok.vocab().bos) break;
        if (ids) ids->push_back(id);
        text += dec.push(id);
        l = s.eval({&id, 1});
    }
    return text + dec.flush();
}

const std::vector<std::string> kPrompts = {"Once upon a time", "The cat", "Lily and Tom went",
                                           "One day, a little bird", "The sun was"};

TEST(Scheduler, EachRequestAsAlone) {
    std::vector<Job> jobs;
    for (const std::string& p : kPrompts) jobs.push_back(job(p, 40));
    // More requests than slots: they wait in the queue and join as slots free up.
    const std::vector<Result> got = run(jobs, 2);
    for (size_t i = 0; i < jobs.size(); i++) {
        EXPECT_EQ(got[i].text, greedy_alone(jobs[i])) << kPrompts[i];
        EXPECT_EQ(got[i].usage.prompt_tokens, static_cast<int64_t>(jobs[i].prompt.size()));
        EXPECT_GT(got[i].usage.completion_tokens, 0);
    }
}

// Prompts longer than a step's budget are read in chunks, between the other slots' tokens.
TEST(Scheduler, PromptsInChunks) {
    std::vector<Job> jobs;
    for (const std::string& p : kPrompts) jobs.push_back(job(p + " " + p + " " + p, 20));
    const std::vector<Result> small = run(jobs, 3, 4), large = run(jobs, 3, 512);
    for (size_t i = 0; i < jobs.size(); i++) {
        EXPECT_EQ(small[i].text, large[i].text) << i;
        EXPECT_EQ(small[i].text, greedy_alone(jobs[i])) << i;
    }
}

// Sampling with a seed gives the same text whatever else is being generated beside it.
TEST(Scheduler, SeedsReproduceAcrossBatches) {
    const Job sampled = job("Once upon a time", 30, 1234, 0.9f);
    const std::string alone = run({sampled}, 1)[0].text;
    std::vector<Job> crowd{job("The cat", 30), sampled, job("The sun was", 30, 7, 1.0f)};
    EXPECT_EQ(run(crowd, 3)[1].text, alone);
    EXPECT_NE(run({job("Once upon a time", 30, 4321, 0.9f)}, 1)[0].text, alone);
}

TEST(Scheduler, FinishReasons) {
    Job limited = job("Once upon a time", 3);
    limited.ignore_eos = true;
    const Result r = run({limited}, 1)[0];
    EXPECT_EQ(r.finish, "length");
    EXPECT_EQ(r.usage.completion_tokens, 3);

    // Without a limit, a reply ends when the context is full: all 256 positions hold tokens,
    // and the last token, sampled from the last position's logits, needs none.
    Job forever = job("Once upon a time", 0);
    forever.ignore_eos = true;
    const Result full = run({forever}, 1)[0];
    EXPECT_EQ(full.finish, "length");
    EXPECT_EQ(full.usage.prompt_tokens + full.usage.completion_tokens, 257);

    // A stop token (an end-of-sequence token, a template's end-of-turn marker) ends it and is
    // not sent.
    Job marked = job("Once upon a time", 40);
    std::vector<int32_t> ids;
    greedy_alone(marked, &ids);
    marked.stop_tokens = {ids[5]};
    const size_t first = std::find(ids.begin(), ids.end(), ids[5]) - ids.begin();
    const Result stopped = run({marked}, 1)[0];
    EXPECT_EQ(stopped.finish, "stop");
    EXPECT_EQ(stopped.usage.completion_tokens, static_cast<int64_t>(first));
    StreamDecoder dec(model().tokenizer());
    std::string want;
    for (size_t i = 0; i < first; i++) want += dec.push(ids[i]);
    EXPECT_EQ(stopped.text, want + dec.flush());
}

// A stop string ends the reply and is never sent, even when it spans tokens.
TEST(Scheduler, StopStrings) {
    const Job plain = job("Once upon a time", 40);
    const std::string text = greedy_alone(plain);
    ASSERT_GT(text.size(), 30u);
    // A stretch from the middle of the text: it starts and ends inside tokens.
    const std::string stop = text.substr(12, 9);
    Job stopped = plain;
    stopped.stop = {"never seen", stop};
    const Result r = run({stopped}, 1)[0];
    EXPECT_EQ(r.finish, "stop");
    EXPECT_EQ(r.text, text.substr(0, text.find(stop)));
}

// A request goes to the free slot that shares the longest prefix with it, and only the rest
// of its prompt is evaluated.
TEST(Scheduler, SlotsKeepTheirPrefix) {
    Session session(model(), session_params(2));
    Scheduler sched(session, {});
    auto first = std::make_shared<Task>(job("Once upon a time, there was a little girl", 5));
    auto other = std::make_shared<Task>(job("The cat sat on the mat", 5));
    sched.submit(first);
    sched.submit(other);
    while (sched.step()) {
    }
    collect(*first);
    collect(*other);
    auto next = std::make_shared<Task>(job("Once upon a time, there was a little girl named", 5));
    sched.submit(next);
    while (sched.step()) {
    }
    const Result r = collect(*next);
    EXPECT_EQ(r.usage.cached_tokens, static_cast<int64_t>(first->job().prompt.size()));
    EXPECT_EQ(r.text, greedy_alone(next->job()));
}

// A cancelled request leaves its slot at the next step, during its prompt as during its reply.
TEST(Scheduler, CancelFreesTheSlotAtTheNextStep) {
    Session session(model(), session_params(1, 4));
    Scheduler sched(session, {});
    auto reading = std::make_shared<Task>(job("Once upon a time, there was a little girl", 50));
    sched.submit(reading);
    sched.step();
    ASSERT_EQ(sched.status().busy, 1);
    reading->cancel();
    sched.step();
    EXPECT_EQ(sched.status().busy, 0);
    EXPECT_EQ(collect(*reading).finish, "cancelled");

    Job endless = job("Once", 0);
    endless.ignore_eos = true;
    auto writing = std::make_shared<Task>(endless);
    sched.submit(writing);
    for (int i = 0; i < 5; i++) sched.step();
    EXPECT_FALSE(writing->take(milliseconds(0)).text.empty());
    writing->cancel();
    sched.step();
    EXPECT_EQ(sched.status().busy, 0);
    EXPECT_EQ(sched.status().queued, 0);
}

TEST(Scheduler, QueueIsBounded) {
    Session session(model(), session_params(1));
    Scheduler sched(session, {.max_queue = 1});
    std::vector<std::shared_ptr<Task>> tasks;
    for (int i = 0; i < 3; i++) tasks.push_back(std::make_shared<Task>(job("The cat", 3)));
    // One free slot and one place in the queue.
    EXPECT_TRUE(sched.submit(tasks[0]));
    EXPECT_TRUE(sched.submit(tasks[1]));
    EXPECT_FALSE(sched.submit(tasks[2]));
    sched.step();
    EXPECT_EQ(sched.status().busy, 1);
    EXPECT_EQ(sched.status().queued, 1);
    EXPECT_FALSE(sched.submit(tasks[2]));  // the slot is taken, the queue full
    while (sched.step()) {
    }
    EXPECT_TRUE(sched.submit(tasks[2]));
}

// The scheduler's own thread does the same work as stepping by hand.
TEST(Scheduler, RunsOnItsThread) {
    Session session(model(), session_params(2));
    Scheduler sched(session, {});
    sched.start();
    std::vector<std::shared_ptr<Task>> tasks;
    for (const std::string& p : kPrompts) {
        tasks.push_back(std::make_shared<Task>(job(p, 20)));
        ASSERT_TRUE(sched.submit(tasks.back()));
    }
    for (size_t i = 0; i < tasks.size(); i++) {
        std::string text;
        for (;;) {
            Task::Progress p = tasks[i]->take(milliseconds(100));
            text += p.text;
            if (p.done) break;
        }
        EXPECT_EQ(text, greedy_alone(tasks[i]->job())) << kPrompts[i];
    }
}

}  // namespace
}  // namespace lila::serve
