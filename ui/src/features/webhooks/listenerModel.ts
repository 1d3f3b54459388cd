import type { ListenerAddressForm, RepointResult, RetentionForm, TestMode, TunnelCheck, TunnelFailureKind } from "../../platform";

/** Reads the test-mode fields: a status 100–599 and a delay of 0–60,000 ms, or what is wrong. */
export function parseTestMode(enabled: boolean, status: string, delay: string): TestMode | string {
  if (!enabled) return { enabled: false, status: 200, delayMs: 0 };
  if (!/^\d{3}$/.test(status.trim())) return "Status must be three digits, e.g. 500.";
  const code = Number(status.trim());
  if (code < 100 || code > 599) return "Status must be between 100 and 599.";
  if (!/^\d+$/.test(delay.trim())) return "Delay is a whole number of milliseconds.";
  const ms = Number(delay.trim());
  if (ms > 60000) return "Delay is at most 60000 ms.";
  return { enabled: true, status: code, delayMs: ms };
}

/** A short name for each class of tunnel-check failure (the shell words the rest). */
export const TUNNEL_FAILURE_LABEL: Record<TunnelFailureKind, string> = {
  invalidUrl: "Not a URL",
  notHttps: "Not https",
  dns: "DNS",
  tls: "TLS",
  refused: "Refused",
  connect: "Connection",
  timeout: "Timeout",
  status: "HTTP status",
  wrongPath: "Wrong path",
  notArrived: "Did not arrive",
};

/** The badge and the measured facts of a tunnel check, e.g. `HTTP 200 · 42 ms · arrived`. */
export function describeTunnelCheck(check: TunnelCheck): { badge: string; facts: string } {
  const badge = check.failure ? TUNNEL_FAILURE_LABEL[check.failure] : "Reached";
  const facts = [
    check.status !== null ? `HTTP ${check.status}` : null,
    check.roundTripMs !== null ? `${check.roundTripMs} ms` : null,
    check.arrived ? "arrived at the listener" : "not seen by the listener",
  ].filter((fact): fact is string => fact !== null);
  return { badge, facts: facts.join(" · ") };
}

export type FieldProblems<K extends string> = Partial<Record<K, string>>;

/** A form read from its fields: the form to send, or what is wrong with which field. */
export type Parsed<T, K extends string> = { form: T; problems: null } | { form: null; problems: FieldProblems<K> };

function parsed<T, K extends string>(form: T, problems: FieldProblems<K>): Parsed<T, K> {
  return Object.keys(problems).length > 0 ? { form: null, problems } : { form, problems: null };
}

/**
 * Reads the listener's address (`IP:PORT`, `localhost:PORT` too) and path as the shell will:
 * the shell checks them again and has the last word, this only catches slips before a save.
 */
export function parseListenerAddress(address: string, path: string): Parsed<ListenerAddressForm, "address" | "path"> {
  const problems: FieldProblems<"address" | "path"> = {};
  const a = address.trim();
  const match = /^(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(a);
  if (!match) problems.address = "Give the address as IP:PORT, for example 127.0.0.1:7070.";
  else if (Number(match[1]) > 65535) problems.address = "The port is at most 65535.";
  const p = path.trim();
  if (!p.startsWith("/")) problems.path = "The path starts with /, for example /webhooks.";
  else if (/[\s?#]/.test(p)) problems.path = "The path may not hold spaces, ? or #.";
  else if (p.length > 200) problems.path = "The path is at most 200 characters.";
  return parsed({ address: a, path: p }, problems);
}

/** One retention field: empty is no limit, else a whole number of at least 1. */
function limit(raw: string, what: string, max: number): number | null | string {
  const t = raw.trim();
  if (t === "") return null;
  if (!/^\d+$/.test(t)) return `${what} is a whole number, or empty for no limit.`;
  const n = Number(t);
  if (n < 1) return `${what} is at least 1, or empty for no limit.`;
  if (n > max) return `${what} is at most ${max}.`;
  return n;
}

/** Reads the retention fields; empty means no limit. */
export function parseRetention(maxCaptures: string, maxAgeDays: string): Parsed<RetentionForm, "maxCaptures" | "maxAgeDays"> {
  const captures = limit(maxCaptures, "Max captures", Number.MAX_SAFE_INTEGER);
  const days = limit(maxAgeDays, "Max age", 4_294_967_295);
  const problems: FieldProblems<"maxCaptures" | "maxAgeDays"> = {};
  if (typeof captures === "string") problems.maxCaptures = captures;
  if (typeof days === "string") problems.maxAgeDays = days;
  if (typeof captures === "string" || typeof days === "string") return { form: null, problems };
  return parsed({ maxCaptures: captures, maxAgeDays: days }, problems);
}

/** The retention in words, e.g. `at most 10000 captures, for 30 days`. */
export function describeRetention(r: RetentionForm): string {
  const parts = [
    r.maxCaptures !== null ? `at most ${r.maxCaptures} capture${r.maxCaptures === 1 ? "" : "s"}` : null,
    r.maxAgeDays !== null ? `for ${r.maxAgeDays} day${r.maxAgeDays === 1 ? "" : "s"}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length === 0 ? "every capture, with no limit" : parts.join(", ");
}

/** What a re-pointing did, in one sentence. */
export function describeRepoint(result: RepointResult): string {
  const n = result.changed.length;
  const changed = `Re-pointed ${n} subscription${n === 1 ? "" : "s"}.`;
  const failed = result.failures.length;
  return failed === 0 ? changed : `${changed} ${failed} product${failed === 1 ? "" : "s"} could not be changed:`;
}
