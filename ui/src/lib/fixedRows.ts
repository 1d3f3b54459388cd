/**
 * Windowing for a list of rows of one fixed height, in O(1) whatever the row count: which rows
 * a scroll position shows and where they go. The inspector lists up to millions of captures:
 *
 * - TanStack Virtual (used before) keeps a position for every row, rebuilt whenever the count
 *   changes (each filter, each live refresh): at a million rows, a 16 MB array and a key array
 *   per rebuild, and a loop over every row. With every row the same height there is nothing to
 *   measure, so positions are arithmetic.
 * - WebKit lays out at most 2^25 - 1 px (33,554,431: its LayoutUnit is 1/64 px in an int32), so a
 *   million and a quarter rows of 28 px cannot be given their full height. Past
 *   [`MAX_CONTENT_PX`] the content is that tall and a scroll position maps to a row in
 *   proportion; the rows in view stay a row height apart, so the list looks and steps the same.
 */
import { useCallback, useLayoutEffect, useState, type RefObject } from "react";
import { flushSync } from "react-dom";

/** The tallest the list's content is made (well under WebKit's limit). */
export const MAX_CONTENT_PX = 16_000_000;

/** A row in the window: its index and its top in the content's pixels. */
export interface WindowRow {
  index: number;
  top: number;
}

/** The content's height for `count` rows. */
export function contentHeight(count: number, rowHeight: number): number {
  return Math.min(Math.max(0, count) * rowHeight, MAX_CONTENT_PX);
}

/**
 * Where the top of the view is in the full list's pixels (as if every row had its height) for
 * the content scrolled to `scrollTop`: the same below [`MAX_CONTENT_PX`], in proportion above.
 */
function virtualTop(scrollTop: number, viewport: number, count: number, rowHeight: number): number {
  const full = count * rowHeight;
  const content = contentHeight(count, rowHeight);
  if (full === content) return scrollTop;
  const range = content - viewport;
  return range <= 0 ? 0 : (Math.min(scrollTop, range) / range) * (full - viewport);
}

/** The rows a view of `viewport` px at `scrollTop` shows, with `overscan` more each side. */
export function rowsInView(scrollTop: number, viewport: number, count: number, rowHeight: number, overscan: number): WindowRow[] {
  if (count <= 0) return [];
  const top = virtualTop(scrollTop, viewport, count, rowHeight);
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.max(0, Math.ceil((top + viewport) / rowHeight) - 1) + overscan);
  // Row i sits i rows below the view's top in the full list, placed from where the view is.
  const shift = scrollTop - top;
  const rows: WindowRow[] = [];
  for (let index = first; index <= last; index += 1) rows.push({ index, top: shift + index * rowHeight });
  return rows;
}

/**
 * The scroll position that brings row `index` into view with the least movement (none when it
 * is in view already), or `null` for none.
 */
export function scrollToShow(index: number, scrollTop: number, viewport: number, count: number, rowHeight: number): number | null {
  if (count <= 0) return null;
  const row = Math.min(Math.max(0, index), count - 1) * rowHeight;
  const top = virtualTop(scrollTop, viewport, count, rowHeight);
  let wanted: number;
  if (row < top) wanted = row;
  else if (row + rowHeight > top + viewport) wanted = row + rowHeight - viewport;
  else return null;
  const full = count * rowHeight;
  const content = contentHeight(count, rowHeight);
  if (full === content) return Math.max(0, wanted);
  const range = content - viewport;
  return range <= 0 ? 0 : Math.max(0, Math.min(range, (wanted / (full - viewport)) * range));
}

/**
 * The rows of a scrolled list in view, following its scroll and size. The scroll re-renders at
 * once (`flushSync`), so a frame never shows the old rows at the new position.
 */
export function useFixedRows({ count, rowHeight, overscan, scrollRef }: { count: number; rowHeight: number; overscan: number; scrollRef: RefObject<HTMLElement | null> }) {
  const [view, setView] = useState({ scrollTop: 0, height: 0 });
  useLayoutEffect(() => {
    const element = scrollRef.current;
    if (!element) return;
    const read = () => setView((cur) => (cur.scrollTop === element.scrollTop && cur.height === element.clientHeight ? cur : { scrollTop: element.scrollTop, height: element.clientHeight }));
    read();
    const onScroll = () => flushSync(read);
    element.addEventListener("scroll", onScroll, { passive: true });
    const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(read);
    resized?.observe(element);
    return () => {
      element.removeEventListener("scroll", onScroll);
      resized?.disconnect();
    };
  }, [scrollRef]);
  const rows = rowsInView(view.scrollTop, view.height, count, rowHeight, overscan);
  const scrollToIndex = useCallback(
    (index: number) => {
      const element = scrollRef.current;
      if (!element) return;
      const to = scrollToShow(index, element.scrollTop, element.clientHeight, count, rowHeight);
      if (to !== null) element.scrollTop = to;
    },
    [scrollRef, count, rowHeight],
  );
  return { rows, totalHeight: contentHeight(count, rowHeight), scrollToIndex };
}
