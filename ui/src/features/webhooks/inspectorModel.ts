/**
 * The inspector's data: every capture summary, newest first, kept in the page with its
 * searchable text built once on arrival (see `CaptureList`), details fetched on demand.
 */
import type { CaptureSummary, Verdict } from "../../platform";

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

export interface InspectorFilter {
  verdict: Verdict | "all";
  eventType: string | "all";
  text: string;
}

export const NO_FILTER: InspectorFilter = { verdict: "all", eventType: "all", text: "" };

/**
 * The captures in the page, newest first, with each one's searchable text (lowercased) in a
 * parallel array, built once when the capture arrives: a keystroke in the filter is then one
 * `includes` per capture, with no string building, lowercasing or map look-up in that loop.
 */
export interface CaptureList {
  rows: CaptureSummary[];
  text: string[];
}

export const EMPTY_LIST: CaptureList = { rows: [], text: [] };

function searchText(c: CaptureSummary): string {
  return `${c.resourceId}\u0000${c.eventId}\u0000${c.instanceId}\u0000${c.resourceType}\u0000${c.subscriptionId}`.toLowerCase();
}

/** A list of captures already newest first (as the shell's `captures` answers). */
export function listOf(rows: CaptureSummary[]): CaptureList {
  return { rows, text: rows.map(searchText) };
}

/** Adds a batch (oldest first, as the shell sends it) to a newest-first list; ids are unique. */
export function mergeBatch(current: CaptureList, batch: CaptureSummary[]): CaptureList {
  if (batch.length === 0) return current;
  const known = new Set<number>();
  const headLength = Math.min(current.rows.length, batch.length * 4 + 64);
  for (let i = 0; i < headLength; i += 1) known.add((current.rows[i] as CaptureSummary).id);
  const fresh = batch.filter((c) => !known.has(c.id)).sort((a, b) => b.id - a.id);
  if (fresh.length === 0) return current;
  return { rows: fresh.concat(current.rows), text: fresh.map(searchText).concat(current.text) };
}

export function applyFilter(list: CaptureList, filter: InspectorFilter): CaptureSummary[] {
  const needle = filter.text.trim().toLowerCase();
  const { rows, text } = list;
  if (filter.verdict === "all" && filter.eventType === "all" && needle === "") return rows;
  const anyVerdict = filter.verdict === "all";
  const anyEvent = filter.eventType === "all";
  const out: CaptureSummary[] = [];
  for (let i = 0; i < rows.length; i += 1) {
    const c = rows[i] as CaptureSummary;
    if ((anyVerdict || c.verdict === filter.verdict) && (anyEvent || c.eventType === filter.eventType) && (needle === "" || (text[i] as string).includes(needle))) {
      out.push(c);
    }
  }
  return out;
}

export function countByVerdict(captures: CaptureSummary[]): Record<Verdict, number> {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const c of captures) counts[c.verdict] += 1;
  return counts;
}

/** Auto-scroll follows new captures only while the user is at the top of the list. */
export function shouldFollow(scrollTop: number): boolean {
  return scrollTop < 8;
}

export function shortResource(resourceType: string): string {
  return resourceType.replace("urn:svc:partner:", "");
}

/**
 * The ids "Clear shown" deletes: the captures the filter shows. None when it shows every
 * capture (then it is "Clear all") or none at all: an empty list is never sent, since the
 * store reads no ids as no restriction.
 */
export function shownIds(visible: CaptureSummary[], total: number): number[] | null {
  if (visible.length === 0 || visible.length >= total) return null;
  return visible.map((c) => c.id);
}

/** The list without the cleared captures (every one when `ids` is null). */
export function withoutCaptures(list: CaptureList, ids: number[] | null): CaptureList {
  if (ids === null) return EMPTY_LIST;
  if (ids.length === 0) return list;
  const gone = new Set(ids);
  const rows: CaptureSummary[] = [];
  const text: string[] = [];
  for (let i = 0; i < list.rows.length; i += 1) {
    const c = list.rows[i] as CaptureSummary;
    if (!gone.has(c.id)) {
      rows.push(c);
      text.push(list.text[i] as string);
    }
  }
  return rows.length === list.rows.length ? list : { rows, text };
}

/** `3 captures`, `1 capture`. */
export function captureCount(n: number): string {
  return `${n} capture${n === 1 ? "" : "s"}`;
}
