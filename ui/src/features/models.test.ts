import { describe, expect, it } from "vitest";
import type { CaptureSummary, EventType, TokenView, Transaction } from "../platform";
import { draftOf, subscriptionChange, subscriptionDraftProblems, toggleEvent } from "./products/subscriptionModel";
import { instantOf } from "../lib/format";
import { BLOCK, blocksFor, captureCount, drawnCount, drawnRow, isFiltered, NO_FILTER, rowAt, shouldFollow, storeFilter } from "./webhooks/inspectorModel";
import { describeForwardRule, forwardRuleProblems, describeRepoint, describeRetention, describeTestMode, parseListenerAddress, parseRetention, parseTestMode, testModeFields } from "./webhooks/listenerModel";
import { firstExpiry, secondsLeft } from "./token/tokenModel";
import { baseUrlLabel, connectionActions, draftProblems, EMPTY_DRAFT, EMPTY_NETWORK, toNewConnection } from "./connections/connectionModel";
import { canSubmitKey, keyToSend } from "./products/keyModel";
import { isLocked, moreFieldsText, respondForm, responseText } from "./transactions/respondModel";
import { progressText } from "../components/FileJob";
import { progressPercent } from "./listing/searchModel";
import { appendOutcome } from "./demo/demoModel";

function capture(id: number, patch: Partial<CaptureSummary> = {}): CaptureSummary {
  return {
    id,
    receivedAt: new Date(1_700_000_000_000 + id).toISOString(),
    verdict: "valid",
    eventType: "created",
    resourceType: "urn:svc:partner:transaction",
    resourceId: `tx-${id}`,
    instanceId: "demo-product",
    eventId: `ev-${id}`,
    subscriptionId: "sub-1",
    attempts: 1,
    replayed: false,
    groupAttempts: 1,
    ...patch,
  };
}

describe("inspector", () => {
  it("asks the store for what the filter bar holds, and nothing for what it leaves empty", () => {
    expect(storeFilter(NO_FILTER)).toEqual({ ids: [], maxId: null, verdicts: [], eventType: null, resourceType: null, subscriptionId: null, since: null, until: null, text: null });
    expect(isFiltered(NO_FILTER)).toBe(false);
    const form = { ...NO_FILTER, verdict: "invalid-signature" as const, eventType: "created", text: "  loan 42 ", since: "2026-11-24T09:30:00" };
    const filter = storeFilter(form);
    expect(filter).toMatchObject({ verdicts: ["invalid-signature"], eventType: "created", text: "loan 42", resourceType: null });
    // A local time goes to the store as the instant it names.
    expect(filter.since).toBe(new Date("2026-11-24T09:30:00").toISOString());
    expect(isFiltered(form)).toBe(true);
    expect(instantOf("")).toBeNull();
    expect(instantOf("not a time")).toBeNull();
  });
  it("reads the blocks under the window first, and one either side of them", () => {
    expect(blocksFor(0, 20, 0)).toEqual({ inView: [0], around: [] });
    expect(blocksFor(0, 20, 1_000_000)).toEqual({ inView: [0], around: [1] });
    expect(blocksFor(5 * BLOCK + 10, 5 * BLOCK + 30, 1_000_000)).toEqual({ inView: [5], around: [4, 6] });
    // The end of the list: no block past it.
    expect(blocksFor(999_990, 999_999, 1_000_000)).toEqual({ inView: [9999], around: [9998] });
    // A window across two blocks has both in view.
    expect(blocksFor(BLOCK - 5, BLOCK + 5, 1_000_000)).toEqual({ inView: [0, 1], around: [2] });
    const blocks = new Map([[1, [capture(7)]]]);
    expect(rowAt(blocks, BLOCK)?.id).toBe(7);
    expect(rowAt(blocks, 0)).toBeUndefined();
  });
  it("draws a notification's attempts under its row, and the rows after them moved down", () => {
    const expanded = { index: 2, id: 30, attempts: [capture(10), capture(20), capture(30)] };
    expect(drawnCount(100, expanded)).toBe(103);
    expect(drawnCount(100, null)).toBe(100);
    expect(drawnRow(2, expanded)).toEqual({ kind: "row", index: 2 });
    expect(drawnRow(3, expanded)).toMatchObject({ kind: "attempt", parentIndex: 2, number: 1 });
    expect(drawnRow(5, expanded)).toMatchObject({ kind: "attempt", number: 3, attempt: { id: 30 } });
    expect(drawnRow(6, expanded)).toEqual({ kind: "row", index: 3 });
    expect(drawnRow(6, null)).toEqual({ kind: "row", index: 6 });
  });
  it("follows only at the top", () => {
    expect(shouldFollow(0)).toBe(true);
    expect(shouldFollow(200)).toBe(false);
  });
  it("reads test mode fields as partner listen takes them", () => {
    const f = { enabled: true, status: "200", delay: "250", failPercent: "30", failFirst: "2", failureStatus: "503" };
    expect(parseTestMode(f).form).toEqual({ enabled: true, status: 200, delayMs: 250, failRate: 0.3, failFirstAttempts: 2, failureStatus: 503 });
    // Off: whatever is typed is kept but not checked.
    expect(parseTestMode({ ...f, enabled: false, status: "x" }).problems).toBeNull();
    expect(parseTestMode({ ...f, status: "50" }).problems).toEqual({ status: "Status must be three digits, e.g. 500." });
    expect(parseTestMode({ ...f, delay: "-1" }).problems).toEqual({ delay: "Delay is a whole number of milliseconds." });
    expect(parseTestMode({ ...f, failPercent: "101" }).problems).toEqual({ failPercent: "Failure rate is a percentage from 0 to 100." });
    expect(parseTestMode({ ...f, failFirst: "11" }).problems).toEqual({ failFirst: "Fail first is a number of attempts from 0 to 10." });
    expect(parseTestMode({ ...f, failureStatus: "700" }).problems).toEqual({ failureStatus: "Failure status must be between 100 and 599." });
  });
  it("describes the test mode in a few words", () => {
    const off = { enabled: false, status: 200, delayMs: 0, failRate: 0, failFirstAttempts: 0, failureStatus: 500 };
    expect(describeTestMode(off)).toBe("off: the listener answers as it should");
    expect(describeTestMode({ ...off, enabled: true, delayMs: 100, failRate: 0.25, failFirstAttempts: 2 })).toBe(
      "answers 200 after 100 ms · 25 % fail with 500 · first 2 attempts fail with 500",
    );
    expect(testModeFields({ ...off, failRate: 0.333 }).failPercent).toBe("33.3");
  });
});

describe("forward rules", () => {
  it("describes a rule and names what keeps the rules from being saved", () => {
    expect(describeForwardRule({ resourceType: "transaction", eventType: null, url: "http://localhost:3000/hooks" })).toBe("transaction → http://localhost:3000/hooks");
    expect(describeForwardRule({ resourceType: null, eventType: null, url: "http://x/" })).toBe("any → http://x/");
    const ok = [
      { resourceType: "transaction:event", eventType: "created", url: "http://localhost:3000/hooks/events" },
      { resourceType: null, eventType: null, url: "https://example.com/all" },
    ];
    expect(forwardRuleProblems(ok)).toEqual([]);
    expect(forwardRuleProblems([{ resourceType: null, eventType: null, url: " " }])).toEqual(["Rule 1 needs a URL."]);
    expect(forwardRuleProblems([{ resourceType: null, eventType: null, url: "ftp://x" }])).toEqual(["Rule 1: the URL must start with http:// or https://."]);
    expect(forwardRuleProblems([...ok].reverse())[0]).toMatch(/Rule 1 matches every notification/);
    expect(captureCount(1)).toBe("1 capture");
    expect(captureCount(12000)).toBe("12,000 captures");
  });
});

describe("listener settings", () => {
  it("reads an address and a path, trimmed, and names each slip", () => {
    expect(parseListenerAddress(" 127.0.0.1:7070 ", "/webhooks ")).toEqual({ form: { address: "127.0.0.1:7070", path: "/webhooks" }, problems: null });
    expect(parseListenerAddress("localhost:9000", "/").form).toEqual({ address: "localhost:9000", path: "/" });
    expect(parseListenerAddress("[::1]:7070", "/in").form).toEqual({ address: "[::1]:7070", path: "/in" });
    expect(parseListenerAddress("127.0.0.1", "webhooks").problems).toEqual({
      address: "Give the address as IP:PORT, for example 127.0.0.1:7070.",
      path: "The path starts with /, for example /webhooks.",
    });
    expect(parseListenerAddress("127.0.0.1:70000", "/a b").problems).toEqual({ address: "The port is at most 65535.", path: "The path may not hold spaces, ? or #." });
  });
  it("reads retention limits, empty as no limit", () => {
    expect(parseRetention("", "")).toEqual({ form: { maxCaptures: null, maxBytes: null, maxAgeDays: null, junkRate: null }, problems: null });
    expect(parseRetention(" 5000 ", "30").form).toEqual({ maxCaptures: 5000, maxBytes: null, maxAgeDays: 30, junkRate: null });
    expect(parseRetention("", "", "2GiB").form).toEqual({ maxCaptures: null, maxBytes: 2 * 2 ** 30, maxAgeDays: null, junkRate: null });
    expect(parseRetention("", "", "", " 50 ").form?.junkRate).toBe(50);
    expect(parseRetention("", "", "", "0").problems?.junkRate).toBe("Junk stored a second is at least 1, or empty for no limit.");
    expect(parseRetention("", "", "1.5 g").form?.maxBytes).toBe(1.5 * 2 ** 30);
    expect(parseRetention("", "", "10 parsecs").problems?.maxBytes).toBe("Max size is a size such as 2 GiB or 500 MB, or empty for no limit.");
    expect(parseRetention("", "", "1000").problems?.maxBytes).toBe("Max size is at least 1 MiB (one body may be that large), or empty for no limit.");
    expect(parseRetention("0", "x").problems).toEqual({
      maxCaptures: "Max captures is at least 1, or empty for no limit.",
      maxAgeDays: "Max age is a whole number, or empty for no limit.",
    });
    expect(parseRetention("1.5", "").problems).toEqual({ maxCaptures: "Max captures is a whole number, or empty for no limit." });
    expect(describeRetention({ maxCaptures: null, maxBytes: null, maxAgeDays: null, junkRate: null })).toBe("every capture, with no limit");
    expect(describeRetention({ maxCaptures: 1, maxBytes: null, maxAgeDays: 30, junkRate: null })).toBe("at most 1 capture, for 30 days");
    expect(describeRetention({ maxCaptures: null, maxBytes: null, maxAgeDays: 1, junkRate: null })).toBe("for 1 day");
    expect(describeRetention({ maxCaptures: null, maxBytes: 2 ** 31, maxAgeDays: null, junkRate: 20 })).toBe("at most 2 GiB of captures; junk past 20/s counted, not stored");
  });
  it("sums up a re-pointing", () => {
    const moved = { productId: "p", subscriptionId: "s", url: "https://old.example/webhooks", newUrl: "https://new.example/webhooks" };
    expect(describeRepoint({ changed: [moved, { ...moved, subscriptionId: "s2" }], failures: [] })).toBe("Re-pointed 2 subscriptions.");
    expect(describeRepoint({ changed: [moved], failures: ["Product p2: the server refused the change."] })).toBe("Re-pointed 1 subscription. 1 product could not be changed:");
  });
});

describe("token countdowns", () => {
  const view: TokenView = {
    phase: "active",
    issuedAt: "2026-01-01T00:00:00Z",
    idleExpiresAt: "2026-01-01T00:15:00Z",
    maxExpiresAt: "2026-01-01T02:00:00Z",
    now: "2026-01-01T00:05:00Z",
    lastError: null,
    history: [],
  };
  it("counts down on the shell's clock", () => {
    expect(secondsLeft(view, view.idleExpiresAt, 1000, 1000)).toBe(600);
    expect(secondsLeft(view, view.idleExpiresAt, 1000, 11_000)).toBe(590);
    expect(secondsLeft(view, null, 0, 0)).toBeNull();
  });
  it("names the expiry that comes first", () => {
    expect(firstExpiry(600, 6900)).toBe("idle");
    expect(firstExpiry(900, 60)).toBe("max");
    expect(firstExpiry(null, null)).toBeNull();
  });
});

describe("connection form", () => {
  it("explains every missing field", () => {
    const problems = draftProblems(EMPTY_DRAFT);
    expect(Object.keys(problems).sort()).toEqual(["baseUrl", "clientId", "clientSecret", "label"]);
  });
  it("refuses http for production and trims what it sends", () => {
    const draft = { label: " Prod ", baseUrl: "http://api.example.com/", clientId: " id ", clientSecret: "s", environment: "production" as const, network: EMPTY_NETWORK, readOnly: false };
    expect(draftProblems(draft).baseUrl).toBe("Production needs https://.");
    expect(toNewConnection({ ...draft, baseUrl: "https://api.example.com/" })).toEqual({
      label: "Prod",
      baseUrl: "https://api.example.com",
      clientId: "id",
      clientSecret: "s",
      environment: "production",
    });
  });
});

describe("signing key field", () => {
  it("sends a pasted key only when the rule is met", () => {
    expect(keyToSend("generate", "abc")).toBeNull();
    expect(keyToSend("paste", "abc")).toBe("abc");
    expect(canSubmitKey("generate", "", undefined)).toBe(true);
    expect(canSubmitKey("paste", "abc", ["The key needs a digit."])).toBe(false);
    expect(canSubmitKey("paste", "abc", undefined)).toBe(false);
    expect(canSubmitKey("paste", "abc", [])).toBe(true);
  });
});

describe("respond form", () => {
  it("leaves blank fields out and knows a locked transaction", () => {
    expect(responseText("processing", "  ", "REF-1 ", "")).toEqual({ text: JSON.stringify({ status: "processing", referenceNumber: "REF-1" }) });
    expect(respondForm("t1", "{}", null)).toEqual({ transactionId: "t1", response: "{}", confirm: null });
    const base = { response: null } as unknown as Transaction;
    expect(isLocked(base)).toBe(false);
    expect(isLocked({ ...base, response: { status: "completed" } } as Transaction)).toBe(true);
    expect(isLocked({ ...base, response: { status: "processing" } } as Transaction)).toBe(false);
  });

  it("adds the other fields written as JSON, and says what is wrong with them before sending", () => {
    const more = '{"loan": {"appraisedValue": 410000}, "respondingParty": {"name": "Acme"}}';
    const built = responseText("completed", "Delivered", "", more);
    expect("text" in built && JSON.parse(built.text)).toEqual({
      status: "completed",
      partnerStatus: "Delivered",
      loan: { appraisedValue: 410000 },
      respondingParty: { name: "Acme" },
    });
    expect(responseText("processing", "", "", "{loan: 1}")).toMatchObject({ error: expect.stringContaining("not JSON") });
    expect(responseText("processing", "", "", "[1]")).toMatchObject({ error: expect.stringContaining("a JSON object") });
    expect(responseText("processing", "", "", '{"status": "failed"}')).toEqual({ error: "Set status in the fields above, not in the JSON." });
    const current = { response: { status: "processing", loan: { a: 1 }, partnerStatus: "x" } } as unknown as Transaction;
    expect(JSON.parse(moreFieldsText(current))).toEqual({ loan: { a: 1 } });
    expect(moreFieldsText({ response: null } as unknown as Transaction)).toBe("");
  });
});

describe("search and demo", () => {
  it("shows search progress as a percentage", () => {
    expect(progressPercent(null)).toBe(0);
    expect(progressPercent({ searchId: "s", scanned: 50, total: 200, matched: 1 })).toBe(25);
  });
  it("keeps the demo log newest first and short", () => {
    let log = appendOutcome([], { message: "a", transactionId: null, sandboxNow: "" });
    log = appendOutcome(log, { message: "b", transactionId: null, sandboxNow: "" });
    expect(log.map((o) => o.message)).toEqual(["b", "a"]);
  });
});

describe("connection rows", () => {
  const embedded = { id: "embedded-sandbox", label: "Embedded sandbox", baseUrl: "", clientId: "demo", environment: "sandbox" as const, labelled: "sandbox" as const, serviceEnvironment: null, embedded: true, readOnly: false, network: { proxyUrl: null, proxyUser: null, caCertFile: null, clientCertFile: null, summary: "" } };
  const saved = { ...embedded, id: "c-1", label: "Staging", baseUrl: "https://staging.example.com", embedded: false };
  it("never removes the embedded sandbox or the active connection, and resets only the sandbox", () => {
    expect(connectionActions(embedded, "c-1")).toEqual({ use: true, remove: false, reset: true });
    expect(connectionActions(embedded, "embedded-sandbox")).toEqual({ use: false, remove: false, reset: true });
    expect(connectionActions(saved, "embedded-sandbox")).toEqual({ use: true, remove: true, reset: false });
    expect(connectionActions(saved, "c-1")).toEqual({ use: false, remove: false, reset: false });
  });
  it("says the embedded sandbox has no address until it starts", () => {
    expect(baseUrlLabel(embedded)).toBe("not started: starts when used");
    expect(baseUrlLabel({ ...embedded, baseUrl: "http://127.0.0.1:4100" })).toBe("http://127.0.0.1:4100");
    expect(baseUrlLabel(saved)).toBe("https://staging.example.com");
  });
});

describe("subscription edit", () => {
  const original = { subscriptionId: "sub-1", url: "https://old.example.app/webhooks", events: ["updated", "created"] as EventType[], resource: "urn:svc:partner:transaction" as const };
  it("sends only what changed, and nothing when nothing did", () => {
    const draft = draftOf(original);
    expect(draft.events).toEqual(["created", "updated"]);
    expect(subscriptionChange("p-1", original, draft)).toBeNull();
    expect(subscriptionChange("p-1", original, { ...draft, url: " https://new.example.app/webhooks " })).toEqual({
      productId: "p-1",
      subscriptionId: "sub-1",
      url: "https://new.example.app/webhooks",
      events: null,
      resource: null,
    });
    expect(subscriptionChange("p-1", original, { ...draft, events: toggleEvent(draft.events, "created"), resource: "urn:svc:partner:transaction:event" })).toEqual({
      productId: "p-1",
      subscriptionId: "sub-1",
      url: null,
      events: ["updated"],
      resource: "urn:svc:partner:transaction:event",
    });
    // The same events in another order are no change.
    expect(subscriptionChange("p-1", original, { ...draft, events: toggleEvent(toggleEvent(draft.events, "created"), "created") })).toBeNull();
  });
  it("names a bad URL and a subscription with no events", () => {
    expect(subscriptionDraftProblems({ url: "not a url", events: [], resource: "urn:svc:partner:transaction" })).toEqual({
      url: "Type the callback URL, e.g. https://abc.example.app/webhooks.",
      events: "Pick at least one event.",
    });
    expect(subscriptionDraftProblems({ url: "ftp://x.example", events: ["created"], resource: "urn:svc:partner:transaction" })).toEqual({ url: "Use an http(s):// address." });
    expect(subscriptionDraftProblems(draftOf(original))).toEqual({});
  });
});

describe("file job progress", () => {
  it("says the count, and what the job does now when it says", () => {
    expect(progressText(null, "captures")).toBe("Starting…");
    expect(progressText({ jobId: "j", done: 1234, total: null }, "rows")).toBe("1,234 rows");
    expect(progressText({ jobId: "j", done: 40000, total: 100000, note: "indexing for search" }, "captures")).toBe(
      "40,000 of 100,000 captures · indexing for search",
    );
  });
});

describe("demo faults", () => {
  it("builds the sandbox's fault of each kind for the next calls", async () => {
    const { faultForm } = await import("./demo/demoModel");
    expect(faultForm("products", "429", 3)).toEqual({ endpoint: "products", count: 3, status: 429, retryAfterSeconds: 2, latencyMs: null, drop: false });
    expect(faultForm("transactions", "drop", 1)).toEqual({ endpoint: "transactions", count: 1, status: null, retryAfterSeconds: null, latencyMs: null, drop: true });
    expect(faultForm("any", "slow", 2).latencyMs).toBe(3000);
  });
});
