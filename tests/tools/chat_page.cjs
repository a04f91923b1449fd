// The chat page of lila serve in headless Chromium, as a person uses it: type the API key
// and a message, watch the reply stream in, stop it, ask again. Run by
// tests/tools/test_serve.cpp: LILA_URL (the server, started with --ignore-eos so a reply
// runs until stopped, on a model slow enough that it is still running), LILA_KEY, LILA_NPM_DIR (puppeteer-core), LILA_SCREENSHOT (a PNG path,
// or empty). Exits non-zero, saying what went wrong, on the first failure.
"use strict";
const assert = require("node:assert/strict");
const path = require("node:path");
const puppeteer = require(path.join(process.env.LILA_NPM_DIR, "node_modules", "puppeteer-core"));

const url = process.env.LILA_URL;
// Generous: the suite runs beside the others on a 2-core machine, and a loaded Chromium
// takes tens of seconds to start and render.
const kTimeout = 180000;

async function metric(name) {
  const res = await fetch(url + "/metrics",
                          { headers: { Authorization: "Bearer " + process.env.LILA_KEY } });
  const m = new RegExp("^" + name.replace(/[{}]/g, "\\$&") + " (\\d+)", "m").exec(await res.text());
  return m ? Number(m[1]) : 0;
}

// Sends a message, waits for the reply to stream in, stops it; returns the reply's text.
async function askAndStop(page, text) {
  const replies = await page.$$eval(".msg.assistant", (d) => d.length);
  await page.type("#input", text);
  await page.keyboard.press("Enter");
  // Stop as soon as the reply shows, in the page itself: a click sent from here could arrive
  // after a fast model has filled the context and ended the reply on its own.
  const stopWasEnabled = await page.waitForFunction((n) => {
    const d = document.querySelectorAll(".msg.assistant");
    if (d.length <= n || d[n].textContent.length <= 40) return false;
    const stop = document.getElementById("stop");
    const enabled = !stop.disabled;
    stop.click();
    return { enabled };
  }, { polling: 20, timeout: kTimeout }, replies);
  assert.equal((await stopWasEnabled.jsonValue()).enabled, true);
  await page.waitForFunction(() => !document.getElementById("send").disabled, { timeout: kTimeout });
  return page.$$eval(".msg.assistant", (d, n) => d[n].textContent, replies);
}

async function main() {
  const browser = await puppeteer.launch({
    executablePath: process.env.LILA_CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    timeout: kTimeout, protocolTimeout: kTimeout });
  const page = await browser.newPage();
  page.setDefaultTimeout(kTimeout);
  let first = "", second = "";
  try {
    await page.setViewport({ width: 900, height: 600 });
    await page.goto(url + "/");
    assert.equal(await page.title(), "lila");
    await page.type("#key", process.env.LILA_KEY);

    const cancelled = 'lila_requests_finished_total{reason="cancelled"}';
    const before = await metric(cancelled);
    first = await askAndStop(page, "Tell me a story.");
    assert.ok(first.length > 40, first);
    for (let i = 0; i < 600 && (await metric(cancelled)) === before; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await metric(cancelled), before + 1);

    // The conversation stays in the page: the next request carries the stopped reply, and
    // the server finds the conversation so far in its slot's cache.
    const cached = await metric("lila_prompt_tokens_cached_total");
    second = await askAndStop(page, "What happened next?");
    assert.ok(second.length > 40, second);
    assert.ok((await metric("lila_prompt_tokens_cached_total")) > cached + 10);
    assert.deepEqual(await page.$$eval(".msg", (d) => d.map((m) => m.className)),
                     ["msg user", "msg assistant", "msg user", "msg assistant"]);
  } catch (e) {
    // What the page showed, to tell what went wrong.
    console.error(await page.$$eval(".msg", (d) => d.map((m) => [m.className, m.textContent.length, m.textContent.slice(0, 200)])));
    throw e;
  } finally {
    if (process.env.LILA_SCREENSHOT) await page.screenshot({ path: process.env.LILA_SCREENSHOT });
    await browser.close();
  }
  console.log("chat page: all checks passed (replies of " + first.length + " and " +
              second.length + " characters when stopped)");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
