import { describe, expect, it } from "vitest";
import { formatSort, isClickable, keyStanding, parseSort, sortIndicator, standingMark, toggleSort } from "./sortModel";
import { pageCount, pageOf, parsePageJump, rangeLabel, startOfPage } from "./paging";
import { countdown, flatten, formatTime, shortId } from "./format";
import { parseRoute, routeHref } from "./router";

describe("sort string gestures", () => {
  it("parses and formats A,-B,C", () => {
    expect(parseSort("status,-created, id")).toEqual([
      { key: "status", descending: false },
      { key: "created", descending: true },
      { key: "id", descending: false },
    ]);
    expect(formatSort(parseSort("status,-created"))).toBe("status,-created");
  });
  it("plain click sorts by one key and flips it", () => {
    expect(toggleSort("status,-created", "id", false)).toBe("id");
    expect(toggleSort("id", "id", false)).toBe("-id");
    expect(toggleSort("-id", "id", false)).toBe("id");
  });
  it("shift-click adds, flips, then removes a key", () => {
    expect(toggleSort("status", "created", true)).toBe("status,created");
    expect(toggleSort("status,created", "created", true)).toBe("status,-created");
    expect(toggleSort("status,-created", "created", true)).toBe("status");
  });
  it("shows the position only for multi-key sorts", () => {
    expect(sortIndicator("status", "status")).toBe("▲");
    expect(sortIndicator("status,-created", "created")).toBe("▼2");
    expect(sortIndicator("status", "id")).toBe("");
  });
});

describe("paging", () => {
  it("counts pages and clamps jumps", () => {
    expect(pageCount(0, 25)).toBe(1);
    expect(pageCount(101, 25)).toBe(5);
    expect(pageOf(50, 25)).toBe(3);
    expect(startOfPage(9, 25, 101)).toBe(100);
    expect(startOfPage(0, 25, 101)).toBe(0);
  });
  it("explains a bad page jump in words", () => {
    expect(parsePageJump("x", 100, 25)).toBe("Type a page number.");
    expect(parsePageJump("5", 100, 25)).toBe("Pages run from 1 to 4.");
    expect(parsePageJump(" 2 ", 100, 25)).toBe(2);
  });
  it("labels the range", () => {
    expect(rangeLabel(25, 25, 120)).toBe("26–50 of 120");
    expect(rangeLabel(0, 0, 0)).toBe("0 of 0");
  });
});

describe("formatting", () => {
  it("formats times, countdowns and ids", () => {
    expect(formatTime("2026-01-02T03:04:05.678Z")).toBe("2026-01-02 03:04:05Z");
    expect(formatTime(null)).toBe("—");
    expect(countdown(65)).toBe("01:05");
    expect(countdown(3725)).toBe("1:02:05");
    expect(countdown(-1)).toBe("expired");
    expect(shortId("0123456789abcdef")).toBe("01234567…cdef");
  });
  it("flattens nested records into rows", () => {
    expect(flatten({ a: 1, b: { c: "x" }, d: ["p", "q"], e: [] })).toEqual([
      ["a", "1"],
      ["b.c", "x"],
      ["d", "p, q"],
      ["e", "[]"],
    ]);
  });
});

describe("routes", () => {
  it("round-trips screens and ids", () => {
    expect(parseRoute(routeHref("transactions", "a/b"))).toEqual({ screen: "transactions", id: "a/b", eventId: null });
    expect(parseRoute("#/nowhere")).toEqual({ screen: "products", id: null, eventId: null });
  });
  it("names an event within its transaction", () => {
    expect(routeHref("transactions", "t 1", "e/2")).toBe("#/transactions/t%201/events/e%2F2");
    expect(parseRoute(routeHref("transactions", "t 1", "e/2"))).toEqual({ screen: "transactions", id: "t 1", eventId: "e/2" });
    // Only transactions have events.
    expect(parseRoute("#/products/p/events/e").eventId).toBeNull();
  });
});

describe("sort keys and the active service", () => {
  const sandbox = { products: ["name"], transactions: ["id"], known: true, triedProducts: [], triedTransactions: [] };
  const other = {
    products: ["name"],
    transactions: ["id"],
    known: false,
    triedProducts: [],
    triedTransactions: [
      { key: "created", refusal: null },
      { key: "status", refusal: "sorting by 'status' is not supported" },
    ],
  };

  it("knows the sandbox's keys and only those", () => {
    expect(keyStanding(sandbox, "products", "name")).toEqual({ kind: "sortable" });
    expect(keyStanding(sandbox, "products", "colour")).toEqual({ kind: "unsortable" });
    expect(isClickable(keyStanding(sandbox, "products", "colour"))).toBe(false);
  });

  it("on another service, says what it said of each key and lets every key be tried", () => {
    expect(keyStanding(other, "transactions", "created")).toEqual({ kind: "accepted" });
    expect(keyStanding(other, "transactions", "status")).toEqual({ kind: "refused", words: "sorting by 'status' is not supported" });
    expect(keyStanding(other, "transactions", "updated")).toEqual({ kind: "untried" });
    expect(keyStanding(other, "products", "status")).toEqual({ kind: "untried" });
    expect(["created", "status", "updated"].map((k) => standingMark(keyStanding(other, "transactions", k)))).toEqual(["✓", "✕", "?"]);
    expect(isClickable(keyStanding(other, "transactions", "status"))).toBe(true);
  });
});
