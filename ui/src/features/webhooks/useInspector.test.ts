import { act, renderHook, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { CaptureSummary, CaptureFilter } from "../../platform";
import { mockCommands } from "../../test/render";
import { BLOCK } from "./inspectorModel";
import { KEEP_BLOCKS_AROUND, furthest, useInspector } from "./useInspector";

const TOTAL = 100_000;
function summary(id: number): CaptureSummary {
  return { id, receivedAt: new Date(1_700_000_000_000 + id * 1000).toISOString(), verdict: "valid", eventType: "created", resourceType: "urn:svc:partner:transaction", resourceId: `tx-${id}`, instanceId: "demo", eventId: `e-${id}`, subscriptionId: "s", attempts: 1, replayed: false, groupAttempts: 1 };
}
const noFilter: CaptureFilter = { ids: [], maxId: null, verdicts: [], eventType: null, resourceType: null, subscriptionId: null, since: null, until: null, text: null };

describe("useInspector", () => {
  it("holds the blocks near the window and the first, not every block a long scroll passed", async () => {
    const calls = mockCommands({
      inspector_page: (args) => {
        const { offset, limit } = (args as { query: { offset: number; limit: number } }).query;
        const items = Array.from({ length: Math.min(limit, TOTAL - offset) }, (_, i) => summary(TOTAL - offset - i));
        return { offset, total: TOTAL, totalCapped: false, unsearched: 0, items };
      },
      inspector_facets: () => ({ capped: false, verdicts: { valid: TOTAL }, eventTypes: [], resourceTypes: [], subscriptions: [], stored: TOTAL, total: TOTAL }),
    });
    const { result } = renderHook(() => useInspector(noFilter, false, false));
    await waitFor(() => expect(result.current.blocks.has(0)).toBe(true));

    // A scroll through the middle of the list, block after block, then a jump far down.
    for (const block of [10, 11, 12, 13, 14, 15]) {
      act(() => result.current.want([block]));
      await waitFor(() => expect(result.current.blocks.has(block)).toBe(true));
    }
    // The first block, and those within KEEP_BLOCKS_AROUND (2) of the last one asked for.
    expect(KEEP_BLOCKS_AROUND).toBe(2);
    expect([...result.current.blocks.keys()].sort((a, b) => a - b)).toEqual([0, 13, 14, 15]);
    act(() => result.current.want([900]));
    await waitFor(() => expect(result.current.blocks.has(900)).toBe(true));
    expect([...result.current.blocks.keys()].sort((a, b) => a - b)).toEqual([0, 900]);
    expect(result.current.blocks.get(900)?.[0]?.id).toBe(TOTAL - 900 * BLOCK);

    // Back where it was: the block dropped is read again.
    const before = calls.filter((c) => c.cmd === "inspector_page").length;
    act(() => result.current.want([14]));
    await waitFor(() => expect(result.current.blocks.has(14)).toBe(true));
    expect(calls.filter((c) => c.cmd === "inspector_page").length).toBe(before + 1);
  });

  it("says how many older captures a search left out while the store indexes them, and forgets it with the next search", async () => {
    mockCommands({
      inspector_page: (args) => {
        const { offset, filter } = (args as { query: { offset: number; filter: CaptureFilter } }).query;
        const catchingUp = filter.text === "loan";
        return { offset, total: catchingUp ? 3 : 0, totalCapped: false, unsearched: catchingUp ? 975_000 : 0, items: catchingUp ? [summary(3), summary(2), summary(1)] : [] };
      },
      inspector_facets: (args) => ({ capped: false, verdicts: {}, eventTypes: [], resourceTypes: [], subscriptions: [], stored: 1_000_000, total: (args as { filter: CaptureFilter }).filter.text === "loan" ? 3 : 0 }),
    });
    const { result, rerender } = renderHook(({ text }) => useInspector({ ...noFilter, text }, false, false), { initialProps: { text: "loan" } });
    await waitFor(() => expect(result.current.unsearched).toBe(975_000));
    expect(result.current.blocks.get(0)?.map((c) => c.id)).toEqual([3, 2, 1]);
    rerender({ text: "xylophonist" });
    await waitFor(() => expect(result.current.total).toBe(0));
    expect(result.current.unsearched).toBe(0);
  });

  it("drops a block that lands after the list moved far from it", async () => {
    let answerSlow: () => void = () => {};
    mockCommands({
      inspector_page: (args) => {
        const { offset, limit } = (args as { query: { offset: number; limit: number } }).query;
        const page = { offset, total: TOTAL, totalCapped: false, unsearched: 0, items: Array.from({ length: limit }, (_, i) => summary(TOTAL - offset - i)) };
        return offset === 50 * BLOCK ? new Promise((resolve) => (answerSlow = () => resolve(page))) : page;
      },
      inspector_facets: () => ({ capped: false, verdicts: {}, eventTypes: [], resourceTypes: [], subscriptions: [], stored: TOTAL, total: TOTAL }),
    });
    const { result } = renderHook(() => useInspector(noFilter, false, false));
    await waitFor(() => expect(result.current.blocks.has(0)).toBe(true));
    act(() => result.current.want([50]));
    act(() => result.current.want([700]));
    await waitFor(() => expect(result.current.blocks.has(700)).toBe(true));
    await act(async () => answerSlow());
    expect(result.current.blocks.has(50)).toBe(false);
    expect(result.current.blocks.has(700)).toBe(true);
  });

  it("counts a search once, by the facets, while its pages count only through themselves", async () => {
    const HITS = 30_000;
    const CAP = 10_000;
    let answerFacets: () => void = () => {};
    const calls = mockCommands({
      inspector_page: (args) => {
        const { offset, limit, countPastPage } = (args as { query: { offset: number; limit: number; countPastPage: boolean } }).query;
        const items = Array.from({ length: Math.min(limit, HITS - offset) }, (_, i) => summary(HITS - offset - i));
        // The store's two ways: up to its cap, or through the page and one hit more.
        return countPastPage
          ? { offset, total: CAP, totalCapped: true, unsearched: 0, items }
          : { offset, total: Math.min(HITS, offset + limit), totalCapped: HITS > offset + limit, unsearched: 0, items };
      },
      inspector_facets: () =>
        new Promise((resolve) => {
          answerFacets = () => resolve({ capped: true, verdicts: { valid: CAP }, eventTypes: [], resourceTypes: [], subscriptions: [], stored: 90_000, total: CAP });
        }),
    });
    const search = { ...noFilter, text: "partner" };
    const { result } = renderHook(() => useInspector(search, false, false));
    await waitFor(() => expect(result.current.blocks.has(0)).toBe(true));
    // The rows are shown before the count is in: "100+", then further as blocks further down land.
    expect([result.current.total, result.current.capped, result.current.loading]).toEqual([BLOCK, true, false]);
    act(() => result.current.want([40]));
    await waitFor(() => expect(result.current.blocks.has(40)).toBe(true));
    expect([result.current.total, result.current.capped]).toEqual([41 * BLOCK, true]);
    // A block nearer the top again never shortens the list.
    act(() => result.current.want([1]));
    await waitFor(() => expect(result.current.blocks.has(1)).toBe(true));
    expect(result.current.total).toBe(41 * BLOCK);
    await act(async () => answerFacets());
    expect([result.current.total, result.current.capped]).toEqual([CAP, true]);
    const pages = calls.filter((c) => c.cmd === "inspector_page").map((c) => (c.args as { query: { countPastPage: boolean } }).query.countPastPage);
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.every((counted) => !counted)).toBe(true);

    // Grouped, the facets count captures, not notifications: the pages count themselves.
    const grouped = renderHook(() => useInspector(search, true, false));
    await waitFor(() => expect(grouped.result.current.blocks.has(0)).toBe(true));
    expect([grouped.result.current.total, grouped.result.current.capped]).toEqual([CAP, true]);
    const last = calls.filter((c) => c.cmd === "inspector_page").at(-1)?.args as { query: { countPastPage: boolean; grouped: boolean } };
    expect(last.query).toMatchObject({ grouped: true, countPastPage: true });
  });

  it("keeps the further of two counts of one generation, and an exact one at a tie", () => {
    expect(furthest({ gen: 1, total: 500, capped: true }, { gen: 1, total: 100, capped: true })).toEqual({ gen: 1, total: 500, capped: true });
    expect(furthest({ gen: 1, total: 100, capped: true }, { gen: 1, total: 250, capped: false })).toEqual({ gen: 1, total: 250, capped: false });
    expect(furthest({ gen: 1, total: 250, capped: true }, { gen: 1, total: 250, capped: false })).toEqual({ gen: 1, total: 250, capped: false });
    expect(furthest({ gen: 1, total: 9000, capped: true }, { gen: 2, total: 3, capped: false })).toEqual({ gen: 2, total: 3, capped: false });
  });
});
