// lila serve: the OpenAI-compatible API of src/serve/ over HTTP (cpp-httplib), with the chat
// page at /. The API, the scheduler and the slots know nothing of HTTP; this file only moves
// requests and responses between cpp-httplib and them.
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common.h"
#include "serve_page.h"
#include "src/base/error.h"
#include "src/chat/chat_template.h"
#include "src/serve/api.h"

namespace lila::tools {

namespace {

struct ServeArgs {
    ModelArgs model;
    SamplingArgs sampling;
    std::string host = "127.0.0.1";
    int port = 8080;
    int parallel = 4;
    int64_t batch = 512;
    int queue = 64;
    bool ignore_eos = false;
    std::string api_key, alias, template_name;
};

// How long a response waits for the scheduler before it writes a heartbeat instead: a write
// is how cpp-httplib finds that a client has gone, so this bounds how long a slot works for
// nobody (two heartbeats: the first write after a close still succeeds).
constexpr std::chrono::milliseconds kPoll(50);

void send(const serve::HttpResponse& from, httplib::Response& to) {
    to.status = from.status;
    for (const auto& [name, value] : from.headers) to.set_header(name, value);
    to.set_header("Access-Control-Allow-Origin", "*");
    to.set_content(from.body, from.content_type);
}

void stream(serve::HttpResponse r, httplib::Response& to) {
    to.status = r.status;
    for (const auto& [name, value] : r.headers) to.set_header(name, value);
    to.set_header("Access-Control-Allow-Origin", "*");
    // Shared with cpp-httplib's copy of the provider; the last owner to go cancels the task if
    // it is not finished.
    std::shared_ptr<serve::BodyStream> body = std::move(r.stream);
    to.set_chunked_content_provider(r.content_type, [body](size_t, httplib::DataSink& sink) {
        bool done = false;
        std::string chunk = body->next(kPoll, done);
        if (chunk.empty()) chunk = body->heartbeat();
        if (!sink.write(chunk.data(), chunk.size())) return false;
        if (done) sink.done();
        return true;
    });
}

void run(const ServeArgs& a) {
    // SIGINT and SIGTERM go to one thread that stops the server; every other thread (the
    // scheduler, cpp-httplib's, OpenMP's) inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    auto model = load_model(a.model);
    std::string note;
    const ChatTemplate& tmpl = pick_chat_template(model->file(), a.template_name, &note);
    if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());

    SessionParams sp = a.model.session_params();
    sp.n_seq = a.parallel;
    sp.n_batch = a.batch;
    Session session(*model, sp);
    serve::Metrics metrics;
    serve::Scheduler scheduler(session, {.max_queue = a.queue}, &metrics);

    serve::ApiParams ap;
    ap.model_id = a.alias.empty() ? model->name() : a.alias;
    ap.api_key = a.api_key;
    ap.sampling = a.sampling.params;
    ap.seed = a.sampling.seed;
    ap.ignore_eos = a.ignore_eos;
    ap.page = kServePage;
    serve::Api api(*model, scheduler, metrics, tmpl, ap);

    httplib::Server server;
    // A thread per connection that can be working or waiting at once (slots and queue), and
    // a few for /health and /metrics; more wait in cpp-httplib's queue.
    const int threads = a.parallel + a.queue + 4;
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_payload_max_length(size_t{16} << 20);
    const auto handler = [&](const httplib::Request& req, httplib::Response& res) {
        serve::HttpResponse r =
            api.handle(req.method, req.path, req.get_header_value("Authorization"), req.body);
        if (r.stream) {
            stream(std::move(r), res);
        } else {
            send(r, res);
        }
    };
    server.Get(".*", handler);
    server.Post(".*", handler);
    server.Options(".*", [](const httplib::Request&, httplib::Response& res) {
        res.set_header("Access-Control-Allow-Origin", "*");
        res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
        res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        res.status = 204;
    });

    const int port = a.port == 0 ? server.bind_to_any_port(a.host) : a.port;
    if (port < 0 || (a.port != 0 && !server.bind_to_port(a.host, a.port))) {
        throw Error("cannot listen on " + a.host + ":" + std::to_string(a.port));
    }
    scheduler.start();
    std::thread stopper([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        // Unfinished replies end with an error first, so no connection keeps the server up.
        scheduler.stop();
        server.stop();
    });
    std::fprintf(stderr,
                 "model '%s', template %s: %d slots of %lld tokens, %lld per step, queue %d\n"
                 "listening on http://%s:%d\n",
                 ap.model_id.c_str(), tmpl.name, a.parallel, (long long)session.n_ctx(),
                 (long long)a.batch, a.queue, a.host.c_str(), port);
    server.listen_after_bind();
    // listen returned: stopped by a signal, or failed; either way wake the stopper.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    std::fprintf(stderr, "stopped\n");
}

}  // namespace

void register_serve(CLI::App& app) {
    auto a = std::make_shared<ServeArgs>();
    CLI::App* cmd = app.add_subcommand(
        "serve", "serve a model over an OpenAI-compatible HTTP API, with a chat page at /");
    add_model_args(cmd, a->model);
    add_sampling_args(cmd, a->sampling);
    cmd->add_option("--host", a->host, "address to listen on");
    cmd->add_option("--port", a->port, "port to listen on (0: any free one, printed)")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--parallel", a->parallel,
                    "-np: slots, the requests evaluated together (each with -c positions)")
        ->check(CLI::Range(1, 256));
    cmd->add_option("-b,--batch-size", a->batch,
                    "tokens evaluated per step, all slots together (prompts go in chunks)")
        ->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--queue", a->queue,
                    "requests that may wait for a slot; more get 503 with Retry-After")
        ->check(CLI::Range(0, 4096));
    cmd->add_option("--api-key", a->api_key, "key clients must send (Authorization: Bearer KEY)");
    cmd->add_flag("--ignore-eos", a->ignore_eos,
                  "generate past end-of-sequence tokens unless a request says otherwise");
    cmd->add_option("-a,--alias", a->alias, "model name in the API (default: the file's)");
    cmd->add_option("--template", a->template_name,
                    "chat template (default: from the model file): " + chat_template_names());
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
