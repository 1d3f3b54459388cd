import type { AuditEntryView } from "../../platform";

export const OUTCOMES = ["done", "failed", "refused"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * The entries whose connection, action, target, call, answer or request id holds `text` (any
 * case), with the outcome `outcome` ("all" for any).
 */
export function filterAudit(entries: AuditEntryView[], text: string, outcome: Outcome | "all"): AuditEntryView[] {
  const needle = text.trim().toLowerCase();
  return entries.filter((e) => {
    if (outcome !== "all" && e.outcome !== outcome) return false;
    if (!needle) return true;
    return [e.connection, e.action, e.target, e.call, e.answer, e.requestId ?? "", e.via]
      .some((field) => field.toLowerCase().includes(needle));
  });
}

/** The pill's class for an outcome: a refusal is a warning, not a failure of the service. */
export function outcomeClass(outcome: string): string {
  switch (outcome) {
    case "done":
      return "valid";
    case "refused":
      return "warn";
    default:
      return "invalid";
  }
}

/** "Showing the newest 500 of 1,203 writes", or "3 writes". */
export function countText(shown: number, total: number): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const writes = (v: number) => `${n(v)} ${v === 1 ? "write" : "writes"}`;
  return shown < total ? `Showing the newest ${n(shown)} of ${writes(total)}` : writes(total);
}
