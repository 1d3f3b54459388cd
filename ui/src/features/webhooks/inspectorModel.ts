/**
 * The inspector's data rules, kept pure for tests: the page holds only windows ("blocks") of
 * rows the capture store answered, never the whole store, so a million captures cost what a
 * hundred do. Counts, choices and search are the store's (see `useInspector`).
 */
import type { CaptureSummary, CaptureFilter, InspectorQuery, Verdict } from "../../platform";
import { instantOf } from "../../lib/format";

export const VERDICTS: Verdict[] = [
  "valid",
  "invalid-signature",
  "missing-signature",
  "unknown-subscription",
  "malformed-body",
  "too-large",
  "incomplete",
  "wrong-path",
  "wrong-method",
];

/** Rows read from the store at a time. */
export const BLOCK = 100;

/** What the filter bar holds; `""`/`"all"` mean no restriction. */
export interface FilterForm {
  verdict: Verdict | "all";
  eventType: string;
  resourceType: string;
  subscriptionId: string;
  /** `datetime-local` values, read as the user's local time. */
  since: string;
  until: string;
  text: string;
}

export const NO_FILTER: FilterForm = { verdict: "all", eventType: "", resourceType: "", subscriptionId: "", since: "", until: "", text: "" };


/**
 * Whether the facets, read beside every new filter, count what the list shows: a search of
 * every attempt (they count its hits up to the store's cap). The pages then count only through
 * themselves, so the same hits are not walked twice (at a million captures, about 30 ms each).
 */
export function countedByFacets(filter: CaptureFilter, grouped: boolean): boolean {
  return filter.text !== null && !grouped;
}

/** The store read of block `block` of the list: the inspector's, and the warm-up's of block 0. */
export function blockQuery(filter: CaptureFilter, grouped: boolean, block: number): InspectorQuery {
  return { filter, grouped, offset: block * BLOCK, limit: BLOCK, countPastPage: !countedByFacets(filter, grouped) };
}

/** No filter: every capture. */
export const EVERY_CAPTURE: CaptureFilter = { ids: [], maxId: null, verdicts: [], eventType: null, resourceType: null, subscriptionId: null, since: null, until: null, text: null };

/** The store's filter for the form. */
export function storeFilter(form: FilterForm): CaptureFilter {
  const named = (v: string) => (v.trim() === "" ? null : v.trim());
  return {
    ...EVERY_CAPTURE,
    verdicts: form.verdict === "all" ? [] : [form.verdict],
    eventType: named(form.eventType),
    resourceType: named(form.resourceType),
    subscriptionId: named(form.subscriptionId),
    since: instantOf(form.since),
    until: instantOf(form.until),
    text: named(form.text),
  };
}

/** Whether the form restricts anything. */
export function isFiltered(form: FilterForm): boolean {
  const f = storeFilter(form);
  return Object.values(f).some((v) => (Array.isArray(v) ? v.length > 0 : v !== null));
}

/**
 * The blocks that cover rows `first..=last` (clamped to `total`), and the one either side of
 * them: read after the rows in view, so a jump's own rows never wait behind its neighbours.
 */
export function blocksFor(first: number, last: number, total: number): { inView: number[]; around: number[] } {
  if (total <= 0) return { inView: [0], around: [] };
  const lastRow = Math.min(Math.max(last, first), total - 1);
  const from = Math.floor(Math.max(0, first) / BLOCK);
  const to = Math.floor(lastRow / BLOCK);
  const inView: number[] = [];
  for (let b = from; b <= to; b += 1) inView.push(b);
  const around = [from - 1, to + 1].filter((b) => b >= 0 && b <= Math.floor((total - 1) / BLOCK));
  return { inView, around };
}

/** The row at `index` in the loaded blocks, or undefined while its block is on its way. */
export function rowAt(blocks: ReadonlyMap<number, CaptureSummary[]>, index: number): CaptureSummary | undefined {
  return blocks.get(Math.floor(index / BLOCK))?.[index % BLOCK];
}

/** One row of the list as drawn: a capture (or notification), or one of its folded attempts. */
export type ListRow =
  | { kind: "row"; index: number }
  | { kind: "attempt"; parentIndex: number; attempt: CaptureSummary; number: number };

/** An open notification row and its attempts, shown under it. */
export interface Expanded {
  index: number;
  id: number;
  attempts: CaptureSummary[];
}

/** Rows drawn: the list's total plus the open notification's attempts. */
export function drawnCount(total: number, expanded: Expanded | null): number {
  return total + (expanded ? expanded.attempts.length : 0);
}

/** What drawn row `i` shows. */
export function drawnRow(i: number, expanded: Expanded | null): ListRow {
  if (!expanded || i <= expanded.index) return { kind: "row", index: i };
  const into = i - expanded.index - 1;
  if (into < expanded.attempts.length) {
    return { kind: "attempt", parentIndex: expanded.index, attempt: expanded.attempts[into] as CaptureSummary, number: into + 1 };
  }
  return { kind: "row", index: i - expanded.attempts.length };
}

/** Auto-scroll follows new captures only while the user is at the top of the list. */
export function shouldFollow(scrollTop: number): boolean {
  return scrollTop < 8;
}

export function shortResource(resourceType: string): string {
  return resourceType.replace("urn:svc:partner:", "");
}

/** `3 captures`, `1 capture`; `10,000+ captures` when the store stopped counting. */
export function captureCount(n: number, atLeast = false): string {
  return `${n.toLocaleString("en-US")}${atLeast ? "+" : ""} capture${n === 1 && !atLeast ? "" : "s"}`;
}
