import { describe, expect, it } from "vitest";
import type { CaptureSummary, EventType, TokenView, Transaction } from "../platform";
import { draftOf, subscriptionChange, subscriptionDraftProblems, toggleEvent } from "./products/subscriptionModel";
import { applyFilter, captureCount, countByVerdict, listOf, mergeBatch, shouldFollow, shownIds, withoutCaptures } from "./webhooks/inspectorModel";
import { describeRepoint, describeRetention, describeTestMode, parseListenerAddress, parseRetention, parseTestMode, testModeFields } from "./webhooks/listenerModel";
import { firstExpiry, secondsLeft } from "./token/tokenModel";
import { baseUrlLabel, connectionActions, draftProblems, EMPTY_DRAFT, toNewConnection } from "./connections/connectionModel";
import { canSubmitKey, keyToSend } from "./products/keyModel";
import { isLocked, respondForm } from "./transactions/respondModel";
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
    ...patch,
  };
}

describe("inspector", () => {
  it("puts new batches on top, newest first, without duplicates", () => {
    const merged = mergeBatch(listOf([capture(2), capture(1)]), [capture(3), capture(4), capture(2)]);
    expect(merged.rows.map((c) => c.id)).toEqual([4, 3, 2, 1]);
    // The searchable text stays beside its capture.
    expect(applyFilter(merged, { verdict: "all", eventType: "all", text: "EV-4" }).map((c) => c.id)).toEqual([4]);
    expect(applyFilter(merged, { verdict: "all", eventType: "all", text: "ev-1" }).map((c) => c.id)).toEqual([1]);
  });
  it("filters by verdict, event type and text, and counts verdicts", () => {
    const rows = [capture(1), capture(2, { verdict: "invalid-signature" }), capture(3, { eventType: "updated", resourceId: "special" })];
    const all = listOf(rows);
    expect(applyFilter(all, { verdict: "invalid-signature", eventType: "all", text: "" }).map((c) => c.id)).toEqual([2]);
    expect(applyFilter(all, { verdict: "all", eventType: "updated", text: "" }).map((c) => c.id)).toEqual([3]);
    expect(applyFilter(all, { verdict: "all", eventType: "all", text: "SPEC" }).map((c) => c.id)).toEqual([3]);
    expect(countByVerdict(rows)).toMatchObject({ valid: 2, "invalid-signature": 1 });
  });
  it("filters 100,000 captures by text and verdict together", () => {
    const many = listOf(Array.from({ length: 100_000 }, (_, i) => capture(i, { verdict: i % 7 === 0 ? "invalid-signature" : "valid" })));
    expect(applyFilter(many, { verdict: "all", eventType: "all", text: "tx-9999" })).toHaveLength(11);
    expect(applyFilter(many, { verdict: "invalid-signature", eventType: "all", text: "tx-9999" }).map((c) => c.id)).toEqual([99995]);
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

describe("clearing captures", () => {
  it("offers the shown ids only when the filter hides some, and never an empty list", () => {
    const rows = [capture(3), capture(2, { verdict: "invalid-signature" }), capture(1)];
    const all = listOf(rows);
    const invalid = applyFilter(all, { verdict: "invalid-signature", eventType: "all", text: "" });
    expect(shownIds(invalid, rows.length)).toEqual([2]);
    expect(shownIds(applyFilter(all, { verdict: "all", eventType: "all", text: "tx" }), rows.length)).toBeNull();
    expect(shownIds([], rows.length)).toBeNull();
  });
  it("drops the cleared rows with their searchable text, or every row", () => {
    const all = listOf([capture(3), capture(2), capture(1)]);
    const left = withoutCaptures(all, [3, 1]);
    expect(left.rows.map((c) => c.id)).toEqual([2]);
    expect(applyFilter(left, { verdict: "all", eventType: "all", text: "tx-2" }).map((c) => c.id)).toEqual([2]);
    expect(applyFilter(left, { verdict: "all", eventType: "all", text: "tx-3" })).toEqual([]);
    expect(withoutCaptures(all, null)).toEqual({ rows: [], text: [] });
    expect(withoutCaptures(all, [99])).toBe(all);
    expect(captureCount(1)).toBe("1 capture");
    expect(captureCount(12)).toBe("12 captures");
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
    expect(parseRetention("", "")).toEqual({ form: { maxCaptures: null, maxAgeDays: null }, problems: null });
    expect(parseRetention(" 5000 ", "30").form).toEqual({ maxCaptures: 5000, maxAgeDays: 30 });
    expect(parseRetention("0", "x").problems).toEqual({
      maxCaptures: "Max captures is at least 1, or empty for no limit.",
      maxAgeDays: "Max age is a whole number, or empty for no limit.",
    });
    expect(parseRetention("1.5", "").problems).toEqual({ maxCaptures: "Max captures is a whole number, or empty for no limit." });
    expect(describeRetention({ maxCaptures: null, maxAgeDays: null })).toBe("every capture, with no limit");
    expect(describeRetention({ maxCaptures: 1, maxAgeDays: 30 })).toBe("at most 1 capture, for 30 days");
    expect(describeRetention({ maxCaptures: null, maxAgeDays: 1 })).toBe("for 1 day");
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
    const draft = { label: " Prod ", baseUrl: "http://api.example.com/", clientId: " id ", clientSecret: "s", environment: "production" as const };
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
    expect(respondForm("t1", "processing", "  ", "REF-1 ")).toEqual({ transactionId: "t1", status: "processing", partnerStatus: null, referenceNumber: "REF-1" });
    const base = { response: null } as unknown as Transaction;
    expect(isLocked(base)).toBe(false);
    expect(isLocked({ ...base, response: { status: "completed" } } as Transaction)).toBe(true);
    expect(isLocked({ ...base, response: { status: "processing" } } as Transaction)).toBe(false);
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
  const embedded = { id: "embedded-sandbox", label: "Embedded sandbox", baseUrl: "", clientId: "demo", environment: "sandbox" as const, embedded: true };
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
