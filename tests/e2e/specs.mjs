// End-to-end specs: the real app (embedded sandbox, real listener, real keychain) driven through
// tauri-driver and WebKitWebDriver. Each step asserts what the user would see; every screen is
// photographed into $PARTNER_SCREENSHOTS (target/e2e-screenshots/; scripts/refresh-screenshots.sh
// copies them into docs/screenshots/). Run by tests/e2e/run.sh (which sets the environment).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, connect } from "node:net";
import { spawn, execFile } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const { remote } = await import(new URL("../../ui/node_modules/webdriverio/build/node.js", import.meta.url));

const shots = process.env.PARTNER_SCREENSHOTS;
if (!shots) throw new Error("PARTNER_SCREENSHOTS is not set: run the specs through tests/e2e/run.sh");
const exportsDir = process.env.PARTNER_E2E_EXPORTS;
const binary = process.env.PARTNER_APP_BINARY;
const cliBinary = process.env.PARTNER_CLI_BINARY;

/** A WebDriver session on the tauri-driver at `port`: it starts the app. */
async function openApp(port = 4444) {
  return remote({
    hostname: "127.0.0.1",
    port,
    logLevel: "error",
    capabilities: { "tauri:options": { application: binary } },
  });
}
// Reassigned when the app is quit and started again (the restart specs at the end).
let browser = await openApp();

const results = [];
// PARTNER_E2E_ONLY=<regex>: only the steps whose names match (a developer's quick loop over
// the steps being worked on; the steps it skips may leave state later ones count on).
const only = process.env.PARTNER_E2E_ONLY ? new RegExp(process.env.PARTNER_E2E_ONLY) : null;
async function step(name, body) {
  if (only && !only.test(name)) {
    console.log(`  skip ${name}`);
    return;
  }
  const started = Date.now();
  try {
    await body();
    results.push({ name, ok: true });
    console.log(`  ok   ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    results.push({ name, ok: false });
    console.log(`  FAIL ${name}: ${error?.stack ?? error}`);
    await shot(`failure-${name.replace(/\W+/g, "-")}`).catch(() => {});
  }
}

const $ = (selector) => browser.$(selector);
async function shot(name) {
  await browser.pause(400); // a screenshot right after a click can lag the DOM
  await keepPainting();
  // A screenshot that never comes fails the step in seconds, not at the driver's 5 minutes.
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the screenshot ${name} took over 30 s`)), 30_000);
  });
  try {
    await Promise.race([browser.saveScreenshot(join(shots, `${name}.png`)), late]);
  } finally {
    clearTimeout(timer);
  }
}
/**
 * Makes the page paint every frame for the next two seconds: a one-pixel mark in the corner
 * changes its (invisible) shade. WebKitGTK painting without accelerated compositing (the app's
 * choice on a machine without a GPU, `partner-console-core/src/rendering.rs`) answers
 * WebDriver's screenshot only once the page paints again, so a screenshot of a still page could
 * wait forever (six screens of one run, the Connections screen among them; the Token screen's
 * ticking clock never did).
 */
async function keepPainting() {
  await browser.execute(() => {
    let mark = document.getElementById("e2e-paint-mark");
    if (!mark) {
      mark = document.createElement("div");
      mark.id = "e2e-paint-mark";
      mark.setAttribute("aria-hidden", "true");
      mark.style.cssText = "position:fixed;right:0;bottom:0;width:1px;height:1px;background:#000;opacity:0.01;pointer-events:none;z-index:2147483647";
      document.body.appendChild(mark);
    }
    clearInterval(window.__e2ePainting);
    let frames = 0;
    window.__e2ePainting = setInterval(() => {
      frames += 1;
      mark.style.opacity = frames % 2 ? "0.02" : "0.01";
      if (frames >= 120) clearInterval(window.__e2ePainting);
    }, 16);
  });
}
async function go(hash) {
  await browser.execute((h) => {
    window.location.hash = h;
  }, hash);
}
async function text(selector) {
  const element = await $(selector);
  // WebKitWebDriver answers "" for the rendered text of an element that ellipsises its
  // overflow (the top bar's), though it shows the text: then its text content is what shows.
  return (await element.getText()) || (await element.getProperty("textContent")) || "";
}
async function waitText(selector, pattern, timeout = 15000) {
  await browser.waitUntil(async () => pattern.test(await text(selector).catch(() => "")), { timeout, timeoutMsg: `${selector} never matched ${pattern}` });
}
async function shiftClick(selector) {
  await browser.execute((s) => {
    document.querySelector(s)?.dispatchEvent(new MouseEvent("click", { bubbles: true, shiftKey: true }));
  }, selector);
}
async function clickButton(label) {
  const button = await $(`button=${label}`);
  await button.waitForClickable({ timeout: 15000 });
  await button.click();
}

console.log("e2e: Partner Console");

await step("first run: embedded sandbox, products listed", async () => {
  await (await $("[data-row-id]")).waitForExist({ timeout: 60000 });
  assert.match(await text("[data-testid=env-badge]"), /^sandbox$/i);
  const range = await text("[data-testid=range-label]");
  assert.match(range, /^1–\d+ of \d+/);
  // The demo subscription finishes after the table is usable; its outcome is in the top bar.
  await waitText("[data-testid=demo-subscription]", /Demo webhooks: .+ → listener/);
  await shot("products");
});

await step("sort transactions by two keys and page", async () => {
  await go("#/transactions");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  await (await $("button[data-sort-key=status]")).click();
  await waitText("[data-testid=range-label]", /^1–/);
  await shiftClick("button[data-sort-key=created]");
  await browser.waitUntil(async () => (await (await $("input[aria-label='Sort string']")).getValue()) === "status,created", { timeout: 10000 });
  await (await $("button[aria-label='Next page']")).click();
  await waitText("[data-testid=page-label]", /^Page 2 of/);
  await waitText("[data-testid=range-label]", /^26–50 of/);
  await shot("transactions");
});

let transactionId = "";
async function openSelected() {
  const open = await $("aside[aria-label='Selected record'] .detail-head button");
  await open.waitForClickable({ timeout: 15000 });
  await open.click();
}

await step("open a transaction and respond", async () => {
  // Newest first: a transaction the lender just started, not one a final response locked.
  const sort = await $("input[aria-label='Sort string']");
  await sort.clearValue();
  await sort.setValue("-status,created");
  await browser.keys("Enter");
  await waitText("[data-testid=page-label]", /^Page 1 of/);
  await browser.waitUntil(async () => /processing|created/.test(await text("tbody tr[data-row-id]")), { timeout: 15000 });
  const row = await $("tbody tr[data-row-id]");
  transactionId = await row.getAttribute("data-row-id");
  await openSelected(); // the first row is selected when a page loads
  await (await $("form[aria-label=Respond]")).waitForExist({ timeout: 15000 });
  await (await $("input[aria-label='Partner status']")).setValue("Ordered");
  await (await $("input[aria-label='Reference number']")).setValue("E2E-1");
  await clickButton("Send response");
  await waitText("[role=status]", /Response sent/);
  await browser.waitUntil(async () => (await $$text("ol[aria-label='Events timeline'] li")).some((t) => /response/i.test(t)), { timeout: 15000 });
  await shot("transaction-detail");
});

await step("a final response with every field: asked first, then the transaction is locked", async () => {
  const more = await $("textarea[aria-label='Other response fields']");
  if (!(await more.isDisplayed())) await (await $("details.more-fields summary")).click();
  await more.setValue('{"loan": {"appraisedValue": 412000}, "respondingParty": {"name": "E2E Appraisals"}}');
  await (await $("select[aria-label='Response status']")).selectByAttribute("value", "completed");
  await clickButton("Send response");
  const ask = await $("[role=alertdialog][aria-label='Send a final response']");
  await ask.waitForExist({ timeout: 10000 });
  assert.match(await ask.getText(), /completed is final: it locks this transaction's request and response for good/);
  await shot("respond-final-confirm");
  await clickButton("Send completed");
  await browser.waitUntil(async () => browser.execute(() => document.body.textContent.includes("A final response locked this transaction")), { timeout: 15000, timeoutMsg: "the form did not give way to the locked notice" });
  const sent = await rawJsonOfDetail("Transaction as sent");
  assert.equal(sent.response.status, "completed");
  assert.equal(sent.response.loan.appraisedValue, 412000);
  assert.equal(sent.response.respondingParty.name, "E2E Appraisals");
});

async function $$text(selector) {
  const items = await browser.$$(selector);
  const texts = [];
  for (const item of items) texts.push(await item.getText());
  return texts;
}

let subscriptionId = "";
await step("rotate a signing key", async () => {
  await go("#/products");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  await openSelected();
  await (await $("table[aria-label=Subscriptions]")).waitForExist({ timeout: 15000 });
  const rows = await browser.$$("table[aria-label=Subscriptions] tbody tr[data-subscription-id]");
  const urls = [];
  for (const row of rows) urls.push(await row.getAttribute("data-url"));
  const loopback = urls.findIndex((u) => u.includes("127.0.0.1"));
  assert.ok(loopback >= 0, `a subscription points at the listener: ${urls.join(" | ")}`);
  subscriptionId = await rows[loopback].getAttribute("data-subscription-id");
  await (await rows[loopback].$("button=Rotate key")).click();
  await (await $("label=Paste my own")).click();
  await (await $("input[aria-label='Signing key']")).setValue("short");
  await waitText("[data-testid=key-problems]", /at least 32/);
  assert.equal(await (await $("button=Rotate")).isEnabled(), false);
  await (await $("input[aria-label='Signing key']")).clearValue();
  await (await $("input[aria-label='Signing key']")).setValue("E2eRotatedKey#0123456789abcdefghijKLMN");
  await waitText("[data-testid=key-problems]", /meets the rule/);
  await clickButton("Rotate");
  await waitText("[data-testid=shown-key]", /E2eRotatedKey/);
  await shot("product-detail-key-shown");
  await clickButton("Done");
  await browser.waitUntil(async () => !(await browser.getPageSource()).includes("E2eRotatedKey"), { timeout: 5000, timeoutMsg: "the key stayed in the DOM" });
  await waitText("table[aria-label=Subscriptions]", /previous verifies/);
  await shot("product-detail");
});

await step("faults on demand: a 429 waited out and a 503 retried by the console, seen in Calls", async () => {
  await go("#/demo");
  await (await $("[data-testid=fault-endpoint]")).waitForExist({ timeout: 15000 });
  await (await $("[data-testid=fault-endpoint]")).selectByAttribute("value", "transactions");
  const count = await $("[data-testid=fault-count]");
  await count.clearValue();
  await count.setValue("1");
  await (await $("[data-testid=fault-kind]")).selectByAttribute("value", "429");
  await (await $("[data-testid=fault-add]")).click();
  await waitText("[data-testid=faults-in-force]", /transactions → 429 \(Retry-After 2 s\) · next call/);
  await (await $("[data-testid=fault-kind]")).selectByAttribute("value", "503");
  await (await $("[data-testid=fault-add]")).click();
  await waitText("[data-testid=faults-in-force]", /transactions → 503 · next call/);
  await shot("demo-faults");
  // A listing not read before (another sort): its page meets the 429, waits, meets the 503, is retried.
  await go("#/transactions");
  const sort = await $("input[aria-label='Sort string']");
  await sort.waitForExist({ timeout: 15000 });
  await sort.clearValue();
  await sort.setValue("-updated");
  await browser.keys("Enter");
  await waitText("[data-testid=range-label]", /^1–/, 20000);
  await go("#/calls");
  await (await $("[data-testid=call-row]")).waitForExist({ timeout: 15000 });
  // A read of the transactions after the faults waited 2 s as told (the screen's first read may
  // take it, ending a moment later); one (the same or the next) was sent again after the 503.
  const faultedRows = () =>
    browser.execute(() =>
      [...document.querySelectorAll("[data-testid=call-row]")]
        .filter((r) => r.textContent.includes("/partner/v2/transactions"))
        .map((r) => ({ retries: Number(r.dataset.retries), waited: Number(r.dataset.waitedMs) })),
    );
  await browser.waitUntil(async () => {
    const rows = await faultedRows();
    return rows.some((r) => r.waited === 2000) && rows.some((r) => r.retries >= 1);
  }, { timeout: 15000, timeoutMsg: "no call waited out the 429 and retried the 503" });
  const waitedRow = await browser.execute(() => [...document.querySelectorAll("[data-testid=call-row]")].findIndex((r) => r.dataset.waitedMs === "2000"));
  await (await browser.$$("[data-testid=call-row] button[aria-label^='Details of call']"))[waitedRow].click();
  await waitText("[data-testid=call-details]", /Waited\s*2 s, as the service asked/);
  await shot("calls-fault-waited");
  await go("#/demo");
  await waitText("[data-testid=faults-in-force]", /No fault in force/);
});

await step("a notification arrives valid", async () => {
  await go("#/demo");
  await (await $("select[aria-label='Demo product']")).waitForExist({ timeout: 15000 });
  await clickButton("New transaction");
  await waitText("ol[aria-label='Demo log']", /created transaction/);
  await shot("demo");
  await go("#/webhooks");
  await (await $("[data-verdict=valid][data-capture-id]")).waitForExist({ timeout: 30000 });
});

await step("a notification signed with a wrong key is invalid-signature", async () => {
  // Told on the desktop too, once turned on (no notification service runs under Xvfb: the app
  // logs that it had none, and goes on).
  await (await $("[data-testid=desktop-notices]")).click();
  const notify = await $("[data-testid=notice-failedVerification]");
  await notify.waitForClickable({ timeout: 15000 });
  await notify.click();
  await waitText("[data-testid=desktop-notices-summary]", /1 of 3 on/);
  await (await $("[data-testid=desktop-notices]")).click();
  const address = await text("[data-testid=listener-address]");
  const body = JSON.stringify({
    eventId: "e2e-wrong-key",
    eventTime: new Date().toISOString(),
    eventType: "created",
    meta: { instanceId: "e2e", resourceId: "e2e-wrong-key", resourceType: "urn:svc:partner:transaction", resourceRef: "http://127.0.0.1/partner/v2/transactions/e2e" },
  });
  const signature = createHmac("sha256", "WrongKey#0123456789abcdefghijKLMNOP").update(body).digest("base64");
  const response = await fetch(`http://${address}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json", "Svc-Signature": signature, "Svc-SubscriptionId": subscriptionId, "Svc-Environment": "prod" },
    body,
  });
  assert.ok(response.status >= 400, `the listener refused it (${response.status})`);
  const row = await $("[data-verdict=invalid-signature][data-capture-id]");
  await row.waitForExist({ timeout: 15000 });
  await row.click();
  await waitText("[data-testid=detail-verdict]", /invalid-signature/);
  await (await $("button=signature")).click();
  await waitText("[data-testid=signature-explanation]", /No known key gives this signature/);
  await shot("webhooks-invalid-signature");
});

await step("replay a capture", async () => {
  await (await $("[data-verdict=valid][data-capture-id]")).click();
  await waitText("[data-testid=detail-verdict]", /valid/);
  await (await $("button=replay")).click();
  await clickButton("Replay unchanged");
  await waitText("[data-testid=replay-answer]", /Listener answered 2\d\d in \d+ ms, verdict valid/);
  await shot("webhooks");
});

await step("compare two captures: the forged one beside the valid one shown before it", async () => {
  await (await $("[data-verdict=valid][data-capture-id]")).click();
  await waitText("[data-testid=detail-verdict]", /^valid$/);
  await (await $("[data-verdict=invalid-signature][data-capture-id]")).click();
  await waitText("[data-testid=detail-verdict]", /invalid-signature/);
  await (await $("button=compare")).click();
  const sides = await $("table[aria-label='Compared captures']");
  await sides.waitForExist({ timeout: 15000 });
  assert.match(await sides.getProperty("textContent"), /valid.*invalid-signature/);
  const body = await $("[data-testid=body-comparison]");
  assert.match(await body.getProperty("textContent"), /\/eventId|\/meta/, "the bodies differ path by path");
  assert.match(await (await $("table[aria-label='Headers compared']")).getProperty("textContent"), /Svc-Signature/i);
  await shot("webhooks-compare");
});

/** Waits until the inspector's list has the store's answer for its filter (rows move when it
 * lands, so a click before it can hit the wrong one). */
async function listSettled() {
  await browser.pause(200); // the list turns busy once the change reaches it
  await browser.waitUntil(async () => (await (await $(".capture-scroll")).getAttribute("aria-busy")) === "false", { timeout: 15000, timeoutMsg: "the capture list never settled" });
}

/** Sets the listener's test mode through its card on the Webhooks screen. */
async function setTestMode(enabled, fields = {}, shotName = null) {
  await go("#/webhooks");
  const card = await $("[data-testid=test-mode]");
  await card.waitForExist({ timeout: 15000 });
  if (!(await (await $("form[aria-label='Test mode']")).isDisplayed())) await card.click();
  const box = await $("form[aria-label='Test mode'] input[type=checkbox]");
  if ((await box.isSelected()) !== enabled) await box.click();
  for (const [label, value] of Object.entries(fields)) {
    const input = await $(`form[aria-label='Test mode'] input[aria-label='${label}']`);
    await input.click();
    await browser.keys(["Control", "a"]);
    await browser.keys("Backspace");
    await input.setValue(value);
  }
  await (await $("[data-testid=test-mode-apply]")).click();
  await waitText("form[aria-label='Test mode'] [role=status]", enabled ? /Applied: answers/ : /Applied: off/);
  if (shotName) await shot(shotName);
  await card.click(); // folded again: the inspector gets its room back
}

// The transaction whose notification's first attempt the test mode failed (drawn in the next step).
let retriedTransaction = null;
await step("test mode: every notification's first attempt fails, and the service retries it", async () => {
  await setTestMode(true, { "Fail first": "1", "Failure status": "503" }, "webhooks-test-mode");
  await waitText("[data-testid=test-mode-summary]", /first attempt fails with 503/);
  await go("#/demo");
  await (await $("select[aria-label='Demo product']")).waitForExist({ timeout: 15000 });
  await clickButton("New transaction");
  await waitText("ol[aria-label='Demo log']", /created transaction (\S+) on/);
  const created = /created transaction (\S+) on/.exec(await text("ol[aria-label='Demo log']"))[1];
  retriedTransaction = created;
  await go("#/webhooks");
  // The first attempt was captured (verified, answered 503 on purpose)...
  const attempt = (n) => $(`//div[@data-capture-id][@data-attempts='${n}'][.//span[@title='${created}']]`);
  await (await attempt(1)).waitForExist({ timeout: 30000 });
  // ...and the service retries once its clock passes the retry delay.
  await go("#/demo");
  await clickButton("+1 min");
  await go("#/webhooks");
  await (await attempt(2)).waitForExist({ timeout: 30000 });
  await setTestMode(false);

  // Evidence for a support ticket: both attempts, a body field masked, no secret anywhere.
  await (await attempt(2)).click();
  await waitText("[data-testid=detail-verdict]", /valid/);
  await (await $("button=evidence")).click();
  const base = join(process.env.PARTNER_E2E_SCRATCH, "evidence-retried");
  await (await $("input[aria-label='Fields to mask']")).setValue("meta.resourceId, meta.resourceRef");
  await (await $("input[aria-label='Evidence path']")).setValue(base);
  await (await $("[data-testid=evidence-save]")).scrollIntoView();
  await (await $("[data-testid=evidence-save]")).click();
  await waitText("[data-testid=evidence-saved]", /2 captures in/);
  await shot("webhooks-evidence");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await (await $("[data-testid=evidence-saved]")).scrollIntoView();
    await shot("small-webhooks-evidence");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  const har = readFileSync(`${base}.har`, "utf8");
  const summary = readFileSync(`${base}.md`, "utf8");
  const log = JSON.parse(har).log;
  assert.equal(log.version, "1.2");
  assert.equal(log.entries.length, 2, "both attempts");
  for (const entry of log.entries) {
    assert.ok(entry.startedDateTime && entry.request && entry.response && entry.timings, "a HAR 1.2 entry");
    assert.doesNotMatch(entry.request.postData.text, new RegExp(created), "the masked field is masked");
  }
  const key = "E2eRotatedKey#0123456789abcdefghijKLMN";
  for (const text of [har, summary]) {
    for (const form of [key, Buffer.from(key).toString("base64"), Buffer.from(key).toString("hex")]) {
      assert.ok(!text.includes(form), "no form of the signing key in the bundle");
    }
  }
  assert.match(summary, /503/, "the summary has the failed attempt's answer");
  assert.match(summary, /delivered/i, "and the service's delivery record");
});

/** What a notification picture in the window says of itself (its SVG's data attributes). */
async function readPicture(root) {
  return browser.execute((selector) => {
    const svg = document.querySelector(selector);
    if (!svg) return null;
    const steps = (name) => [...svg.querySelectorAll(`[data-step=${name}]`)];
    return {
      lanes: svg.dataset.lanes,
      outcome: svg.dataset.outcome,
      width: Number(svg.getAttribute("width")),
      height: Number(svg.getAttribute("height")),
      attempts: steps("attempt").map((g) => ({ attempt: g.dataset.attempt, status: g.dataset.status ?? null, verdict: g.dataset.verdict ?? null })),
      waits: steps("wait").map((g) => Number(g.dataset.seconds)),
      lender: steps("lender").length,
      keys: steps("attempt").map((g) => g.dataset.key ?? null),
      errors: steps("attempt").map((g) => g.dataset.error ?? null),
      gaveUp: steps("gave-up").length,
      answers: steps("answer").length,
      recoveries: steps("recovery").length,
    };
  }, root);
}

/** Exports the picture in `panel` as `format` through the save dialog; the file's path. */
async function exportPicture(panel, format) {
  const before = await browser.execute((p) => document.querySelector(`${p} [data-testid=job-result]`)?.getAttribute("title") ?? null, panel);
  await (await $(`${panel} [data-testid=picture-export-${format}]`)).click();
  let path = null;
  await browser.waitUntil(
    async () => {
      path = await browser.execute((p) => document.querySelector(`${p} [data-testid=job-result]`)?.getAttribute("title") ?? null, panel);
      return path !== null && path !== before && path.endsWith(`.${format}`);
    },
    { timeout: 15000, timeoutMsg: `the ${format} export never finished` },
  );
  return path;
}

await step("the life of a notification, drawn: live in the Demo, from the inspector and the transaction, exported as SVG and PNG", async () => {
  assert.ok(retriedTransaction, "the test-mode step made a transaction whose first attempt failed");
  const failedThenDelivered = (drawn) => {
    assert.ok(drawn, "a picture is drawn");
    assert.equal(drawn.lanes, "lender service network listener", "the lanes, no app lane without a forward");
    assert.equal(drawn.lender, 1, "the lender's act");
    assert.ok(drawn.attempts.length >= 2, `two attempts at least: ${JSON.stringify(drawn.attempts)}`);
    assert.deepEqual(drawn.attempts[0], { attempt: "1", status: "503", verdict: "valid" }, "the first attempt failed on purpose, its signature valid");
    assert.deepEqual(drawn.attempts.at(-1), { attempt: String(drawn.attempts.length), status: "200", verdict: "valid" }, "the last one taken");
    assert.ok(drawn.waits.length >= 1 && drawn.waits[0] >= 20, `the service waited its 20 s at least: ${drawn.waits}`);
    assert.equal(drawn.outcome, "delivered");
  };

  // The Demo's live picture of the transaction's newest notification.
  await go("#/demo");
  const transaction = await $("input[aria-label='Demo transaction']");
  await transaction.waitForExist({ timeout: 15000 });
  await transaction.setValue(retriedTransaction);
  const live = "[aria-label='Live picture'] svg.pcp";
  await browser.waitUntil(async () => (await readPicture(live))?.outcome === "delivered", { timeout: 20000, timeoutMsg: "the live picture never showed the notification delivered" });
  failedThenDelivered(await readPicture(live));
  await (await $(live)).scrollIntoView();
  await shot("picture-demo-live");

  // The picture of a capture, from the inspector.
  await go("#/webhooks");
  const capture = await $(`//div[@data-capture-id][@data-attempts='2'][.//span[@title='${retriedTransaction}']]`);
  await capture.waitForExist({ timeout: 15000 });
  await capture.click();
  await (await $("button=picture")).click();
  const inspected = ".capture-detail svg.pcp";
  await (await $(inspected)).waitForExist({ timeout: 15000 });
  const drawn = await readPicture(inspected);
  failedThenDelivered(drawn);
  await shot("picture-inspector");
  // Enlarged over the whole window for a presenter, Escape returns.
  await (await $(".capture-detail [data-testid=picture-enlarge]")).click();
  const enlargedWidth = await browser.execute(() => document.querySelector(".picture-panel.enlarged svg.pcp")?.getBoundingClientRect().width ?? 0);
  assert.ok(enlargedWidth >= 1000, `enlarged to the window's width (${enlargedWidth} px)`);
  await shot("picture-enlarged");
  await browser.keys(["Escape"]);
  await browser.waitUntil(async () => (await browser.execute(() => document.querySelector(".picture-panel.enlarged") === null)), { timeout: 5000, timeoutMsg: "Escape returned" });
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-picture-inspector");
  } finally {
    await browser.setWindowSize(1280, 800);
  }

  // Exported for slides: an SVG with fixed colours, a PNG at twice the size.
  const panel = ".capture-detail [data-testid=notification-picture]";
  const svgPath = await exportPicture(panel, "svg");
  const svg = readFileSync(svgPath, "utf8");
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"') && svg.trimEnd().endsWith("</svg>"), "an SVG document");
  assert.ok(!svg.includes("var(--"), "fixed colours, not the window's theme");
  assert.equal((svg.match(/data-step="attempt"/g) ?? []).length, drawn.attempts.length, "the same attempts as on screen");
  assert.equal((svg.match(/<g\b/g) ?? []).length, (svg.match(/<\/g>/g) ?? []).length, "every group closed");
  const pngPath = await exportPicture(panel, "png");
  const png = readFileSync(pngPath);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG");
  assert.equal(png.readUInt32BE(16), drawn.width * 2, "twice the picture's width");
  assert.equal(png.readUInt32BE(20), drawn.height * 2, "twice its height");

  // And from the transaction's Notifications.
  await go(`#/transactions/${encodeURIComponent(retriedTransaction)}`);
  const open = await $("[data-testid=story-picture]");
  await open.waitForClickable({ timeout: 15000 });
  await open.click();
  const story = "[aria-label='Notifications'] svg.pcp";
  await (await $(story)).waitForExist({ timeout: 15000 });
  failedThenDelivered(await readPicture(story));
});

await step("grouped attempts: one row per notification, its attempts folded under it", async () => {
  await go("#/webhooks");
  await (await $("[data-capture-id]")).waitForExist({ timeout: 15000 });
  const everyAttempt = Number((await text("[data-testid=capture-count]")).match(/^([\d,]+)/)[1].replace(/,/g, ""));
  await (await $("input[aria-label='Group attempts']")).click();
  await waitText("[data-testid=capture-count]", /notifications of/);
  const grouped = Number((await text("[data-testid=capture-count]")).match(/^([\d,]+)/)[1].replace(/,/g, ""));
  assert.ok(grouped < everyAttempt, `fewer rows grouped (${grouped}) than attempts (${everyAttempt})`);
  // The retried notification of the test-mode step: one row, two attempts, folded.
  const row = await $("[data-group-attempts='2']");
  await row.waitForExist({ timeout: 15000 });
  await (await row.$("[data-testid=fold]")).click();
  await browser.waitUntil(async () => (await browser.$$("[data-attempt-of]")).length === 2, { timeout: 10000, timeoutMsg: "the two attempts never unfolded" });
  assert.match(await (await $("[data-attempt-of]")).getProperty("textContent"), /attempt 1/);
  await shot("webhooks-grouped");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-grouped");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  await (await $("input[aria-label='Group attempts']")).click();
  await browser.waitUntil(async () => !/notifications of/.test(await text("[data-testid=capture-count]")), { timeout: 10000 });
});

await step("open an event notification: the event within its transaction", async () => {
  await go("#/webhooks");
  await (await $("select[aria-label='Resource type filter']")).selectByAttribute("value", "urn:svc:partner:transaction:event");
  await (await $("select[aria-label='Verdict filter']")).selectByAttribute("value", "valid");
  await listSettled();
  const row = await $("[data-verdict=valid][data-capture-id]");
  await row.waitForExist({ timeout: 15000 });
  const eventId = await row.getAttribute("data-event-id");
  await row.click();
  const open = await $("[data-testid=open-resource]");
  await open.waitForExist({ timeout: 15000 });
  assert.match(await open.getText(), new RegExp(`Open event ${eventId} in transaction`));
  await shot("webhooks-open-event");
  await open.click();
  const marked = await $("ol[aria-label='Events timeline'] li[aria-current=true]");
  await marked.waitForExist({ timeout: 15000 });
  assert.equal(await marked.getAttribute("data-event-id"), eventId);
  assert.match(await browser.execute(() => window.location.hash), new RegExp(`/events/${eventId}$`));
  await shot("transaction-detail-event");
  // A capture that failed verification is not opened, and says why.
  await go("#/webhooks");
  await (await $("select[aria-label='Resource type filter']")).selectByAttribute("value", "");
  await (await $("select[aria-label='Verdict filter']")).selectByAttribute("value", "invalid-signature");
  await listSettled();
  await (await $("[data-verdict=invalid-signature][data-capture-id]")).click();
  await waitText("[data-testid=detail-verdict]", /invalid-signature/);
  await waitText("[data-testid=open-refused]", /verdict is invalid-signature/);
  await (await $("select[aria-label='Verdict filter']")).selectByAttribute("value", "all");
});

/** An HTTP server on a free loopback port that answers every request `status` with a body naming
 * what it got, and keeps the requests. */
async function recordingApp(status) {
  const { createServer: createHttp } = await import("node:http");
  const requests = [];
  const server = createHttp((request, response) => {
    const chunks = [];
    request.on("data", (c) => chunks.push(c));
    request.on("end", () => {
      requests.push({ url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(status, { "content-type": "text/plain", "x-e2e-app": "yes" });
      response.end(`e2e app got ${request.url}`);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { requests, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

await step("forward rules: transaction events to the user's app, with its answer shown", async () => {
  const app = await recordingApp(202);
  try {
    await go("#/webhooks");
    const card = await $("[data-testid=forwarding]");
    await card.waitForExist({ timeout: 15000 });
    await card.click();
    await clickButton("Add rule");
    await (await $("select[aria-label='Rule 1 resource type']")).selectByAttribute("value", "transaction:event");
    await (await $("input[aria-label='Rule 1 URL']")).setValue(`${app.url}/hooks/events`);
    await (await $("[data-testid=forward-save]")).click();
    await waitText("form[aria-label='Forward rules'] [role=status]", /Saved: 1 rule/);
    await shot("webhooks-forwarding");
    await card.click();
    await go("#/demo");
    await (await $("select[aria-label='Demo product']")).waitForExist({ timeout: 15000 });
    await clickButton("New transaction");
    await waitText("ol[aria-label='Demo log']", /created transaction (\S+) on/);
    await browser.waitUntil(async () => app.requests.length > 0, { timeout: 30000, timeoutMsg: "nothing was forwarded" });
    const forwarded = app.requests[0];
    assert.equal(forwarded.url, "/hooks/events");
    assert.ok(forwarded.headers["svc-signature"], "forwarded with the service's signature");
    assert.match(forwarded.body.toString(), /urn:svc:partner:transaction:event/, "only the event notification matches the rule");
    await go("#/webhooks");
    const eventId = JSON.parse(forwarded.body.toString()).eventId;
    const row = await $(`//div[@data-capture-id][@data-event-id='${eventId}'][.//span[contains(., 'transaction:event')]]`);
    await row.waitForExist({ timeout: 15000 });
    await row.click();
    await (await $("button*=forwards")).click();
    await waitText("[data-testid=outbound-status]", /202/);
    await waitText("[data-testid=outbound-body]", /e2e app got \/hooks\/events/);
    await shot("webhooks-forward-answer");
    await browser.setWindowSize(960, 600);
    try {
      await shot("small-webhooks-forward-answer");
    } finally {
      await browser.setWindowSize(1280, 800);
    }

    // Replay to another URL: the same bytes, marked as a replay, and the answer shown.
    await (await $("button=replay")).click();
    await (await $("label*=To another URL")).click();
    await (await $("input[aria-label='Replay URL']")).setValue(`${app.url}/replayed`);
    const before = app.requests.length;
    await clickButton("Replay unchanged");
    await waitText("[data-testid=replay-answer]", /replayed answered 202 in \d+ ms/);
    const replayed = app.requests[before];
    assert.equal(replayed.url, "/replayed");
    assert.equal(replayed.headers["svc-replay"], "1", "marked as a replay");
    assert.equal(replayed.body.toString(), forwarded.body.toString(), "the same bytes");
    await shot("webhooks-replay-elsewhere");

    // Off again: nothing more is forwarded.
    await card.click();
    await (await $("button[aria-label='Remove rule 1']")).click();
    await (await $("[data-testid=forward-save]")).click();
    await waitText("form[aria-label='Forward rules'] [role=status]", /nothing is forwarded/);
    await card.click();
  } finally {
    await app.close();
  }
});

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function saveTunnel(url) {
  const input = await $("input[aria-label='Tunnel URL']");
  // Emptied by keystrokes: WebDriver's clear does not reach React's state.
  await input.click();
  await browser.keys(["Control", "a"]);
  await browser.keys("Backspace");
  if (url) await input.setValue(url);
  await clickButton("Save");
  if (!url) {
    await browser.waitUntil(async () => !(await $("[data-testid=tunnel-status]").isExisting()), { timeout: 10000, timeoutMsg: "the tunnel URL was not cleared" });
  }
}

await step("send again: the valid captures shown sent to the user's app, paced, each answer kept", async () => {
  const app = await recordingApp(200);
  try {
    await go("#/webhooks");
    await (await $("select[aria-label='Verdict filter']")).selectByAttribute("value", "valid");
    await listSettled();
    const shown = Number((await text("[data-testid=capture-count]")).match(/^([\d,]+)/)[1].replace(/,/g, ""));
    assert.ok(shown >= 2, `valid captures to send (${shown})`);
    await (await $("[data-testid=send-again-open]")).click();
    const panel = await $("[data-testid=send-again]");
    await (await panel.$("input[aria-label='Send again to']")).setValue(`${app.url}/again`);
    const atATime = await panel.$("input[aria-label='At a time']");
    await atATime.clearValue();
    await atATime.setValue("2");
    await (await panel.$("input[aria-label='Per second']")).setValue("20");
    await waitText("[data-testid=send-again-start]", new RegExp(`^Send ${shown.toLocaleString("en-US")}$`));
    await (await $("[data-testid=send-again-start]")).click();
    await waitText("[data-testid=send-again-result]", new RegExp(`${shown} of ${shown} taken`), 60000);
    assert.equal(app.requests.length, shown, "each shown capture reached the app once");
    assert.ok(app.requests.every((r) => r.url === "/again" && r.headers["svc-replay"] === "1"), "marked as replays");
    await shot("webhooks-send-again");
    await browser.setWindowSize(960, 600);
    try {
      const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
      await shot("small-webhooks-send-again");
    } finally {
      await browser.setWindowSize(1280, 800);
    }
    // Kept in a capture's detail: its forwards and replays name the app's answer.
    await (await $("[data-verdict=valid][data-capture-id]")).click();
    await (await $("button*=forwards")).click();
    await browser.waitUntil(async () => browser.execute((url) => document.querySelector(".capture-detail")?.textContent.includes(url) ?? false, `${app.url}/again`), { timeout: 15000, timeoutMsg: "the send's record is not in the capture's detail" });
    await (await $("button=Close")).click();
  } finally {
    await (await $("select[aria-label='Verdict filter']")).selectByAttribute("value", "all");
    await app.close();
  }
});

await step("tunnel check names what failed and what to do", async () => {
  await go("#/webhooks");
  const address = await text("[data-testid=listener-address]");
  // Plain http to the listener itself: the library's https-only rule, nothing sent.
  await saveTunnel(`http://${address}/webhooks`);
  await clickButton("Check tunnel");
  await waitText("[data-testid=tunnel-check]", /Not https/);
  assert.match(await text("[data-testid=tunnel-check]"), /https:\/\//);
  // https to a port nothing listens on: a real connection attempt, classified as refused.
  await saveTunnel(`https://127.0.0.1:${await closedPort()}/webhooks`);
  await clickButton("Check tunnel");
  await waitText("[data-testid=tunnel-check]", /Refused/);
  const shown = await text("[data-testid=tunnel-check]");
  assert.match(shown, /refused the connection/);
  assert.match(shown, /Start the tunnel tool/);
  assert.match(shown, /not seen by the listener/);
  await shot("webhooks-tunnel-check");
  await saveTunnel("");
});

/** Makes the embedded sandbox answer every partner API request `ms` late (0: at once), so a
 * search over its 240 transactions lasts long enough to watch its progress and cancel it. */
async function sandboxLatency(ms) {
  const base = (await text(".topbar .mono")).trim();
  const response = await fetch(`${base}/sandbox/v1/latency`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ milliseconds: ms }),
  });
  assert.equal(response.status, 200, `the sandbox took latency ${ms}`);
}
const searchInput = "input[aria-label='Search all transactions']";
const searchResults = "[aria-label='Search results']";
const searchForm = ".search-bar form";

await step("search all pages finds a match on a later page and opens it", async () => {
  await go("#/transactions");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  // The last transaction of the last page: page 1 does not show it, only the walk finds it.
  await (await $("button[aria-label='Last page']")).click();
  await waitText("[data-testid=page-label]", /^Page (\d+) of \1\b/);
  const lastPage = await $$text("tbody tr[data-row-id]");
  const rows = await browser.$$("tbody tr[data-row-id]");
  const target = await rows[lastPage.length - 1].getAttribute("data-row-id");
  await (await $("button[aria-label='First page']")).click();
  await waitText("[data-testid=page-label]", /^Page 1 of ([2-9]|\d{2,})\b/);
  assert.equal((await browser.$$(`tbody tr[data-row-id='${target}']`)).length, 0, "not on page 1");
  await sandboxLatency(1000);
  try {
    await (await $(searchInput)).setValue(target);
    await clickButton("Search all pages");
    await (await $("progress[aria-label='Search progress']")).waitForExist({ timeout: 5000 });
    await waitText(searchForm, /[1-9]\d* of \d+ scanned, \d+ found/, 15000);
    await keepPainting();
    await browser.saveScreenshot(join(shots, "transactions-search-progress.png")); // at once: the walk is still going
    await waitText(searchResults, /^1 match in \d+/, 30000);
  } finally {
    await sandboxLatency(0);
  }
  const scanned = Number((await text(searchResults)).match(/^1 match in (\d+)/)[1]);
  assert.ok(scanned >= 240, `every page walked (${scanned} scanned)`);
  assert.equal(await (await $("progress[aria-label='Search progress']")).isExisting(), false, "the progress bar goes when done");
  await shot("transactions-search");
  const hit = await $(`${searchResults} tbody tr span[title='${target}']`);
  await hit.click();
  await browser.keys("Enter"); // the result row has focus: Enter opens it
  await browser.waitUntil(async () => (await browser.execute(() => window.location.hash)).includes(target), { timeout: 10000, timeoutMsg: "the match did not open" });
  await browser.waitUntil(async () => (await $$text(".page .toolbar")).some((t) => /Transaction/.test(t) && t.includes(target)), {
    timeout: 15000,
    timeoutMsg: "the transaction detail of the match did not show",
  });
  await shot("transactions-search-opened");
});

async function transactionTotal() {
  return Number((await text("[data-testid=range-label]")).match(/of (\d+)/)[1]);
}

await step("cancel a search part-way", async () => {
  await go("#/transactions");
  await (await $(searchInput)).waitForExist({ timeout: 15000 });
  await sandboxLatency(800);
  try {
    await (await $(searchInput)).setValue("no-such-text-anywhere");
    await clickButton("Search all pages");
    await waitText(searchForm, /[1-9]\d* of \d+ scanned/, 15000);
    await clickButton("Cancel");
    await waitText(searchResults, /cancelled after \d+ scanned/, 15000);
  } finally {
    await sandboxLatency(0);
  }
  const scanned = Number((await text(searchResults)).match(/cancelled after (\d+) scanned/)[1]);
  const total = await transactionTotal();
  assert.ok(scanned > 0 && scanned < total, `stopped part-way (${scanned} of ${total})`);
  assert.match(await text(searchResults), /^0 matches/);
  assert.equal(await (await $("button=Search all pages")).isEnabled(), true, "a new search can start");
  await shot("transactions-search-cancelled");
});

/** The path a finished export names in its status, once it ends in `.<extension>`. */
async function jobPath(scope, extension) {
  const status = `${scope}[data-testid=job-result]`;
  await waitText(status, new RegExp(` · /.*\\.${extension}$`), 60000);
  return (await text(status)).split(" · ").pop().trim();
}

await step("export the transactions listing through the save dialog, with progress", async () => {
  await go("#/transactions");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  await clickButton("Export all…");
  const path = await jobPath(".export-bar [data-job=exported]", "csv");
  assert.ok(path.startsWith(exportsDir) && path.endsWith(".csv"), `saved where the dialog said (${path})`);
  assert.match(await text(".export-bar [data-testid=job-result]"), /^\d+ rows exported/);
  const lines = readFileSync(path, "utf8").trim().split("\n");
  assert.ok(lines.length > 200, `every page exported (${lines.length} lines)`);
  assert.match(lines[0], /id/);
  assert.ok(!existsSync(`${path}.partial`), "no partial file left");
});

let sampleCapture = null;
await step("export captures as JSON Lines and HAR 1.2, clear them, and import them back", async () => {
  await go("#/webhooks");
  await (await $("[data-capture-id]")).waitForExist({ timeout: 15000 });
  const stored = Number((await text("[data-testid=capture-count]")).match(/of ([\d,]+)/)[1].replace(/,/g, ""));
  const exportAs = async (format) => {
    await (await $("select[aria-label='Capture export']")).selectByAttribute("value", `${format} shown`);
    await clickButton("Export…");
    return jobPath(".inspector [data-job=exported]", format);
  };
  const jsonl = await exportAs("jsonl");
  const lines = readFileSync(jsonl, "utf8").trim().split("\n");
  assert.equal(lines.length, stored, "every capture exported");
  const first = JSON.parse(lines[0]);
  assert.ok(first.id && first.bodyBase64 !== undefined && first.verdict, "a capture per line, body in Base64");
  sampleCapture = lines.map((l) => JSON.parse(l)).find((c) => c.verdict === "valid" && c.bodyBase64) ?? first;
  const harPath = await exportAs("har");
  const har = JSON.parse(readFileSync(harPath, "utf8")).log;
  assert.equal(har.version, "1.2");
  assert.equal(har.entries.length, stored, "one HAR entry per capture");
  await shot("webhooks-export");

  // Gone, then back from the file: same count, same ids.
  await (await $("[data-testid=clear-all]")).click();
  await (await $("button*=Delete")).click();
  await waitText("[data-testid=capture-count]", /^0 of 0/);
  copyFileSync(jsonl, join(exportsDir, "captures.jsonl"));
  await clickButton("Import…");
  await waitText(".inspector [data-testid=job-result][data-job=imported]", new RegExp(`^${stored.toLocaleString("en-US")} captures imported`), 60000);
  await waitText("[data-testid=capture-count]", new RegExp(`^${stored.toLocaleString("en-US")} of ${stored.toLocaleString("en-US")}`));
  await shot("webhooks-imported");
  // Imported again: every one is already there.
  await clickButton("Import…");
  await waitText(".inspector [data-testid=job-result][data-job=imported]", new RegExp(`^0 captures imported \\(${stored.toLocaleString("en-US")} already there\\)`), 60000);
});

await step("search across a store of 100,000 captures", async () => {
  assert.ok(sampleCapture, "a capture to copy (the export step)");
  const count = 100_000;
  const base = 50_000_000;
  const lines = [];
  const started = Date.parse(sampleCapture.receivedAt);
  for (let i = 0; i < count; i += 1) {
    const body = JSON.parse(Buffer.from(sampleCapture.bodyBase64, "base64").toString("utf8"));
    body.eventId = `bulk-${i}`;
    if (i === 77_777) body.meta.note = "zanzibar";
    const text = JSON.stringify(body);
    lines.push(JSON.stringify({
      ...sampleCapture,
      id: base + i,
      notificationId: base + i,
      attempt: 1,
      eventId: `bulk-${i}`,
      receivedAt: new Date(started + i).toISOString(),
      bodyBase64: Buffer.from(text).toString("base64"),
      bodySize: Buffer.byteLength(text),
    }));
  }
  writeFileSync(join(exportsDir, "captures.jsonl"), `${lines.join("\n")}\n`);
  await go("#/webhooks");
  const importStarted = Date.now();
  await clickButton("Import…");
  await waitText(".inspector [data-testid=job-result][data-job=imported]", /^100,000 captures imported/, 180000);
  console.log(`       imported 100,000 captures in ${Date.now() - importStarted} ms (through the app, dialog bypassed)`);
  await waitText("[data-testid=capture-count]", /of 10\d,\d\d\d$/);
  const search = async (needle, expected) => {
    const input = await $("input[aria-label='Search captures']");
    await input.click();
    await browser.keys(["Control", "a"]);
    await browser.keys("Backspace");
    const t0 = Date.now();
    await input.setValue(needle);
    await waitText("[data-testid=capture-count]", expected, 30000);
    return Date.now() - t0;
  };
  // A word in one body, and part of an id.
  const word = await search("zanzibar", /^1 of /);
  await (await $("[data-event-id='bulk-77777']")).waitForExist({ timeout: 15000 });
  const id = await search("bulk-7777", /^11 of /);
  console.log(`       search at 100k, typed to count shown (WebDriver round trips included): word ${word} ms, id substring ${id} ms`);
  // The same query headless, reading the app's store while the app writes it.
  const found = (await partner(["listen", "captures", "--search", "zanzibar", "--json"], {})).trim().split("\n");
  assert.equal(found.length, 1, `partner listen captures finds the one capture (${found.length})`);
  assert.equal(JSON.parse(found[0]).eventId, "bulk-77777");
  await shot("webhooks-search-100k");
  // Scrolled to the middle of the whole list: rows are read for where the list is.
  // A search every one of them matches: the store stops counting (at 10,000 or its time budget,
  // "N+").
  await search("bulk-", /^[\d,]+\+ of /);
  await browser.execute(() => {
    const list = document.querySelector(".capture-scroll");
    list.scrollTop = list.scrollHeight / 2;
  });
  await browser.waitUntil(async () => (await browser.$$(".capture-scroll [data-event-id^='bulk-']")).length > 5, { timeout: 15000, timeoutMsg: "no rows in the middle" });
  // Clear what the search shows: the 100,000 go, the rest stay.
  await (await $("[data-testid=clear-shown]")).click();
  await (await $("[data-testid=clear-confirm] button.danger-fill")).click();
  await waitText("[data-testid=clear-result]", /Deleted 100,000 captures/, 60000);
  await (await $("input[aria-label='Search captures']")).click();
  await browser.keys(["Control", "a"]);
  await browser.keys("Backspace");
  await browser.waitUntil(async () => !/of 10\d,\d\d\d$/.test(await text("[data-testid=capture-count]")), { timeout: 15000 });
});

await step("a partner-console:// link opens its transaction in the running app", async () => {
  assert.ok(transactionId, "a transaction from the first steps");
  const link = (await partner(["link", "--embedded", "transaction", transactionId])).trim();
  assert.match(link, /^partner-console:\/\/open\/transactions\//);
  await go("#/products");
  // What the desktop does when the link is clicked: the app started with it. The running app
  // takes it over (one instance), and the second start ends.
  const second = spawn(binary, [link], { stdio: "ignore" });
  const ended = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), 20000);
    second.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  assert.notEqual(ended, null, "the second start handed the link over and ended");
  await browser.waitUntil(async () => (await browser.execute(() => window.location.hash)) === `#/transactions/${encodeURIComponent(transactionId)}`, { timeout: 15000, timeoutMsg: "the link's transaction was not opened" });
  await waitText("h1", /Transaction/);
});

await step("support desk: a local copy of the connection, asked and exported without a page walk", async () => {
  await go("#/support");
  await clickButton("Make a local copy");
  await waitText("[data-testid=sync-result]", /^Synced: [\d,]+ read/, 60000);
  const summary = await text("[data-testid=support-summary]");
  const stored = Number(summary.match(/^([\d,]+) transactions/)[1].replace(/,/g, ""));
  assert.ok(stored > 200, `the embedded sandbox's transactions are in the copy (${summary})`);
  assert.match(summary, /as of/);
  await waitText("[data-testid=support-range]", new RegExp(`of ${stored.toLocaleString("en-US")} · as of`));
  await shot("support");
  // The processing ones: the count the index gives is the count the service's listing has.
  await (await $("form[aria-label=Filter] select[aria-label=Status]")).selectByAttribute("value", "processing");
  await clickButton("Find");
  // The range of the unfiltered set stays on screen until the filtered one arrives: wait for
  // the count to change, not only for a range to be shown.
  const rangeCount = async () => Number(((await text("[data-testid=support-range]").catch(() => "")).match(/^1–\d+ of ([\d,]+) · as of/)?.[1] ?? "0").replace(/,/g, ""));
  await browser.waitUntil(async () => { const n = await rangeCount(); return n > 0 && n !== stored; }, { timeout: 15000, timeoutMsg: "the filtered range never replaced the whole set's" });
  const processing = await rangeCount();
  assert.ok(processing > 0 && processing < stored, `a part of them (${processing})`);
  for (const row of await browser.$$("[data-testid=support-row] .pill")) assert.equal(await row.getText(), "processing");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-support");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // The filtered set exported: every row processing, as many as the count.
  await clickButton("Export filtered…");
  const path = await jobPath(".page.support [data-job=exported]", "csv");
  const lines = readFileSync(path, "utf8").trim().split("\n");
  assert.equal(lines.length - 1, processing, "one CSV row per transaction found");
  const cells = (line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].map((m) => m[1].replace(/^"|"$/g, "").replace(/""/g, '"')).slice(0, -1);
  const statusColumn = cells(lines[0]).indexOf("status");
  assert.ok(statusColumn >= 0, `a status column (${lines[0].slice(0, 80)})`);
  assert.ok(lines.slice(1).every((l) => cells(l)[statusColumn] === "processing"), "only processing ones");
  // A row opens its transaction (Enter on the focused row, as the keyboard does).
  const first = await $("[data-testid=support-row]");
  await first.scrollIntoView();
  await browser.execute(() => document.querySelector("[data-testid=support-row]")?.focus());
  await browser.keys("Enter");
  await waitText("h1", /Transaction/);

  // Go to: paste an id, and the same through Ctrl+K.
  await go("#/products");
  const goTo = await $("form[aria-label='Go to'] input");
  await goTo.setValue(transactionId);
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await browser.execute(() => window.location.hash)) === `#/transactions/${encodeURIComponent(transactionId)}`, { timeout: 15000, timeoutMsg: "Go to did not open the transaction" });
  await go("#/products");
  await browser.keys(["Control", "k"]);
  const command = await $("[role=dialog] input[aria-label=Command]");
  await command.waitForExist({ timeout: 5000 });
  await command.setValue("no-such-thing-42");
  await browser.keys("Enter");
  await waitText("[data-testid=palette-message]", /Nothing named no-such-thing-42/);
  await shot("palette-not-found");
  await browser.keys("Escape");
});

await step("token screen", async () => {
  await go("#/token");
  await waitText("[data-testid=token-phase]", /active/);
  await waitText("[data-testid=idle-countdown]", /\d\d:\d\d/);
  await clickButton("Introspect");
  await waitText("[data-testid=introspection]", /encompass_client_id/);
  await shot("token");
});

await step("connections screen", async () => {
  await go("#/connections");
  await waitText("table[aria-label=Connections]", /Embedded sandbox/);
  await shot("connections");
});

await step("check a connection step by step, and the calls it made in the Calls screen", async () => {
  await go("#/connections");
  const row = await $("//table[@aria-label='Connections']//tr[contains(., 'Embedded sandbox')]");
  await (await row.$("button=Check")).click();
  await waitText("[data-testid=connection-check-verdict]", /Every step passed/, 30000);
  const outcomes = await browser.execute(() =>
    [...document.querySelectorAll("[data-testid=connection-check] [data-step]")].map((li) => `${li.getAttribute("data-step")}:${li.getAttribute("data-outcome")}`),
  );
  for (const step of ["address:passed", "tcp:passed", "tls:skipped", "http:passed", "token:passed", "products:passed", "transactions:passed"]) {
    assert.ok(outcomes.includes(step), `${step} in ${outcomes}`);
  }
  await shot("connection-check");
  await clickButton("Close");

  // The Calls screen (Alt+8): the active connection's calls, newest first, each one's curl
  // with its secrets as variables.
  await go("#/calls");
  await (await $("[data-testid=call-row]")).waitForExist({ timeout: 15000 });
  assert.match(await (await $("table[aria-label=Calls]")).getProperty("textContent"), /\/partner\/v2\/(products|transactions)/);
  await (await $("[data-testid=call-row] button[aria-expanded]")).click();
  await (await $("[data-testid=call-details]")).waitForExist({ timeout: 5000 });
  await shot("calls");
});

// ---- Another implementation of the service: `partner-testkit`'s OtherService follows the spec
// to the letter and makes other choices wherever it leaves room (fields absent, unknown fields
// and values, another introspection). The app must read it as it reads the sandbox.
const otherServiceBinary = process.env.PARTNER_OTHER_SERVICE_BINARY;

/**
 * The second implementation in one dialect; resolves with its address and demo client, and
 * `notify(product, resource, url)`, which makes it send one signed notification of that
 * subscription (a line on its standard input) and resolves with `{ status, subscriptionId }`.
 */
async function startOtherService(dialect) {
  const child = spawn(otherServiceBinary, [dialect], { stdio: ["pipe", "pipe", "pipe"] });
  const said = {};
  let output = "";
  child.stderr.on("data", (d) => (output += d));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`other_service ${dialect} did not start: ${output}`)), 30000);
    child.on("exit", (code) => reject(new Error(`other_service ${dialect} exited (${code}): ${output}`)));
    child.stdout.on("data", (d) => {
      output += d;
      for (const line of output.split("\n")) {
        const m = /^(base URL|client id|client secret): (.+)$/.exec(line.trim());
        if (m) said[m[1]] = m[2];
      }
      if (said["client secret"]) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const notify = async (product, resource, url) => {
    const from = output.length;
    child.stdin.write(`notify ${product} ${resource} ${url}\n`);
    let answer = null;
    await browser.waitUntil(
      async () => {
        answer = /^(notified: (\d+) (\S+)|notify failed: .*)$/m.exec(output.slice(from));
        return answer !== null;
      },
      { timeout: 20000, timeoutMsg: `other_service never answered the notify: ${output.slice(from)}` },
    );
    if (!answer[2]) throw new Error(`other_service could not notify: ${answer[1]}`);
    return { status: Number(answer[2]), subscriptionId: answer[3] };
  };
  return { child, notify, baseUrl: said["base URL"], clientId: said["client id"], clientSecret: said["client secret"] };
}

async function addConnection(name, service) {
  await go("#/connections");
  await (await $("form[aria-label='Add a connection']")).waitForExist({ timeout: 15000 });
  await fillLabelled("Add a connection", "Name", name);
  await fillLabelled("Add a connection", "Base URL", service.baseUrl);
  await fillLabelled("Add a connection", "Client id", service.clientId);
  await fillLabelled("Add a connection", "Client secret", service.clientSecret);
  await clickButton("Add and sign in");
  await waitText(".topbar .conn-label", new RegExp(name.replace(/[()]/g, ".")), 20000);
}

/** The Raw JSON of the record open in the detail pane, parsed. */
async function rawJsonOfDetail(title) {
  const view = await $(`section.record-view[aria-label='${title}']`);
  await view.waitForExist({ timeout: 15000 });
  await (await view.$("button=Raw JSON")).click();
  const pre = await view.$("pre.json");
  await pre.waitForExist({ timeout: 5000 });
  return JSON.parse(await pre.getProperty("textContent"));
}

const otherServices = [];
await step("another implementation (fields left out): products and transactions read without the sandbox's fields", async () => {
  const service = await startOtherService("minimal");
  otherServices.push(service);
  await addConnection("Other service (minimal)", service);
  await go("#/products");
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  assert.ok(!(await (await $("[role=alert]")).isExisting()), "no error on the products screen");
  assert.match(await (await $("tbody")).getProperty("textContent"), /Zephyr Appraisals|Acme Flood Check|Mid Title/);
  await shot("other-service-minimal");
  await go("#/transactions");
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  assert.ok(!(await (await $("[role=alert]")).isExisting()), "no error on the transactions screen");
  const id = await (await $("tbody tr[data-row-id]")).getAttribute("data-row-id");
  await openSelected();
  await browser.waitUntil(async () => (await browser.execute(() => window.location.hash)).endsWith(id), { timeout: 15000 });
  // What the service sent and nothing more: the sandbox's own fields are not made up.
  const sent = await rawJsonOfDetail("Transaction as sent");
  assert.equal(sent.id, id);
  for (const field of ["updatedBy", "createdBy"]) assert.ok(!(field in sent), `${field} is not invented`);
  await shot("other-service-minimal-transaction");
});

await step("a read-only connection refuses a write before sending, and the audit log keeps every write", async () => {
  const readOnlyBox = "//tr[td[contains(., 'Other service (minimal)')]]//input[@data-testid='connection-read-only']";
  await go("#/connections");
  await (await $(readOnlyBox)).waitForClickable({ timeout: 15000 });
  await (await $(readOnlyBox)).click();
  await (await $("[data-testid=read-only-badge]")).waitForExist({ timeout: 10000 });
  await go("#/products");
  await clickButton("New product");
  await fillLabelled("New product", "Name", "read-only-e2e");
  await fillLabelled("New product", "Listing name", "Never sent");
  await clickButton("Create");
  await waitText("form[aria-label='New product'] [role=alert]", /read-only: "create a product" .* was not sent/);
  assert.match(await text("form[aria-label='New product'] [role=alert]"), /turn off "Read-only"/);
  await shot("read-only-refused");
  await clickButton("Cancel");

  await go("#/audit");
  await (await $("[data-testid=audit-row]")).waitForExist({ timeout: 15000 });
  // Text content, not rendered text: WebKitWebDriver drops the ellipsised cells' text.
  const rows = await browser.execute(() => [...document.querySelectorAll("[data-testid=audit-row]")].map((r) => r.textContent));
  assert.match(rows[0], /Other service \(minimal\)[\s\S]*create a product[\s\S]*refused/, `newest first: ${rows[0]}`);
  // Earlier steps' writes on the embedded sandbox: the responses and the key rotation, as the service answered them.
  assert.ok(rows.some((r) => /Embedded sandbox[\s\S]*respond to a transaction[\s\S]*done 200/.test(r)), rows.join("\n"));
  assert.ok(rows.some((r) => /rotate a signing key[\s\S]*done 200/.test(r)), rows.join("\n"));
  await (await $("[data-testid=audit-outcome]")).selectByAttribute("value", "refused");
  await browser.waitUntil(async () => (await browser.$$("[data-testid=audit-row]")).length === 1, { timeout: 5000, timeoutMsg: "the refused write alone" });
  await (await $("//tr[@data-testid='audit-row']//button[.='Details']")).click();
  await waitText("[data-testid=audit-details]", /POST \/partner\/v2\/products/);
  assert.match(await text("[data-testid=audit-sent]"), /read-only-e2e/);
  await shot("audit-log");
  await (await $("[data-testid=audit-outcome]")).selectByAttribute("value", "all");
  await (await $("[data-testid=audit-export-csv]")).click();
  const path = await jobPath("[data-job=exported]", "csv");
  const lines = readFileSync(path, "utf8").trim().split("\n");
  assert.match(lines[0], /^at,connection,via,/);
  assert.equal(lines.length - 1, rows.length, "every write exported");

  // Writes allowed again, for the steps after this one.
  await go("#/connections");
  await (await $(readOnlyBox)).waitForClickable({ timeout: 15000 });
  await (await $(readOnlyBox)).click();
  await browser.waitUntil(async () => !(await (await $("[data-testid=read-only-badge]")).isExisting()), { timeout: 10000, timeoutMsg: "the read-only badge stayed" });
});

await step("another implementation (unknown fields and values): kept as sent, and the environment it says shown", async () => {
  const service = await startOtherService("extra");
  otherServices.push(service);
  await addConnection("Other service (extra)", service);
  // Its tokens introspect as prod: the connection is coloured as production, and says why.
  await waitText("[data-testid=env-badge]", /production/i, 20000);
  await waitText("[data-testid=env-disagree]", /service says prod/);
  await go("#/products");
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  // Status values the spec does not show are shown as sent, never mapped to a known one.
  assert.match(await (await $("tbody")).getProperty("textContent"), /approved-pending|retired/);
  await shot("other-service-extra");
  await go("#/transactions");
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  await openSelected();
  const sent = await rawJsonOfDetail("Transaction as sent");
  assert.ok("priority" in sent, "a field the console does not know is kept in the Raw JSON");
  await shot("other-service-extra-transaction");
});

await step("another implementation (one sort key, problem details, rate limits, gzip): refusals in its words, the copy complete", async () => {
  const service = await startOtherService("demanding");
  otherServices.push(service);
  await addConnection("Other service (demanding)", service);
  await go("#/products");
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 20000 });
  const standing = async (key) => (await $(`button[data-sort-key=${key}]`)).getAttribute("data-standing");
  assert.equal(await standing("name"), "untried", "a key of another service is neither known good nor bad");
  // A key this service does not sort by: refused in its own words (RFC 7807 problem details),
  // and remembered on the header.
  await (await $("button[data-sort-key=name]")).click();
  await waitText("[role=alert]", /sorting by 'name' is not supported/, 20000);
  await browser.waitUntil(async () => (await standing("name")) === "refused", { timeout: 15000, timeoutMsg: "the refused key is not marked" });
  await shot("other-service-demanding-refused");
  await (await $("button[data-sort-key=listingName]")).click();
  await browser.waitUntil(async () => (await standing("listingName")) === "accepted", { timeout: 20000, timeoutMsg: "the accepted key is not marked" });
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  // The support copy walks by `updated`, which this service refuses: every transaction is read
  // instead (through its 429s), and the result says so.
  await go("#/support");
  await clickButton("Make a local copy");
  await waitText("[data-testid=sync-result]", /^Synced: /, 90000);
  assert.match(await text("[data-testid=support-summary]"), /^30 transactions/);
  await waitText("[data-testid=sync-fallback]", /does not sort by `updated`/);
  await shot("other-service-demanding-support");
  await useConnection("Embedded sandbox");
  // Removed again: the specs after this one count the saved connections.
  for (const name of ["Other service (minimal)", "Other service (extra)", "Other service (demanding)"]) {
    const row = await $(`//table[@aria-label='Connections']//tr[contains(., '${name}')]`);
    await (await row.$("button=Remove")).click();
    await row.waitForExist({ timeout: 15000, reverse: true });
  }
  for (const service of otherServices) service.child.kill();
});

await step("another implementation (no default sorts): the first screens in its own order with a quiet note", async () => {
  const service = await startOtherService("no-default-sorts");
  try {
    await addConnection("Other service (no default sorts)", service);
    for (const [screen, key] of [["products", "listingName"], ["transactions", "-created"]]) {
      await go(`#/${screen}`);
      await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 20000 });
      await waitText("[data-testid=sort-note]", new RegExp(`this service does not sort by ${key}`), 15000);
      assert.ok(!(await (await $("[role=alert]")).isExisting()), `no error box on ${screen}`);
      await shot(`other-service-no-default-sorts-${screen}`);
    }
    await useConnection("Embedded sandbox");
    const row = await $("//table[@aria-label='Connections']//tr[contains(., 'Other service (no default sorts)')]");
    await (await row.$("button=Remove")).click();
    await row.waitForExist({ timeout: 15000, reverse: true });
  } finally {
    service.child.kill();
  }
});

await step("another implementation (no subscription ids): subscribe and rotate by url and resource, the listener binds the id from the first notification", async () => {
  // partner-testkit's first seeded product, the one with a subscription (made elsewhere, so its key is not here).
  const product = "00009000-1111-4111-8111-000000000000";
  const resource = "urn:svc:partner:transaction";
  const rowOf = (url) => $(`//table[@aria-label='Subscriptions']//tr[@data-url='${url}']`);
  const binding = async (url) => (await rowOf(url)).getAttribute("data-binding");
  const service = await startOtherService("without-subscription-ids");
  try {
    await addConnection("Other service (no ids)", service);
    await go(`#/products/${product}`);
    await (await $("table[aria-label=Subscriptions]")).waitForExist({ timeout: 20000 });
    await waitText("[data-testid=no-ids-note]", /This service shows no subscription ids/);
    await browser.waitUntil(async () => (await binding("https://hooks.other.example/tx")) === "no-key", { timeout: 15000, timeoutMsg: "the seeded subscription's standing is not shown" });
    assert.match(await text("[data-testid=binding-summary]"), /1 with no key here/);

    // Subscribe the listener: the key shown once, the subscription waiting for its first notification.
    await clickButton("Add subscription");
    const urlInput = await $("//form[@aria-label='Add subscription']//label[contains(., 'Callback URL')]/input");
    await browser.waitUntil(async () => /^http:\/\/127\.0\.0\.1:\d+\//.test(await urlInput.getValue()), { timeout: 15000, timeoutMsg: "the listener's URL is not offered" });
    const url = await urlInput.getValue();
    await clickButton("Add");
    await waitText("[data-testid=shown-key]", /\S{32,}/);
    const firstKey = await text("[data-testid=shown-key]");
    await shot("product-no-ids-key-shown");
    await clickButton("Done");
    await browser.waitUntil(async () => (await binding(url)) === "waiting", { timeout: 15000, timeoutMsg: "the new subscription is not shown waiting" });
    await waitText(`//tr[@data-url='${url}']`, /not bound yet[\s\S]*waits for its first notification/);
    await waitText("[data-testid=binding-summary]", /1 waiting for its first notification, 1 with no key here/);
    await shot("product-no-ids-waiting");

    // The service's first notification names the id; the listener binds it, and the screen says so.
    const first = await service.notify(product, resource, url);
    assert.equal(first.status, 200, "verified with the key kept for the element");
    await browser.waitUntil(async () => (await binding(url)) === "bound", { timeout: 15000, timeoutMsg: "the binding is not shown" });
    assert.equal(await (await rowOf(url)).getAttribute("data-bound-id"), first.subscriptionId);
    await waitText("[data-testid=binding-summary]", /1 bound by the listener, 1 with no key here/);
    await shot("product-no-ids-bound");

    // Rotate by url and resource: a new key, the old one verifying until retired, the binding kept.
    await (await (await rowOf(url)).$("[data-testid=element-rotate]")).click();
    await waitText("form[aria-label='Rotate signing key'] h3", new RegExp(`Rotate the signing key of ${url.replace(/[.?]/g, "\\$&")} \\(transaction\\)`));
    await clickButton("Rotate");
    await waitText("[role=dialog][aria-label='New signing key']", /previous key still verifies/);
    const rotatedKey = await text("[data-testid=shown-key]");
    assert.notEqual(rotatedKey, firstKey);
    await clickButton("Done");
    await waitText(`//tr[@data-url='${url}']`, /previous verifies/);
    assert.equal(await binding(url), "bound");
    const second = await service.notify(product, resource, url);
    assert.deepEqual(second, { status: 200, subscriptionId: first.subscriptionId }, "signed with the new key, verified");
    await shot("product-no-ids-rotated");

    // The smallest window: the table and its note still fit.
    await browser.setWindowSize(960, 600);
    try {
      // Scrolled by the page itself: WebDriver's wheel action is refused on this element.
      await browser.execute(() => document.querySelector("[data-testid=no-ids-note]")?.closest("section")?.scrollIntoView());
      const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
      await shot("small-product-no-ids");
    } finally {
      await browser.setWindowSize(1280, 800);
    }

    // Delete it by url and resource, so the keychain keeps nothing of a service that is gone.
    await (await (await rowOf(url)).$("[data-testid=element-delete]")).click();
    await (await $("[data-testid=subscription-delete-confirm] button.danger-fill")).click();
    await waitText("[data-testid=subscription-done]", /deleted; its signing keys were removed from the keychain/);
    await (await rowOf(url)).waitForExist({ timeout: 15000, reverse: true });

    await useConnection("Embedded sandbox");
    const row = await $("//table[@aria-label='Connections']//tr[contains(., 'Other service (no ids)')]");
    await (await row.$("button=Remove")).click();
    await row.waitForExist({ timeout: 15000, reverse: true });
  } finally {
    service.child.kill();
  }
});

// ---- A console you come back to: the real app quit and started again on the same data folder
// and keyring. What was set up before the restart must all be there after it.
// (`cliBinary` is read at the top: the capture search step runs `partner` before the restart specs.)
const scratch = process.env.PARTNER_E2E_SCRATCH;
const SECOND_CLIENT = "e2e-partner";
const SECOND_SECRET = "E2eSecondSandboxSecret-0123456789";
const ROTATED_KEY = "E2eRotatedKey#0123456789abcdefghijKLMN"; // current since "rotate a signing key"
const SECOND_KEY = "E2eSecondKey#0123456789abcdefghijKLMNOP";
const TUNNEL = "https://e2e-tunnel.example.invalid/webhooks";

/** Runs the `partner` command; resolves with its stdout, rejects with its stderr. */
function partner(args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(cliBinary, args, { env: { ...process.env, ...env }, timeout: 60000, maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`partner ${args.join(" ")}: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** `partner sandbox --data FILE` on a free port, as a partner developer runs one; resolves once
 * it listens. */
async function startCliSandbox(port, dataFile) {
  const child = spawn(cliBinary, ["sandbox", "--addr", `127.0.0.1:${port}`, "--data", dataFile, "--client", `${SECOND_CLIENT}:${SECOND_SECRET}`, "--demo", "--allow-http-callbacks", "--retry-delay", "1s"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr.on("data", (d) => (output += d));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`partner sandbox did not start: ${output}`)), 30000);
    child.stdout.on("data", (d) => {
      output += d;
      if (/listening on/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`partner sandbox exited (${code}): ${output}`)));
  });
  return child;
}

async function stopProcess(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Quits the app (the window closes, the app exits) and waits until its listener's port is
 * free, so the next start finds its address as a user's next launch would. */
async function quitApp(listenerPort, { terminate = false } = {}) {
  if (terminate) {
    // As a session logging out does: SIGTERM, which the app answers with its clean stop.
    // The app under test: the partner-console whose data folder is this run's.
    const all = await new Promise((resolve) =>
      execFile("pgrep", ["-x", "partner-console"], (_error, out) => resolve(String(out).trim().split("\n").filter(Boolean))),
    );
    const ours = `PARTNER_DATA_DIR=${process.env.PARTNER_DATA_DIR}`;
    const pids = all.filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(ours);
      } catch {
        return false;
      }
    });
    assert.equal(pids.length, 1, `one app of this run to terminate (${pids.join(", ")} of ${all.join(", ")})`);
    process.kill(Number(pids[0]), "SIGTERM");
    const deadline = Date.now() + 20000;
    while (await listening(listenerPort)) {
      if (Date.now() > deadline) throw new Error(`the app's listener on ${listenerPort} did not stop after SIGTERM`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await browser.deleteSession().catch(() => {});
  const deadline = Date.now() + 20000;
  while (await listening(listenerPort)) {
    if (Date.now() > deadline) throw new Error(`the app's listener on ${listenerPort} did not stop`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function notify(address, subscription, key, eventId) {
  const body = JSON.stringify({
    eventId,
    eventTime: new Date().toISOString(),
    eventType: "created",
    meta: { instanceId: "e2e", resourceId: eventId, resourceType: "urn:svc:partner:transaction", resourceRef: "http://127.0.0.1/partner/v2/transactions/e2e" },
  });
  const signature = createHmac("sha256", key).update(body).digest("base64");
  return fetch(`http://${address}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json", "Svc-Signature": signature, "Svc-SubscriptionId": subscription, "Svc-Environment": "prod" },
    body,
  });
}

async function useConnection(label) {
  await go("#/connections");
  const row = await $(`//table[@aria-label='Connections']//tr[contains(., '${label}')]`);
  await row.waitForExist({ timeout: 15000 });
  const use = await row.$("button=Use");
  if (await use.isExisting()) await use.click();
  await waitText(".topbar .conn-label", new RegExp(label.replace(/[()]/g, "."), "i"), 20000);
}

async function fillLabelled(form, label, value) {
  const input = await $(`//form[@aria-label='${form}']//label[contains(., '${label}')]/input`);
  await input.clearValue();
  await input.setValue(value);
}

// The team workspace (issue 50): a real PostgreSQL (partner-testkit's throwaway_postgres),
// `partner server init`, two members, the service connection to a `partner sandbox` of its own
// and `partner server run`; the app joins it through the Connections screen as each member.
const pgBinary = process.env.PARTNER_PG_BINARY;

/** Resolves with `pattern`'s match in `child`'s output, rejects if it exits or takes too long. */
function outputMatch(child, pattern, what, timeout = 60000) {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeout} ms: ${output}`)), timeout);
    const look = (d) => {
      output += d;
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout.on("data", look);
    child.stderr.on("data", (d) => (output += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}): ${output}`));
    });
  });
}

/** `partner ARGS` with `input` on its standard input (a secret never goes in an argument). */
function partnerWithInput(args, input, env) {
  return new Promise((resolve, reject) => {
    const child = execFile(cliBinary, args, { env: { ...process.env, ...env }, timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`partner ${args.join(" ")}: ${stderr || error.message}`));
      else resolve(stdout);
    });
    child.stdin.end(input);
  });
}

const tokenOf = (output) => {
  const match = /^token: (\S+)$/m.exec(output);
  assert.ok(match, `a token printed once: ${output.replace(/token: \S+/g, "token: …")}`);
  return match[1];
};

async function startWorkspace() {
  const parts = {};
  try {
    parts.pg = spawn(pgBinary, [], { stdio: ["pipe", "pipe", "pipe"] });
    const database = (await outputMatch(parts.pg, /^database: (\S+)$/m, "PostgreSQL"))[1];
    const env = { PARTNER_DATABASE_URL: database, PARTNER_SERVER_KEY_FILE: join(scratch, "workspace-server.key") };
    parts.env = env;
    tokenOf(await partner(["server", "init"], env));
    parts.support = tokenOf(await partner(["server", "member", "add", "Sam", "--role", "support"], env));
    parts.viewer = tokenOf(await partner(["server", "member", "add", "Vera", "--role", "viewer"], env));
    const sandboxPort = await closedPort();
    parts.sandbox = await startCliSandbox(sandboxPort, join(scratch, "workspace-sandbox.sqlite3"));
    await partnerWithInput(["server", "service", "set", "--base-url", `http://127.0.0.1:${sandboxPort}`, "--client-id", SECOND_CLIENT, "--client-secret-stdin"], SECOND_SECRET, env);
    const port = await closedPort();
    parts.server = spawn(cliBinary, ["server", "run", "--addr", `127.0.0.1:${port}`], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    await outputMatch(parts.server, /listening on/, "partner server");
    parts.url = `http://127.0.0.1:${port}`;
    parts.address = `127.0.0.1:${port}`;
    return parts;
  } catch (error) {
    await stopWorkspace(parts);
    throw error;
  }
}

async function stopWorkspace(parts) {
  if (parts.server) await stopProcess(parts.server).catch(() => {});
  if (parts.sandbox) await stopProcess(parts.sandbox).catch(() => {});
  if (parts.pg && parts.pg.exitCode === null) {
    // Its standard input closed: it stops the cluster and removes its folder, then exits.
    const exited = new Promise((resolve) => parts.pg.on("exit", resolve));
    parts.pg.stdin.end();
    await exited;
  }
}

async function joinWorkspace(url, token, member, role) {
  await go("#/connections");
  const section = "[data-testid=team-workspace]";
  await (await $(section)).waitForExist({ timeout: 15000 });
  if (await (await $("[data-testid=team-leave]")).isExisting()) {
    await (await $("[data-testid=team-leave]")).click();
    await (await $("[data-testid=team-join]")).waitForExist({ timeout: 15000 });
  }
  await (await $("[data-testid=team-url-input]")).setValue(url);
  await (await $("[data-testid=team-token-input]")).setValue(token);
  await (await $("[data-testid=team-join]")).click();
  await waitText("[data-testid=team-member]", new RegExp(`^${member}$`), 20000);
  assert.equal(await text("[data-testid=team-role]"), role);
}

async function leaveWorkspace() {
  await go("#/connections");
  const leave = await $("[data-testid=team-leave]");
  if (await leave.isExisting()) {
    await leave.click();
    await (await $("[data-testid=team-join]")).waitForExist({ timeout: 15000 });
  }
}

let workspace = null;
await step("team workspace: joined as support, the support desk answers from the team's index", async () => {
  workspace = await startWorkspace();
  // A wrong token is refused and leaves nothing: the form stays, with why.
  await go("#/connections");
  await (await $("[data-testid=team-url-input]")).setValue(workspace.url);
  await (await $("[data-testid=team-token-input]")).setValue("not-a-token-of-this-workspace");
  await (await $("[data-testid=team-join]")).click();
  const refused = await $("[data-testid=team-workspace] [role=alert]");
  await refused.waitForExist({ timeout: 15000, timeoutMsg: "a wrong token was not refused" });
  assert.doesNotMatch(await refused.getText(), /not-a-token-of-this-workspace/, "the refusal never shows the token");
  assert.equal(await (await $("[data-testid=team-leave]")).isExisting(), false, "not joined with a wrong token");
  await joinWorkspace(workspace.url, workspace.support, "Sam", "support");
  await waitText(".topbar", /Team: Sam \(support\)/);
  await shot("workspace-joined");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await (await $("[data-testid=team-workspace]")).scrollIntoView();
    await shot("small-workspace-joined");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // The support desk says where its answers come from, and a support member may sync it.
  await go("#/support");
  await waitText("[data-testid=support-workspace]", new RegExp(workspace.url.replace(/[.]/g, "\\.")));
  const sync = await $("[data-testid=support-sync]");
  if (await sync.isExisting()) {
    assert.equal(await sync.isEnabled(), true, "support may sync the team's index");
    await sync.click();
  }
  await browser.waitUntil(async () => /^[1-9][\d,]* transactions/.test(await text("[data-testid=support-summary]").catch(() => "")), { timeout: 90000, timeoutMsg: "the team's index never held the sandbox's transactions" });
  await clickButton("Find");
  await (await $("[data-testid=support-row]")).waitForExist({ timeout: 15000 });
  await shot("workspace-support");
  // A note on a transaction, written as Sam: the team sees it with its author and time.
  await browser.execute(() => document.querySelector("[data-testid=support-row]")?.focus());
  await browser.keys("Enter");
  await waitText("h1", /Transaction/);
  workspace.transactionHash = await browser.execute(() => window.location.hash);
  const box = await $("section[aria-label=Notes] textarea[aria-label='New note']");
  await box.waitForExist({ timeout: 15000 });
  await box.setValue("Called the lender: the documents arrive Monday.");
  await (await $("section[aria-label=Notes] button[type=submit]")).click();
  await browser.waitUntil(async () => (await $$text("section[aria-label=Notes] [data-testid=note]")).some((t) => /Sam/.test(t) && /documents arrive Monday/.test(t)), { timeout: 15000, timeoutMsg: "the note was not shown with its author" });
  await (await $("section[aria-label=Notes]")).scrollIntoView();
  await shot("workspace-transaction-note");
  // The inspector shows the workspace's captures, live: a notification signed with a key the
  // servers keep arrives at the team's endpoint and is on screen without a reload; one signed
  // with another key is there too, as invalid-signature. Sam (support) may not clear them.
  const subscription = "e2e-team-subscription";
  const teamKey = "E2eTeamKey#0123456789abcdefghijKLMNOP";
  await partnerWithInput(["server", "key", "set", subscription, "--key-stdin"], teamKey, workspace.env);
  await go("#/webhooks");
  await waitText("[data-testid=inspector-source]", /team workspace/);
  assert.equal((await notify(workspace.address, subscription, teamKey, "e2e-team-event-1")).status, 200);
  assert.equal((await notify(workspace.address, subscription, "E2eNotTheKey#0123456789abcdefghijKLMN", "e2e-team-event-2")).status, 401);
  await browser.waitUntil(async () => (await browser.$$("[data-verdict=valid][data-capture-id]")).length >= 1 && (await browser.$$("[data-verdict=invalid-signature][data-capture-id]")).length >= 1, { timeout: 30000, timeoutMsg: "the workspace's captures did not arrive live in the inspector" });
  await waitText("[data-testid=clear-refused]", /A support member may not clear captures|may not clear captures: developer and up may/);
  assert.equal(await (await $("[data-testid=clear-all]")).isEnabled(), false, "support's Clear all is disabled");
  await shot("workspace-inspector");
  await browser.setWindowSize(960, 600);
  try {
    await shot("small-workspace-inspector");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // The missed check is the workspace's servers' (over the team's captures, with the service
  // connection only they hold): the card says whose listener it compares with.
  await waitText("[data-testid=missed]", /while the workspace's listener was down/);
  await (await $("[data-testid=missed]")).click();
  await (await $("[data-testid=missed-find]")).click();
  await (await $("[data-testid=missed-report]")).waitForExist({ timeout: 60000 });
  assert.match(await text("[data-testid=missed-report]"), /transactions read/);
  await (await $("[data-testid=missed]")).scrollIntoView();
  await shot("workspace-missed");
  await browser.setWindowSize(960, 600);
  try {
    await (await $("[data-testid=missed]")).scrollIntoView({ block: "center" });
    await shot("small-workspace-missed");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
});

await step("team workspace: a viewer sees what the role may not do disabled, with why; leaving returns to this machine's store", async () => {
  assert.ok(workspace, "the workspace of the step before");
  await joinWorkspace(workspace.url, workspace.viewer, "Vera", "viewer");
  await waitText("[data-testid=team-may-not]", /answer|sync/i);
  await go("#/support");
  await waitText("[data-testid=support-sync-refused]", /A viewer may not sync the support index: support and up may/);
  assert.equal(await (await $("[data-testid=support-sync]")).isEnabled(), false, "a viewer's Sync is disabled");
  await shot("workspace-viewer-support");
  await browser.setWindowSize(960, 600);
  try {
    await shot("small-workspace-viewer-support");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // Sam's note, seen by Vera; her own Add is disabled, with why.
  await go(workspace.transactionHash);
  await browser.waitUntil(async () => (await $$text("section[aria-label=Notes] [data-testid=note]")).some((t) => /Sam/.test(t) && /documents arrive Monday/.test(t)), { timeout: 15000, timeoutMsg: "the viewer does not see the support member's note" });
  await waitText("section[aria-label=Notes] [data-testid=note-refused]", /A viewer may not write notes/);
  assert.equal(await (await $("section[aria-label=Notes] button[type=submit]")).isEnabled(), false, "a viewer's Add is disabled");
  await (await $("section[aria-label=Notes]")).scrollIntoView();
  await shot("workspace-viewer-note");
  // The transaction is the team's service's (the app's own connection, its embedded sandbox,
  // has no such id): its events come through the workspace, and "Go to" finds it there.
  const transactionId = decodeURIComponent(workspace.transactionHash.replace(/^#\/transactions\//, "").split("?")[0]);
  await browser.waitUntil(async () => (await browser.$$("ol[aria-label='Events timeline'] li[data-event-id]")).length >= 1, { timeout: 15000, timeoutMsg: "the team's transaction showed no events" });
  const eventsError = await browser.execute(() => [...document.querySelectorAll("section.card")].find((c) => c.querySelector("h2")?.textContent === "Events timeline")?.querySelector("[role=alert]")?.textContent ?? null);
  assert.equal(eventsError, null, `no error beside the events: ${eventsError}`);
  await go("#/products");
  const goTo = await $("form[aria-label='Go to'] input");
  await goTo.setValue(transactionId);
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await browser.execute(() => window.location.hash)) === `#/transactions/${encodeURIComponent(transactionId)}`, { timeout: 15000, timeoutMsg: "Go to did not open the team's transaction" });
  await browser.keys(["Control", "k"]);
  const command = await $("[role=dialog] input[aria-label=Command]");
  await command.waitForExist({ timeout: 5000 });
  await command.setValue("no-such-team-thing-42");
  await browser.keys("Enter");
  await waitText("[data-testid=palette-message]", /Nothing named no-such-team-thing-42 in the team workspace/);
  await browser.keys("Escape");
  // The audit log is the workspace's: Sam's writes, by name and role, seen by Vera.
  await go("#/audit");
  await waitText("[data-testid=audit-workspace]", new RegExp(workspace.url.replace(/[.]/g, "\\.")));
  // Read from the page (WebKitWebDriver's element text of a table row can come back empty).
  const auditRows = () => browser.execute(() => [...document.querySelectorAll("[data-testid=audit-row]")].map((row) => row.textContent));
  await browser.waitUntil(async () => (await auditRows()).some((t) => /Sam\s*\(support\)/.test(t) && /write-note/.test(t)), { timeout: 15000, timeoutMsg: "the workspace's audit log does not show Sam's note" });
  await shot("workspace-audit");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling on the audit log (${overflow} px)`);
    await shot("small-workspace-audit");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  await leaveWorkspace();
  assert.doesNotMatch(await text(".topbar"), /Team:/);
  await go("#/support");
  await browser.waitUntil(async () => !(await (await $("[data-testid=support-workspace]")).isExisting()), { timeout: 15000, timeoutMsg: "the support desk still says the workspace after leaving" });
});
if (workspace) {
  await leaveWorkspace().catch(() => {});
  await stopWorkspace(workspace);
}

const before = {};
let cliSandbox = null;
const cliSandboxPort = await closedPort();
const cliSandboxFile = join(scratch, "cli-sandbox.sqlite3");

await step("restart: set up what must survive", async () => {
  // A second connection, to a sandbox a developer runs with `partner sandbox --data`.
  cliSandbox = await startCliSandbox(cliSandboxPort, cliSandboxFile);
  await go("#/connections");
  await (await $("form[aria-label='Add a connection']")).waitForExist({ timeout: 15000 });
  await fillLabelled("Add a connection", "Name", "Second sandbox");
  await fillLabelled("Add a connection", "Base URL", `http://127.0.0.1:${cliSandboxPort}`);
  await fillLabelled("Add a connection", "Client id", SECOND_CLIENT);
  await fillLabelled("Add a connection", "Client secret", SECOND_SECRET);
  await clickButton("Add and sign in");
  await waitText(".topbar .conn-label", /Second sandbox/, 20000);
  await useConnection("Embedded sandbox");

  // The listener's address, as the top bar shows it.
  await waitText("[data-testid=listener-url]", /^http:\/\/127\.0\.0\.1:\d+\/webhooks/);
  before.listenerUrl = (await text("[data-testid=listener-url]")).trim();
  before.listenerAddress = new URL(before.listenerUrl).host;

  // A second rotation with a known key: the key of "rotate a signing key" becomes the previous.
  await go(`#/products`);
  await (await $("tbody tr[data-row-id]")).waitForExist({ timeout: 15000 });
  await openSelected();
  const row = await $(`table[aria-label=Subscriptions] tbody tr[data-subscription-id='${subscriptionId}']`);
  await row.waitForExist({ timeout: 15000 });
  before.productId = (await browser.execute(() => window.location.hash)).split("/").pop();
  await (await row.$("button=Rotate key")).click();
  await (await $("label=Paste my own")).click();
  await (await $("input[aria-label='Signing key']")).setValue(SECOND_KEY);
  await waitText("[data-testid=key-problems]", /meets the rule/);
  await clickButton("Rotate");
  await waitText("[data-testid=shown-key]", /E2eSecondKey/);
  await clickButton("Done");

  // A product and a transaction made in the embedded sandbox.
  await go("#/products");
  await clickButton("New product");
  await fillLabelled("New product", "Name", "e2e-restart");
  await fillLabelled("New product", "Listing name", "E2E made before the restart");
  await clickButton("Create");
  await browser.waitUntil(async () => /#\/products\/[\w-]{8,}/.test(await browser.execute(() => window.location.hash)), { timeout: 15000, timeoutMsg: "the new product did not open" });
  before.newProductId = (await browser.execute(() => window.location.hash)).split("/").pop();
  const base = (await text(".topbar .mono")).trim();
  const created = await fetch(`${base}/sandbox/v1/transactions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ productId: before.newProductId, requestType: "NEW_REQUEST", loan: { loanNumber: "E2E-RESTART" } }),
  });
  assert.equal(created.status, 201, "the lender created a transaction");
  before.transactionId = (await created.json()).id;

  // Capture retention, kept in the settings.
  await go("#/webhooks");
  await (await $("[data-testid=listener-settings]")).click();
  const keep = await $("[data-testid=retention-max-captures]");
  await keep.waitForDisplayed({ timeout: 5000 });
  await keep.clearValue();
  await keep.setValue("5000");
  const junkRate = await $("[data-testid=retention-junk-rate]");
  await junkRate.clearValue();
  await junkRate.setValue("50");
  await (await $("[data-testid=retention-save]")).click();
  await waitText("[data-testid=listener-settings]", /at most 5000 captures.*junk past 50\/s counted/);
  await shot("webhooks-listener-settings");

  // The test mode, on: every notification's first attempt fails with 503.
  await setTestMode(true, { "Fail first": "1", "Failure status": "503" });

  // The tunnel URL of this connection.
  await saveTunnel(TUNNEL);
  await waitText("[data-testid=tunnel-status]", /Tunnel/);
  before.captures = (await browser.$$("[data-capture-id]")).length;
  assert.ok(before.captures > 0, "captures before the restart");
});

await step("restart: quit the app and start it again", async () => {
  await quitApp(Number(before.listenerAddress.split(":")[1]), { terminate: true });
  // Quitting closed the listener's run, so the next start knows when it went down.
  // The store is encrypted at rest: `partner listen runs` reads it with the app's data key (the
  // same data folder, so the same key).
  const runs = await new Promise((resolve, reject) =>
    execFile(cliBinary, ["listen", "runs", "--db", join(process.env.PARTNER_DATA_DIR, "captures.sqlite3")], (error, out) =>
      error ? reject(error) : resolve(out.split("\n").filter(Boolean).map((line) => JSON.parse(line))),
    ),
  );
  assert.ok(runs.length >= 1 && runs.every((run) => run.stoppedAt != null), `every run of the listener has its stop: ${JSON.stringify(runs)}`);
  browser = await openApp();
  await (await $("[data-row-id]")).waitForExist({ timeout: 60000 });
  await waitText(".topbar .conn-label", /Embedded sandbox/);
});

await step("after the restart: the listener's address, the tunnel URL and the captures are kept", async () => {
  await waitText("[data-testid=listener-url]", /^http/);
  assert.equal((await text("[data-testid=listener-url]")).trim(), before.listenerUrl, "the listener is on the same address");
  await waitText("[data-testid=tunnel-status]", /Tunnel/);
  await go("#/webhooks");
  await (await $("[data-capture-id]")).waitForExist({ timeout: 15000 });
  assert.equal(await (await $("input[aria-label='Tunnel URL']")).getValue(), TUNNEL, "the tunnel URL is shown");
  await waitText("[data-testid=listener-settings]", /at most 5000 captures.*junk past 50\/s counted/);
  await browser.waitUntil(async () => (await browser.$$("[data-capture-id]")).length >= before.captures, { timeout: 15000, timeoutMsg: "the captures from before are listed" });
  assert.ok(await (await $("[data-verdict=invalid-signature][data-capture-id]")).isExisting(), "the wrong-key capture from before is there");
  await waitText("[data-testid=desktop-notices-summary]", /1 of 3 on/);
  await shot("restart-webhooks");
});

await step("after the restart: the test mode is still on, answering as it was set", async () => {
  await go("#/webhooks");
  await waitText("[data-testid=test-mode-summary]", /first attempt fails with 503/);
  const response = await notify(before.listenerAddress, subscriptionId, SECOND_KEY, "e2e-after-restart-test-mode");
  assert.equal(response.status, 503, `the first attempt failed on purpose (${response.status})`);
  await browser.waitUntil(async () => (await (await $("[data-capture-id]")).getAttribute("data-event-id")) === "e2e-after-restart-test-mode", { timeout: 15000, timeoutMsg: "the failed attempt is not listed" });
  await setTestMode(false);
  // Off, its values wait for the next time it is turned on.
  await (await $("[data-testid=test-mode]")).click();
  assert.equal(await (await $("form[aria-label='Test mode'] input[aria-label='Failure status']")).getValue(), "503");
  await (await $("[data-testid=test-mode]")).click();
});

await step("after the restart: a notification signed with the previous key verifies, in its grace period", async () => {
  const response = await notify(before.listenerAddress, subscriptionId, ROTATED_KEY, "e2e-after-restart-previous-key");
  assert.equal(response.status, 200, `the listener acknowledged it (${response.status})`);
  // Newest first: the notification just sent becomes the first row.
  await browser.waitUntil(async () => (await (await $("[data-capture-id]")).getAttribute("data-event-id")) === "e2e-after-restart-previous-key", { timeout: 15000, timeoutMsg: "the notification did not show" });
  const row = await $("[data-capture-id]");
  assert.equal(await row.getAttribute("data-verdict"), "valid");
  await row.click();
  await waitText("[data-testid=detail-verdict]", /valid/);
  assert.ok((await browser.getPageSource()).includes("e2e-after-restart-previous-key"), "the detail is the notification sent");
  await (await $("button=signature")).click();
  await waitText("[data-testid=signature-explanation]", /previous key/);
});

await step("after the restart: the service's notification for a subscription made before it is valid", async () => {
  const seen = (await browser.$$("[data-verdict=valid][data-capture-id]")).length;
  await go("#/demo");
  await (await $("select[aria-label='Demo product']")).waitForExist({ timeout: 15000 });
  await clickButton("New transaction");
  await waitText("ol[aria-label='Demo log']", /created transaction/);
  await go("#/webhooks");
  await browser.waitUntil(async () => (await browser.$$("[data-verdict=valid][data-capture-id]")).length > seen, { timeout: 30000, timeoutMsg: "no new valid capture" });
  assert.equal((await browser.$$("[data-verdict=unknown-subscription][data-capture-id]")).length, 0, "nothing judged unknown-subscription");
});

await step("after the restart: the embedded sandbox kept its product and transaction", async () => {
  await go(`#/transactions/${before.transactionId}`);
  await browser.waitUntil(async () => (await $$text(".page .toolbar")).some((t) => t.includes(before.transactionId)), { timeout: 15000, timeoutMsg: "the transaction made before the restart did not open" });
  await go(`#/products/${before.newProductId}`);
  await browser.waitUntil(async () => (await browser.getPageSource()).includes("E2E made before the restart"), { timeout: 15000, timeoutMsg: "the product made before the restart did not open" });
  await shot("restart-product");
});

await step("after the restart: switch to the second connection and back", async () => {
  await useConnection("Second sandbox");
  await go("#/products");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  await shot("restart-connections-second");
  await useConnection("Embedded sandbox");
  await go("#/connections");
  await shot("connections");
});

await step("after the restart: clear the captures", async () => {
  await go("#/webhooks");
  await (await $("[data-capture-id]")).waitForExist({ timeout: 15000 });
  await (await $("[data-testid=clear-all]")).click();
  const confirm = await $("button*=Delete");
  await confirm.waitForClickable({ timeout: 5000 });
  assert.match(await confirm.getText(), /Delete [\d,]+\+? captures?/);
  await confirm.click();
  await browser.waitUntil(async () => (await browser.$$("[data-capture-id]")).length === 0, { timeout: 15000, timeoutMsg: "captures still listed after clear" });
  await shot("restart-cleared");
});

await step("delete a subscription: gone from the service, its keys from the keychain", async () => {
  await go(`#/products/${before.productId}`);
  const rows = "table[aria-label=Subscriptions] tbody tr[data-subscription-id]";
  await (await $(rows)).waitForExist({ timeout: 15000 });
  const count = (await browser.$$(rows)).length;
  const last = (await browser.$$(rows))[count - 1];
  const id = await last.getAttribute("data-subscription-id");
  assert.notEqual(id, subscriptionId, "the transaction subscription stays for the specs after this one");
  await (await $(`[data-testid=subscription-delete-${id}]`)).click();
  await (await $("[data-testid=subscription-delete-confirm]")).waitForExist({ timeout: 5000 });
  await shot("product-detail-delete-subscription");
  await clickButton("Delete subscription");
  await browser.waitUntil(async () => (await browser.$$(rows)).length === count - 1, { timeout: 15000, timeoutMsg: "the subscription is still listed" });
  await (await $("[data-testid=subscription-done]")).waitForExist({ timeout: 5000 });
});

await step("check a receiver: the console's own listener against the spec's webhook rules", async () => {
  await go(`#/products/${before.productId}`);
  const run = `[data-testid=receiver-check-${subscriptionId}] [data-testid=receiver-check-run]`;
  await (await $(`[data-testid=subscription-check-${subscriptionId}]`)).waitForExist({ timeout: 15000 });
  await (await $(`[data-testid=subscription-check-${subscriptionId}]`)).click();
  await (await $(run)).waitForDisplayed({ timeout: 5000 });
  // The listener is plain http on loopback: allowed (a warning) without asking.
  assert.equal(await (await $(`[data-testid=receiver-check-${subscriptionId}] input[type=checkbox]`)).isSelected(), true);
  await (await $(run)).click();
  const report = await $("[data-testid=receiver-report]");
  await report.waitForExist({ timeout: 60000 });
  const outcomes = {};
  for (const rule of await browser.$$("[data-testid=receiver-report] [data-rule]")) {
    outcomes[await rule.getAttribute("data-rule")] = await rule.getAttribute("data-outcome");
  }
  assert.deepEqual(outcomes, {
    "https-trusted-certificate": "warn",
    "tls-1.2-or-above": "skipped",
    "acknowledged-in-time": "pass",
    "signature-verified": "pass",
    "redelivery-acknowledged": "pass",
    "no-sensitive-data": "pass",
  });
  assert.equal(await report.getAttribute("data-failed"), "0");
  // The evidence of the signature rule: six forgeries, each refused, and a correctly signed
  // notification written pretty, taken.
  const signature = await $("[data-testid=receiver-report] [data-rule=signature-verified]");
  await (await signature.$("summary")).click();
  await browser.waitUntil(async () => /\b4\d\d\b/.test(await signature.getText()), { timeout: 5000, timeoutMsg: "the forgeries' answers are not shown" });
  assert.doesNotMatch(await browser.getPageSource(), /E2eRotatedKey/, "the key is nowhere on the page");
  await shot("product-detail-receiver-check");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await (await $("[data-testid=receiver-report]")).scrollIntoView();
    await shot("small-product-detail-receiver-check");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  await clickButton("Close");

  // The same check from the Webhooks screen, over the subscriptions that reach the listener.
  await go("#/webhooks");
  await (await $("[data-testid=listener-checks]")).waitForExist({ timeout: 15000 });
  await (await $("[data-testid=listener-checks]")).click();
  const fromWebhooks = `[data-testid=listener-check-${subscriptionId}]`;
  await (await $(fromWebhooks)).waitForExist({ timeout: 15000 });
  await (await $(fromWebhooks)).click();
  await (await $(run)).click();
  await (await $("[data-testid=receiver-report]")).waitForExist({ timeout: 60000 });
  assert.equal(await (await $("[data-testid=receiver-report]")).getAttribute("data-failed"), "0");
  await shot("webhooks-listener-check");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-listener-check");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  await clickButton("Close");
  await (await $("[data-testid=listener-checks]")).click();
});

await step("reset the embedded sandbox: back to its demo data", async () => {
  await go("#/connections");
  await (await $("[data-testid=reset-sandbox]")).click();
  await (await $("[data-testid=reset-sandbox-confirm]")).waitForExist({ timeout: 5000 });
  await shot("connections-reset-sandbox");
  const oldBase = (await text(".topbar .mono")).trim();
  await clickButton("Yes, reset the sandbox");
  // Done when the screen says the sandbox started again (or what failed).
  await browser.waitUntil(
    async () =>
      /started again from its demo data/.test(await browser.execute(() => document.body.textContent)) || (await $(".error-panel, [role=alert]").isExisting()),
    { timeout: 30000, timeoutMsg: "the reset neither finished nor failed" },
  );
  const failure = await $(".error-panel, [role=alert]");
  if (await failure.isExisting()) throw new Error(`the reset failed: ${await failure.getText()}`);
  // Its address is kept, so what earlier captures name still points at it.
  assert.equal((await text(".topbar .mono")).trim(), oldBase, "the embedded sandbox kept its port across the reset");
  await waitText("[data-testid=demo-subscription]", /Demo webhooks: .+ → listener/, 30000);
  await go(`#/products/${before.newProductId}`);
  await browser.waitUntil(async () => /not found|no such|404/i.test(await browser.getPageSource()), { timeout: 15000, timeoutMsg: "the product made before the reset is still there" });
  await go("#/products");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
});

await step("missed notifications: the listener stopped while the sandbox sent, listed once it is back", async () => {
  const base = (await text(".topbar .mono")).trim();
  const deliveries = async () => (await (await fetch(`${base}/sandbox/v1/deliveries`)).json());
  const newTransaction = async () => {
    await go("#/demo");
    await (await $("select[aria-label='Demo product']")).waitForExist({ timeout: 15000 });
    const before = await text("ol[aria-label='Demo log']");
    await clickButton("New transaction");
    await browser.waitUntil(async () => (await text("ol[aria-label='Demo log']")) !== before, { timeout: 15000, timeoutMsg: "no new transaction" });
    return /created transaction (\S+) on/.exec(await text("ol[aria-label='Demo log']"))[1];
  };
  // One notification arrives while the listener is up, so its subscriptions have captures.
  const arrived = await newTransaction();
  await go("#/webhooks");
  await (await $(`//div[@data-capture-id][.//span[@title='${arrived}']]`)).waitForExist({ timeout: 30000 });
  const listenerSwitch = await $("input[aria-label='Listener on']");
  await listenerSwitch.click();
  await waitText(".listener-controls", /Stopped/);
  await newTransaction();
  await newTransaction();
  // The sandbox's retries are 20 s apart on its clock: move it on until it has given up.
  await browser.waitUntil(
    async () => {
      await go("#/demo");
      await clickButton("+1 min");
      await browser.pause(300);
      return (await deliveries()).every((d) => d.state !== "pending");
    },
    { timeout: 30000, interval: 500, timeoutMsg: "the sandbox still retries" },
  );
  const discarded = (await deliveries()).filter((d) => d.state === "discarded").map((d) => `${d.subscriptionId}/${d.eventId}`).sort();
  assert.ok(discarded.length >= 2, `the sandbox discarded what it could not deliver (${discarded.length})`);
  await go("#/webhooks");
  await (await $("input[aria-label='Listener on']")).click();
  await waitText(".listener-controls", /Listening/);
  await (await $("[data-testid=missed]")).click();
  await (await $("//label[contains(., 'Include the last two minutes')]/input")).click();
  await (await $("[data-testid=missed-find]")).click();
  await (await $("[data-testid=missed-report]")).waitForExist({ timeout: 60000 });
  const listed = [];
  for (const row of await browser.$$("[data-missed-event-id]")) {
    listed.push(`${await row.getAttribute("data-subscription-id")}/${await row.getAttribute("data-missed-event-id")}`);
  }
  assert.deepEqual(listed.sort(), discarded, "exactly the notifications the sandbox discarded");
  await shot("webhooks-missed");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-missed");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  await (await $("[data-missed-event-id] button")).click();
  await browser.waitUntil(async () => (await browser.getUrl()).includes("#/transactions/"), { timeout: 5000, timeoutMsg: "Open did not open the transaction" });

  // What the service did: the same notifications in the sandbox's records, none seen by the
  // listener; a delivered one links to its capture.
  await go("#/webhooks");
  await (await $("[data-testid=deliveries]")).waitForExist({ timeout: 15000 });
  await (await $("[data-testid=deliveries]")).click();
  await (await $("[data-testid=deliveries-count]")).waitForExist({ timeout: 15000 });
  const unseen = [];
  for (const row of await browser.$$("tr[data-state=discarded]")) {
    assert.equal(await row.getAttribute("data-captures"), "0", "a discarded notification was never seen");
    unseen.push(await row.getAttribute("data-delivery-event-id"));
  }
  assert.deepEqual([...new Set(unseen)].sort(), [...new Set(discarded.map((k) => k.split("/")[1]))].sort());
  await shot("webhooks-deliveries");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-deliveries");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  const link = await $("tr[data-state=delivered] [data-testid^=delivery-capture-]");
  const captureId = (await link.getAttribute("data-testid")).replace("delivery-capture-", "");
  await link.click();
  await browser.waitUntil(async () => (await browser.getUrl()).endsWith(`#/webhooks/${captureId}`), { timeout: 5000, timeoutMsg: "the capture link did not open the capture" });
  await (await $(`[data-capture-id="${captureId}"][aria-selected=true]`)).waitForExist({ timeout: 15000 });
  await waitText("[data-testid=detail-verdict]", /valid/);
});

await step("recover: the missed notifications sent again, verified by the listener, none missed after, told in the transaction's Notifications", async () => {
  await go("#/webhooks");
  await (await $("[data-testid=missed]")).waitForExist({ timeout: 15000 });
  if (!(await browser.execute(() => document.querySelector("[data-testid=missed]")?.parentElement?.open))) await (await $("[data-testid=missed]")).click();
  const recent = await $("//label[contains(., 'Include the last two minutes')]/input");
  if (!(await recent.isSelected())) await recent.click();
  await (await $("[data-testid=missed-find]")).click();
  await (await $("[data-testid=missed-report]")).waitForExist({ timeout: 60000 });
  const missedRows = (await browser.$$("[data-missed-event-id]")).length;
  assert.ok(missedRows >= 2, `missed rows to recover (${missedRows})`);
  await waitText("[data-testid=missed-recover]", new RegExp(`^Send all ${missedRows} again$`));
  await (await $("[data-testid=missed-recover]")).click();
  await waitText("[data-testid=missed-recover-result]", new RegExp(`^${missedRows} of ${missedRows} taken by http://127\\.0\\.0\\.1:\\d+/`), 30000);
  for (const row of await browser.$$("[data-missed-event-id]")) assert.match(await row.getText(), /sent again · 200/);
  await shot("webhooks-recovered");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-recovered");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // The listener kept each as a valid replay, so the check now finds them arrived.
  const recoveredTransaction = await (await $("[data-missed-event-id]")).getAttribute("data-transaction-id");
  const recoveredEvent = await (await $("[data-missed-event-id]")).getAttribute("data-missed-event-id");
  const recoveredSubscription = await (await $("[data-missed-event-id]")).getAttribute("data-subscription-id");
  await (await $("[data-testid=missed-find]")).click();
  await waitText("[data-testid=missed-count]", /^0 missed$/, 60000);

  // Did they get it? The transaction's Notifications: the service's attempts and its giving
  // up, then the recovery the listener received, each capture opening in the inspector.
  await go(`#/transactions/${encodeURIComponent(recoveredTransaction)}`);
  // (Other subscriptions of the product, pointing elsewhere, have stories of the same event.)
  const storySelector = `li.story[data-story-event-id="${recoveredEvent}"][data-story-subscription-id="${recoveredSubscription}"]`;
  // (The transaction was opened before the recovery: the timeline is read again when shown.)
  await browser.waitUntil(async () => (await browser.$$(`${storySelector} li[data-step=recoveryCaptured]`)).length > 0, { timeout: 15000, timeoutMsg: "the recovery is not in the story" });
  const story = await $(storySelector);
  assert.equal(await story.getAttribute("data-outcome"), "discarded");
  const steps = [];
  for (const li of await story.$$("li[data-step]")) steps.push(await li.getAttribute("data-step"));
  assert.ok(steps.includes("serviceAttempt") && steps.includes("serviceGaveUp") && steps.includes("recoveryCaptured"), `the story's steps: ${steps}`);
  assert.ok(steps.indexOf("serviceGaveUp") < steps.indexOf("recoveryCaptured"), `in time order: ${steps}`);
  await (await $("section[aria-label=Notifications]")).scrollIntoView();
  await shot("transaction-notifications");
  await browser.setWindowSize(960, 600);
  try {
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await (await $("section[aria-label=Notifications]")).scrollIntoView();
    await shot("small-transaction-notifications");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
  // Its evidence for a ticket: the transaction, its events and this timeline in one file.
  await (await $("[data-testid=transaction-evidence]")).click();
  const evidencePath = await jobPath("section[aria-label=Notifications] [data-job=saved]", "json");
  const evidence = JSON.parse(readFileSync(evidencePath, "utf8"));
  assert.equal(evidence.transaction.id, recoveredTransaction);
  assert.ok(evidence.notifications.notifications.some((n) => n.eventId === recoveredEvent), "the story in the evidence");
  await (await story.$("li[data-step=recoveryCaptured] button")).click();
  await browser.waitUntil(async () => /#\/webhooks\/\d+$/.test(await browser.getUrl()), { timeout: 5000, timeoutMsg: "the capture did not open" });
  await waitText("[data-testid=detail-verdict]", /valid/);
});

await step("the smallest window (960×600): the changed screens still fit", async () => {
  await browser.setWindowSize(960, 600);
  try {
    await go("#/webhooks");
    await (await $("[data-testid=listener-settings]")).waitForExist({ timeout: 15000 });
    await (await $("[data-testid=listener-settings]")).click();
    await (await $("[data-testid=listener-address-input]")).waitForDisplayed({ timeout: 5000 });
    const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    await shot("small-webhooks-settings");
    await go("#/connections");
    await (await $("[data-testid=reset-sandbox]")).waitForExist({ timeout: 15000 });
    await shot("small-connections");
    await go("#/audit");
    await (await $("[data-testid=audit-row]")).waitForExist({ timeout: 15000 });
    await (await $("//tr[@data-testid='audit-row']//button[.='Details']")).click();
    await (await $("[data-testid=audit-details]")).waitForDisplayed({ timeout: 5000 });
    const auditOverflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(auditOverflow <= 0, `the audit log fits (${auditOverflow} px)`);
    // The table keeps to its card: a long target or answer is clipped, not scrolled to.
    const auditTable = await browser.execute(() => {
      const card = document.querySelector(".audit-table")?.closest(".table-card");
      return { scroll: card?.scrollWidth ?? 0, client: card?.clientWidth ?? 0 };
    });
    assert.ok(auditTable.scroll <= auditTable.client, `the audit table keeps to its card (${JSON.stringify(auditTable)})`);
    await shot("small-audit-log");
    await go("#/demo");
    await (await $("[data-testid=fault-add]")).waitForExist({ timeout: 15000 });
    const demoOverflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(demoOverflow <= 0, `the demo's faults fit (${demoOverflow} px)`);
    await shot("small-demo-faults");
    await go(`#/products/${before.productId}`);
    // The reset gave the demo product new subscriptions: the first one's Edit.
    const edit = await $("[data-testid^=subscription-edit-]");
    await edit.waitForExist({ timeout: 15000 });
    await edit.click();
    await (await $("[data-testid=subscription-url-input]")).waitForDisplayed({ timeout: 5000 });
    await shot("small-product-detail-edit");
    await clickButton("Cancel");
  } finally {
    await browser.setWindowSize(1280, 800);
  }
});

/** Opens the top bar's Display menu and picks an item in it (a theme, or stage mode). */
async function chooseDisplay(itemSelector) {
  await (await $("[data-testid=display-button]")).click();
  const item = await $(`[data-testid=display-menu] ${itemSelector}`);
  await item.waitForClickable({ timeout: 5000 });
  await item.click();
  await (await $("[data-testid=display-menu]")).waitForExist({ timeout: 5000, reverse: true });
}
const displayState = () => browser.execute(() => ({ stage: document.documentElement.getAttribute("data-stage"), theme: document.documentElement.getAttribute("data-theme") }));

await step("stage mode and the dark theme", async () => {
  await go("#/transactions");
  await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
  const bodyFontSize = () => browser.execute(() => parseFloat(getComputedStyle(document.body).fontSize));
  const normalSize = await bodyFontSize();
  try {
    await chooseDisplay("[data-testid=stage-toggle]");
    assert.equal((await displayState()).stage, "on", "<html data-stage=on>");
    const stageSize = await bodyFontSize();
    assert.ok(stageSize >= normalSize * 1.3, `the type grew (${normalSize} px → ${stageSize} px)`);
    await waitText("[data-testid=stage-strip]", /sandbox/i);
    // An id cell: its first 8 characters and an ellipsis, the whole id in its title.
    const id = await browser.execute(() => {
      const cell = document.querySelector("[data-row-id] .id");
      return { shown: cell?.textContent ?? "", full: cell?.getAttribute("title") ?? "" };
    });
    assert.ok(id.full.length > 12, `a long id in the title: ${JSON.stringify(id)}`);
    assert.equal(id.shown, `${id.full.slice(0, 8)}…`, "the id shortened");
    await shot("stage-mode");
    await browser.setWindowSize(960, 600);
    try {
      const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no sideways scrolling in stage mode (${overflow} px)`);
      await shot("small-stage-mode");
    } finally {
      await browser.setWindowSize(1280, 800);
    }
    // The token screen: no token, secret or whole id on screen, the introspection included.
    await go("#/token");
    await waitText("[data-testid=token-phase]", /active/);
    await clickButton("Introspect");
    await waitText("[data-testid=introspection]", /encompass_client_id/);
    // innerText keeps the layout's breaks between cells (textContent would run a table's cells together).
    const screenText = await browser.execute(() => document.querySelector(".content")?.innerText ?? "");
    assert.doesNotMatch(screenText, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i, "no whole id on the token screen");
    // The sandbox's tokens are sbx_ and 43 URL-safe base64 characters; none of it, nor any long run of them.
    assert.doesNotMatch(screenText, /sbx_[A-Za-z0-9_-]{8,}|[A-Za-z0-9_-]{40,}/, "no token on the token screen");
    assert.doesNotMatch(screenText, /Bearer\s+\S{8,}/, "no bearer token on the token screen");
    await shot("stage-mode-token");
    await chooseDisplay("[data-testid=stage-toggle]");
    assert.equal((await displayState()).stage, null, "stage mode off");

    await chooseDisplay("[data-theme-choice=dark]");
    assert.equal((await displayState()).theme, "dark", "<html data-theme=dark>");
    await go("#/transactions");
    await (await $("[data-row-id]")).waitForExist({ timeout: 15000 });
    const luminance = await browser.execute(() => {
      const [r, g, b] = (getComputedStyle(document.documentElement).backgroundColor.match(/\d+(\.\d+)?/g) ?? ["255", "255", "255"]).map(Number);
      const linear = (c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
      return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    });
    assert.ok(luminance < 0.05, `the page is dark (relative luminance ${luminance})`);
    await shot("dark-theme");
    await browser.setWindowSize(960, 600);
    try {
      await shot("small-dark-theme");
    } finally {
      await browser.setWindowSize(1280, 800);
    }
  } finally {
    // Back to System and stage mode off, so the steps after this one see the app as before.
    const state = await displayState();
    if (state.theme !== null) await chooseDisplay("[data-theme-choice=system]");
    if (state.stage !== null) await chooseDisplay("[data-testid=stage-toggle]");
  }
  assert.deepEqual(await displayState(), { stage: null, theme: null }, "System theme, stage mode off");
});

// Late in the run: a scenario rotates the demo product's keys and moves the sandbox clock on,
// which the restart and missed-notification steps above must not meet.
await step("scenarios: each built-in played to its end on the embedded sandbox, its picture drawn as it tells", async () => {
  await go("#/demo");
  const live = "[aria-label='Live picture'] svg.pcp";
  const expected = {
    "happy-path": (p) => {
      assert.equal(p.outcome, "delivered");
      assert.deepEqual(p.attempts, [{ attempt: "1", status: "200", verdict: "valid" }], "one attempt, verified and taken");
      assert.equal(p.answers, 2, "the partner's answers after it: processing, then completed");
    },
    "failing-receiver": (p) => {
      assert.equal(p.outcome, "discarded");
      assert.deepEqual(p.attempts.map((a) => a.status), ["503", "503", "503"], "three attempts turned away");
      assert.deepEqual(p.waits, [20, 20], "20 s between them, to scale");
      assert.equal(p.gaveUp, 1, "then the service gave up");
    },
    "key-rotation": (p) => {
      assert.equal(p.outcome, "delivered");
      assert.deepEqual(p.attempts.map((a) => a.status), ["503", "200"]);
      assert.deepEqual(p.keys, ["current", "previous"], "the retry, signed before the rotation, verified with the previous key");
    },
    "offline-recovered": (p) => {
      assert.equal(p.attempts.length, 3, "three attempts");
      assert.ok(p.errors.every((e) => e === "connection refused"), `each refused: ${p.errors}`);
      assert.equal(p.gaveUp, 1);
      assert.equal(p.recoveries, 1, "recovered once the listener was back");
    },
    "reserialised-json": (p) => {
      assert.deepEqual(p.attempts.map((a) => a.verdict), ["valid", "invalid-signature"], "the service's copy verified, the proxy's did not");
    },
  };
  for (const [name, check] of Object.entries(expected)) {
    await (await $("[data-testid=scenario-select]")).selectByAttribute("value", name);
    await (await $("[data-testid=scenario-pace]")).setValue("0");
    await (await $("[data-testid=scenario-start]")).click();
    await browser.waitUntil(async () => (await browser.execute(() => document.querySelector("[data-testid=scenario-progress]")?.textContent ?? "")).length > 0, { timeout: 10000, timeoutMsg: `${name} never started` });
    if (name === "happy-path") {
      // Step by step, as a presenter does: each Next plays one step, its outcome shown.
      for (let i = 1; i <= 3; i++) {
        await (await $("[data-testid=scenario-next]")).waitForEnabled({ timeout: 15000 });
        await (await $("[data-testid=scenario-next]")).click();
        await browser.waitUntil(async () => (await browser.execute(() => document.querySelectorAll("[data-testid=scenario-outcome]").length)) >= i, { timeout: 15000, timeoutMsg: `step ${i} of ${name} never ended` });
      }
    } else {
      await (await $("[data-testid=scenario-play]")).click();
    }
    await (await $("[data-testid=scenario-finished]")).waitForExist({ timeout: 30000, timeoutMsg: `${name} was not played to its end` });
    const outcomes = await browser.execute(() => [...document.querySelectorAll("[data-testid=scenario-outcome]")].map((o) => o.getAttribute("title") ?? o.textContent));
    const steps = await browser.execute(() => document.querySelectorAll("[data-testid=scenario-step]").length);
    assert.equal(outcomes.length, steps, `every step of ${name} told what it did`);
    let drawn = null;
    await browser.waitUntil(
      async () => {
        drawn = await readPicture(live);
        if (!drawn) return false;
        try {
          check(drawn);
          return true;
        } catch {
          return false;
        }
      },
      { timeout: 20000, timeoutMsg: `the picture of ${name} never showed its story: ${JSON.stringify(drawn)}` },
    );
    check(drawn);
    assert.ok(drawn.lanes.startsWith("lender service network listener"), `the lanes of ${name}: ${drawn.lanes}`);
    if (name === "reserialised-json") {
      assert.ok(outcomes.at(-1).includes("the JSON was re-serialised after signing"), `the debugger's diagnosis: ${outcomes.at(-1)}`);
    }
    await (await $(live)).scrollIntoView();
    await shot(`scenario-${name}`);
    await browser.setWindowSize(960, 600);
    try {
      const overflow = await browser.execute(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
      await (await $("[data-testid=scenario-player]")).scrollIntoView();
      await shot(`small-scenario-${name}`);
    } finally {
      await browser.setWindowSize(1280, 800);
    }
  }
});

await step("headless: a sandbox with --data restarted keeps its data, and a CLI subscription verifies in the app started from the environment", async () => {
  const env = { PARTNER_BASE_URL: `http://127.0.0.1:${cliSandboxPort}`, PARTNER_CLIENT_ID: SECOND_CLIENT, PARTNER_CLIENT_SECRET: SECOND_SECRET };
  const created = JSON.parse(await partner(["products", "create", "--name", "e2e-cli", "--listing-name", "E2E from the CLI", "--output", "json"], env));
  await stopProcess(cliSandbox);
  cliSandbox = await startCliSandbox(cliSandboxPort, cliSandboxFile);
  const kept = JSON.parse(await partner(["products", "get", created.id, "--output", "json"], env));
  assert.equal(kept.listingName, "E2E from the CLI", "the product survived the sandbox's restart");
  const subscribed = JSON.parse(await partner(["products", "subscribe", created.id, "--webhook", `transaction=${before.listenerUrl}`, "--output", "json"], env));
  const cliSubscription = subscribed.subscriptionId ?? subscribed.subscription_id;
  assert.ok(cliSubscription, `the CLI says the subscription's id: ${JSON.stringify(subscribed)}`);

  // The app, quit and started with the CLI's variables: that connection becomes active.
  await quitApp(Number(before.listenerAddress.split(":")[1]));
  const driver = spawn("tauri-driver", ["--port", "4446", "--native-port", "4447"], { env: { ...process.env, ...env }, stdio: "ignore" });
  try {
    const deadline = Date.now() + 10000;
    while (!(await listening(4446)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    browser = await openApp(4446);
    await (await $("[data-row-id]")).waitForExist({ timeout: 60000 });
    // The variables name the service and client of "Second sandbox": that saved connection is
    // reused (not added twice) and opened.
    await waitText(".topbar .conn-label", /Second sandbox/);
    await go("#/connections");
    const rows = "table[aria-label=Connections] tbody tr";
    await browser.waitUntil(async () => (await browser.$$(rows)).length >= 2, { timeout: 15000, timeoutMsg: "the connections did not show" });
    // Text content: WebKitWebDriver leaves cells that ellipsise out of the rendered text.
    const shown = [];
    for (const row of await browser.$$(rows)) shown.push(await row.getProperty("textContent"));
    assert.equal(shown.filter((t) => t.includes("Second sandbox")).length, 1, `one connection, not two: ${shown.join(" | ")}`);
    assert.equal(shown.length, 2, `the embedded sandbox and Second sandbox: ${shown.join(" | ")}`);
    const lender = await fetch(`http://127.0.0.1:${cliSandboxPort}/sandbox/v1/transactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ productId: created.id, requestType: "NEW_REQUEST" }),
    });
    assert.equal(lender.status, 201);
    await go("#/webhooks");
    await browser.waitUntil(async () => (await browser.$$("[data-verdict=valid][data-capture-id]")).length > 0, { timeout: 30000, timeoutMsg: "the CLI subscription's notification did not arrive valid" });
    await shot("restart-environment");
    await go("#/connections");
    await shot("connections-from-environment");
    // `partner listen export` reads the app's store (one store at one path) while the app runs.
    const exported = await partner(["listen", "export", "--format", "jsonl"]);
    assert.ok(exported.includes(cliSubscription), "the export holds the app's capture of the CLI subscription");
    await browser.deleteSession();
    browser = null;
  } catch (error) {
    // Photographed here: the step's own failure shot comes after this session's driver is gone.
    await shot("failure-headless-environment").catch(() => {});
    throw error;
  } finally {
    driver.kill();
    await stopProcess(cliSandbox);
  }
});

if (browser) await browser.deleteSession().catch(() => {});
if (cliSandbox) await stopProcess(cliSandbox).catch(() => {});
const failed = results.filter((r) => !r.ok);
console.log(`e2e: ${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length ? 1 : 0);
