/**
 * The inspector's data: every capture summary, newest first, kept in the page (a summary is a
 * few hundred bytes; 100,000 of them filter in a few milliseconds), details fetched on demand.
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

/** Adds a batch (oldest first, as the shell sends it) to a newest-first list; ids are unique. */
export function mergeBatch(current: CaptureSummary[], batch: CaptureSummary[]): CaptureSummary[] {
  if (batch.length === 0) return current;
  const known = new Set<number>();
  const head = current.slice(0, Math.min(current.length, batch.length * 4 + 64));
  for (const c of head) known.add(c.id);
  const fresh = batch.filter((c) => !known.has(c.id)).sort((a, b) => b.id - a.id);
  if (fresh.length === 0) return current;
  return fresh.concat(current);
}

/** The searchable text of a summary, lowercased once per summary (summaries never change). */
const haystacks = new WeakMap<CaptureSummary, string>();

function haystack(c: CaptureSummary): string {
  let text = haystacks.get(c);
  if (text === undefined) {
    text = `${c.resourceId}\u0000${c.eventId}\u0000${c.instanceId}\u0000${c.resourceType}\u0000${c.subscriptionId}`.toLowerCase();
    haystacks.set(c, text);
  }
  return text;
}

function matchesText(c: CaptureSummary, needle: string): boolean {
  return haystack(c).includes(needle);
}

export function applyFilter(captures: CaptureSummary[], filter: InspectorFilter): CaptureSummary[] {
  const needle = filter.text.trim().toLowerCase();
  if (filter.verdict === "all" && filter.eventType === "all" && needle === "") return captures;
  return captures.filter(
    (c) =>
      (filter.verdict === "all" || c.verdict === filter.verdict) &&
      (filter.eventType === "all" || c.eventType === filter.eventType) &&
      (needle === "" || matchesText(c, needle)),
  );
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
