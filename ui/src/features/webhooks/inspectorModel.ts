/**
 * The inspector's data: every capture summary, newest first, kept in the page (a summary is a
 * few hundred bytes; 100,000 of them filter in a few milliseconds), details fetched on demand.
 */
import type { CaptureSummary, Verdict } from "../../platform";

export const VERDICTS: Verdict[] = ["valid", "invalid-signature", "missing-signature", "unknown-subscription", "malformed"];

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

function matchesText(c: CaptureSummary, needle: string): boolean {
  return (
    c.resourceId.toLowerCase().includes(needle) ||
    c.eventId.toLowerCase().includes(needle) ||
    c.instanceId.toLowerCase().includes(needle) ||
    c.resourceType.toLowerCase().includes(needle) ||
    c.subscriptionId.toLowerCase().includes(needle)
  );
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
  const counts: Record<Verdict, number> = {
    valid: 0,
    "invalid-signature": 0,
    "missing-signature": 0,
    "unknown-subscription": 0,
    malformed: 0,
  };
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
