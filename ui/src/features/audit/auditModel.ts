import type { AuditEntryView, AuditLogView } from "../../platform";

export const OUTCOMES = ["done", "failed", "refused"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * The entries whose connection, member, role, action, target, call, answer (a workspace
 * entry's detail) or request id holds `text` (any case), with the outcome `outcome` ("all" for
 * any).
 */
export function filterAudit(entries: AuditEntryView[], text: string, outcome: Outcome | "all"): AuditEntryView[] {
  const needle = text.trim().toLowerCase();
  return entries.filter((e) => {
    if (outcome !== "all" && e.outcome !== outcome) return false;
    if (!needle) return true;
    return [e.connection, e.member ?? "", e.role ?? "", e.action, e.target, e.call, e.answer, e.requestId ?? "", e.via]
      .some((field) => field.toLowerCase().includes(needle));
  });
}

/**
 * Whose log the screen shows, when it is a team workspace's: "The team workspace URL's audit
 * log: every member's writes"; `null` for this machine's own.
 */
export function workspaceLogText(log: AuditLogView): string | null {
  if (!log.workspace) return null;
  return `The team workspace ${log.workspace}'s audit log: every member's writes and refusals there, under their name and role. This machine's own log is shown again once you leave the workspace.`;
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

/**
 * "Showing the newest 500 of 1,203 writes", or "3 writes"; with `older` (a workspace's log,
 * which is not counted), "Showing the newest 500 writes; the export has the older ones too".
 */
export function countText(shown: number, total: number, older = false): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const writes = (v: number) => `${n(v)} ${v === 1 ? "write" : "writes"}`;
  if (older) return `Showing the newest ${writes(shown)}; the export has the older ones too`;
  return shown < total ? `Showing the newest ${n(shown)} of ${writes(total)}` : writes(total);
}
