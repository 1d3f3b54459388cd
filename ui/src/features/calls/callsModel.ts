import type { CallSummary } from "../../platform";

/** How a call ended, by class: the panel's status filter. */
export type StatusClass = "2xx" | "3xx" | "4xx" | "5xx" | "no answer";

export const STATUS_CLASSES: StatusClass[] = ["2xx", "3xx", "4xx", "5xx", "no answer"];

export function statusClass(call: CallSummary): StatusClass {
  if (call.status === null) return "no answer";
  if (call.status >= 500) return "5xx";
  if (call.status >= 400) return "4xx";
  if (call.status >= 300) return "3xx";
  return "2xx";
}

/** The status cell: the code, or why there was none. */
export function outcomeLabel(call: CallSummary): string {
  return call.status !== null ? String(call.status) : (call.error ?? "no answer");
}

/** New calls merged into the list: each call once, newest (highest number) first. */
export function mergeCalls(shown: CallSummary[], arrived: CallSummary[]): CallSummary[] {
  const bySeq = new Map<number, CallSummary>();
  for (const call of [...shown, ...arrived]) bySeq.set(call.seq, call);
  return [...bySeq.values()].sort((a, b) => b.seq - a.seq);
}

/** The calls whose method, target, outcome or request id contain `text` (any case), in `classes`. */
export function filterCalls(calls: CallSummary[], text: string, classes: StatusClass | "all"): CallSummary[] {
  const needle = text.trim().toLowerCase();
  return calls.filter((call) => {
    if (classes !== "all" && statusClass(call) !== classes) return false;
    if (!needle) return true;
    return [call.method, call.target, outcomeLabel(call), call.requestId ?? ""].some((v) => v.toLowerCase().includes(needle));
  });
}

export function formatBytes(bytes: number | null): string {
  if (bytes === null) return "—";
  if (bytes < 1024) return `${bytes} B`;
  return `${(bytes / 1024).toFixed(1)} KB`;
}
