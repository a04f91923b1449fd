// lila serve driven by the official OpenAI client library (npm `openai`), as users drive it.
// Run by tests/tools/test_serve.cpp: LILA_URL (the server's /v1), LILA_KEY, LILA_NPM_DIR (where
// npm installed the package). Exits non-zero, saying what differed, on the first failure.
"use strict";
const assert = require("node:assert/strict");
const path = require("node:path");
const OpenAI = require(path.join(process.env.LILA_NPM_DIR, "node_modules", "openai"));

const client = new OpenAI({ baseURL: process.env.LILA_URL, apiKey: process.env.LILA_KEY });
const chat = { model: "stories", temperature: 0, max_tokens: 24,
               messages: [{ role: "user", content: "Tell me a story." }] };

async function cancelled() {
  const res = await fetch(process.env.LILA_URL.replace(/\/v1$/, "/metrics"),
                          { headers: { Authorization: "Bearer " + process.env.LILA_KEY } });
  const m = /lila_requests_finished_total\{reason="cancelled"\} (\d+)/.exec(await res.text());
  return m ? Number(m[1]) : 0;
}

async function main() {
  const models = await client.models.list();
  assert.equal(models.data[0].id, "stories");

  const whole = await client.chat.completions.create(chat);
  const text = whole.choices[0].message.content;
  assert.ok(text.length > 0);
  assert.equal(whole.usage.completion_tokens, 24);

  // Streamed, the deltas make the same text.
  const stream = await client.chat.completions.create({ ...chat, stream: true,
                                                        stream_options: { include_usage: true } });
  let streamed = "", usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length) streamed += chunk.choices[0].delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(streamed, text);
  assert.equal(usage.completion_tokens, 24);

  // A seed gives the same text; stop strings are never sent.
  const sampled = { model: "stories", prompt: "Once upon a time", max_tokens: 30,
                    temperature: 1, seed: 7 };
  const a = (await client.completions.create(sampled)).choices[0].text;
  assert.equal((await client.completions.create(sampled)).choices[0].text, a);
  const stop = a.slice(8, 13);
  const cut = await client.completions.create({ ...sampled, stop: [stop] });
  assert.equal(cut.choices[0].text, a.slice(0, a.indexOf(stop)));
  assert.equal(cut.choices[0].finish_reason, "stop");

  // Errors arrive as the library's typed errors.
  const bad = new OpenAI({ baseURL: process.env.LILA_URL, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(bad.models.list(), OpenAI.AuthenticationError);
  await assert.rejects(client.chat.completions.create({ ...chat, model: "gpt-4o" }),
                       OpenAI.NotFoundError);
  await assert.rejects(client.chat.completions.create({ ...chat, max_tokens: -1 }),
                       (e) => e instanceof OpenAI.BadRequestError && e.param === "max_tokens");
  await assert.rejects(
      client.completions.create({ model: "stories", prompt: "Once upon a time ".repeat(2100) }),
      (e) => e instanceof OpenAI.BadRequestError && e.code === "context_length_exceeded");

  // Stopping a stream (the page's stop button does the same) cancels the request.
  const before = await cancelled();
  const endless = await client.completions.create({ model: "stories", prompt: "Once",
                                                    stream: true, ignore_eos: true });
  for await (const chunk of endless) {
    assert.ok(chunk.choices.length);
    endless.controller.abort();
    break;
  }
  for (let i = 0; i < 600 && (await cancelled()) === before; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await cancelled(), before + 1);
  console.log("openai client: all checks passed");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
