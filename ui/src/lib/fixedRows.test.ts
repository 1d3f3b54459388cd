import { describe, expect, it } from "vitest";
import { MAX_CONTENT_PX, contentHeight, rowsInView, scrollToShow } from "./fixedRows";

const ROW = 28;
const VIEW = 560; // 20 rows

/** The rows wholly inside the view (not the overscan). */
function shown(scrollTop: number, count: number): number[] {
  return rowsInView(scrollTop, VIEW, count, ROW, 0)
    .filter((r) => r.top >= scrollTop - 0.001 && r.top + ROW <= scrollTop + VIEW + 0.001)
    .map((r) => r.index);
}

describe("fixed-height rows", () => {
  it("places each row at its own height times its index while the list fits", () => {
    expect(contentHeight(1000, ROW)).toBe(28_000);
    const rows = rowsInView(280, VIEW, 1000, ROW, 3);
    expect(rows[0]).toEqual({ index: 7, top: 7 * ROW });
    expect(rows.at(-1)).toEqual({ index: 32, top: 32 * ROW });
    expect(rows.every((r, i) => i === 0 || r.top - (rows[i - 1]?.top ?? 0) === ROW)).toBe(true);
    // The ends: no row before the first or after the last.
    expect(rowsInView(0, VIEW, 1000, ROW, 3)[0]?.index).toBe(0);
    expect(rowsInView(28_000 - VIEW, VIEW, 1000, ROW, 3).at(-1)?.index).toBe(999);
    expect(rowsInView(0, VIEW, 5, ROW, 3).map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(rowsInView(0, VIEW, 0, ROW, 3)).toEqual([]);
    // Not measured yet (no layout): the first rows and the overscan.
    expect(rowsInView(0, 0, 1000, ROW, 3).map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });

  it("keeps a list too tall for the browser under its limit and reaches every row", () => {
    const count = 2_000_000; // 56,000,000 px at full height
    expect(contentHeight(count, ROW)).toBe(MAX_CONTENT_PX);
    const range = MAX_CONTENT_PX - VIEW;
    expect(shown(0, count)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(shown(range, count)).toEqual(Array.from({ length: 20 }, (_, i) => count - 20 + i));
    // The middle of the scroll is the middle of the list, rows still a row apart.
    const middle = rowsInView(range / 2, VIEW, count, ROW, 2);
    expect(Math.abs((middle[2]?.index ?? 0) - (count - 20) / 2)).toBeLessThanOrEqual(1);
    expect(middle.every((r, i) => i === 0 || Math.abs(r.top - (middle[i - 1]?.top ?? 0) - ROW) < 1e-6)).toBe(true);
    expect(middle.every((r) => r.top >= 0 && r.top + ROW <= MAX_CONTENT_PX)).toBe(true);
  });

  it("scrolls a row into view with the least movement, at any size", () => {
    // In view: no move. Below: its bottom to the view's bottom. Above: its top to the top.
    expect(scrollToShow(12, 0, VIEW, 1000, ROW)).toBeNull();
    expect(scrollToShow(20, 0, VIEW, 1000, ROW)).toBe(21 * ROW - VIEW);
    expect(scrollToShow(3, 10 * ROW, VIEW, 1000, ROW)).toBe(3 * ROW);
    expect(scrollToShow(5000, 0, VIEW, 1000, ROW)).toBe(1000 * ROW - VIEW);
    for (const count of [1000, 2_000_000]) {
      for (const index of [0, 1, 777, Math.floor(count / 3), count - 1]) {
        const to = scrollToShow(index, 0, VIEW, count, ROW) ?? 0;
        expect(shown(to, count)).toContain(index);
      }
    }
  });
});
