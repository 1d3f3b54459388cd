import type { ForwardRuleView, JunkView, ListenerAddressForm, RepointResult, RetentionForm, TestMode, TunnelCheck, TunnelFailureKind } from "../../platform";

/** The test-mode form's fields, as typed. */
export type TestModeFields = { enabled: boolean; status: string; delay: string; failPercent: string; failFirst: string; failureStatus: string };

export function testModeFields(mode: TestMode): TestModeFields {
  return {
    enabled: mode.enabled,
    status: String(mode.status),
    delay: String(mode.delayMs),
    failPercent: String(Math.round(mode.failRate * 1000) / 10),
    failFirst: String(mode.failFirstAttempts),
    failureStatus: String(mode.failureStatus),
  };
}

function httpStatus(raw: string, what: string): number | string {
  if (!/^\d{3}$/.test(raw.trim())) return `${what} must be three digits, e.g. 500.`;
  const code = Number(raw.trim());
  if (code < 100 || code > 599) return `${what} must be between 100 and 599.`;
  return code;
}

/**
 * Reads the test-mode fields as `partner listen` takes them: a status and a failure status of
 * 100-599, a delay of 0-60,000 ms, a failure rate of 0-100 % and a number of first attempts
 * to fail (0-10), or what is wrong with which field.
 */
export function parseTestMode(f: TestModeFields): Parsed<TestMode, "status" | "delay" | "failPercent" | "failFirst" | "failureStatus"> {
  const problems: FieldProblems<"status" | "delay" | "failPercent" | "failFirst" | "failureStatus"> = {};
  const status = httpStatus(f.status, "Status");
  if (typeof status === "string") problems.status = status;
  const failureStatus = httpStatus(f.failureStatus, "Failure status");
  if (typeof failureStatus === "string") problems.failureStatus = failureStatus;
  const delay = f.delay.trim();
  if (!/^\d+$/.test(delay)) problems.delay = "Delay is a whole number of milliseconds.";
  else if (Number(delay) > 60000) problems.delay = "Delay is at most 60000 ms.";
  const percent = f.failPercent.trim();
  if (!/^\d+(\.\d+)?$/.test(percent) || Number(percent) > 100) problems.failPercent = "Failure rate is a percentage from 0 to 100.";
  const first = f.failFirst.trim();
  if (!/^\d+$/.test(first) || Number(first) > 10) problems.failFirst = "Fail first is a number of attempts from 0 to 10.";
  return parsed(
    {
      enabled: f.enabled,
      status: typeof status === "number" ? status : 200,
      delayMs: Number(delay) || 0,
      failRate: Math.min(1, (Number(percent) || 0) / 100),
      failFirstAttempts: Number(first) || 0,
      failureStatus: typeof failureStatus === "number" ? failureStatus : 500,
    },
    f.enabled ? problems : {},
  );
}

/** The test mode in a few words, for the folded card: `answers 200 · 30 % fail with 500`. */
export function describeTestMode(mode: TestMode): string {
  if (!mode.enabled) return "off: the listener answers as it should";
  const parts = [`answers ${mode.status}${mode.delayMs ? ` after ${mode.delayMs} ms` : ""}`];
  if (mode.failRate > 0) parts.push(`${Math.round(mode.failRate * 1000) / 10} % fail with ${mode.failureStatus}`);
  if (mode.failFirstAttempts > 0) parts.push(`first ${mode.failFirstAttempts === 1 ? "attempt fails" : `${mode.failFirstAttempts} attempts fail`} with ${mode.failureStatus}`);
  return parts.join(" · ");
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

const SIZE_UNITS: Record<string, number> = {
  "": 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
  k: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gib: 2 ** 30, t: 2 ** 40, tib: 2 ** 40,
};
/** The smallest byte budget the shell takes: one body of the listener's limit (1 MiB). */
const MIN_MAX_BYTES = 2 ** 20;

/**
 * A size as `partner listen --max-bytes` reads it (partner-listener's `limits_text`): a number
 * with an optional unit, `2GiB`, `500 MB`, `1048576`; empty is no limit.
 */
export function parseSize(raw: string, what: string): number | null | string {
  const t = raw.trim();
  if (t === "") return null;
  const match = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(t);
  const [, number, unit] = match ?? [];
  const scale = number !== undefined && unit !== undefined ? SIZE_UNITS[unit.toLowerCase()] : undefined;
  if (number === undefined || scale === undefined) return `${what} is a size such as 2 GiB or 500 MB, or empty for no limit.`;
  const bytes = Math.floor(Number(number) * scale);
  if (bytes < MIN_MAX_BYTES) return `${what} is at least 1 MiB (one body may be that large), or empty for no limit.`;
  if (bytes > Number.MAX_SAFE_INTEGER) return `${what} is at most ${formatSize(Number.MAX_SAFE_INTEGER)}.`;
  return bytes;
}

/** A size in the largest binary unit that keeps it readable: `2 GiB`, `1.5 MiB`, `512 B`. */
export function formatSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = unit === 0 ? String(value) : value.toFixed(1).replace(/\.0$/, "");
  return `${text} ${units[unit]}`;
}

/** Reads the retention fields; empty means no limit (for the junk rate: every junk request stored). */
export function parseRetention(
  maxCaptures: string,
  maxAgeDays: string,
  maxBytes = "",
  junkRate = "",
): Parsed<RetentionForm, "maxCaptures" | "maxBytes" | "maxAgeDays" | "junkRate"> {
  const captures = limit(maxCaptures, "Max captures", Number.MAX_SAFE_INTEGER);
  const bytes = parseSize(maxBytes, "Max size");
  const days = limit(maxAgeDays, "Max age", 4_294_967_295);
  const rate = limit(junkRate, "Junk stored a second", 4_294_967_295);
  const problems: FieldProblems<"maxCaptures" | "maxBytes" | "maxAgeDays" | "junkRate"> = {};
  if (typeof captures === "string") problems.maxCaptures = captures;
  if (typeof bytes === "string") problems.maxBytes = bytes;
  if (typeof days === "string") problems.maxAgeDays = days;
  if (typeof rate === "string") problems.junkRate = rate;
  if (typeof captures === "string" || typeof bytes === "string" || typeof days === "string" || typeof rate === "string") return { form: null, problems };
  return parsed({ maxCaptures: captures, maxBytes: bytes, maxAgeDays: days, junkRate: rate }, problems);
}

/**
 * The retention in words, e.g. `at most 10000 captures, 2 GiB of them, for 30 days; junk past
 * 20/s counted, not stored`.
 */
export function describeRetention(r: RetentionForm): string {
  const parts = [
    r.maxCaptures !== null ? `at most ${r.maxCaptures} capture${r.maxCaptures === 1 ? "" : "s"}` : null,
    r.maxBytes !== null ? (r.maxCaptures !== null ? `${formatSize(r.maxBytes)} of them` : `at most ${formatSize(r.maxBytes)} of captures`) : null,
    r.maxAgeDays !== null ? `for ${r.maxAgeDays} day${r.maxAgeDays === 1 ? "" : "s"}` : null,
  ].filter((p): p is string => p !== null);
  const kept = parts.length === 0 ? "every capture, with no limit" : parts.join(", ");
  return r.junkRate === null ? kept : `${kept}; junk past ${r.junkRate}/s counted, not stored`;
}

/** The listener's junk in a few words for its status line, e.g. `junk: 2,950 counted, 1,234 pruned`. */
export function junkCounter(junk: JunkView): string | null {
  const n = (value: number) => value.toLocaleString("en-US");
  const parts = [
    junk.flood.summarised > 0 ? `${n(junk.flood.summarised)} counted, not stored` : null,
    junk.sizes.junk.pruned > 0 ? `${n(junk.sizes.junk.pruned)} pruned` : null,
  ].filter((p): p is string => p !== null);
  return parts.length === 0 ? null : `junk: ${parts.join(", ")}`;
}

/**
 * What the running listener did with junk, in a sentence: counted rather than stored past its
 * rate, and pruned to keep junk within its share; `null` when there was none of either.
 */
export function describeJunk(junk: JunkView): string | null {
  const n = (value: number) => value.toLocaleString("en-US");
  const parts = [];
  if (junk.flood.summarised > 0) {
    const rate = junk.flood.junkRate === null ? "its rate" : `${junk.flood.junkRate}/s`;
    parts.push(`${n(junk.flood.summarised)} junk requests past ${rate} counted and not stored (${n(junk.flood.sampled)} kept as a sample)`);
  }
  if (junk.sizes.junk.pruned > 0) parts.push(`${n(junk.sizes.junk.pruned)} junk captures pruned to keep junk within its share`);
  const real = junk.sizes.signed.pruned + junk.sizes.unverified.pruned;
  if (real > 0) parts.push(`${n(real)} older notifications pruned past the limits`);
  return parts.length === 0 ? null : `${parts.join("; ")}.`;
}

/** What a re-pointing did, in one sentence. */
export function describeRepoint(result: RepointResult): string {
  const n = result.changed.length;
  const changed = `Re-pointed ${n} subscription${n === 1 ? "" : "s"}.`;
  const failed = result.failures.length;
  return failed === 0 ? changed : `${changed} ${failed} product${failed === 1 ? "" : "s"} could not be changed:`;
}

/** The resource types the spec shows, short, offered first to a forward rule (which may name any other). */
export const FORWARD_RESOURCE_TYPES = ["transaction", "transaction:event"] as const;
/** The event types the spec shows, offered first to a forward rule (which may name any other). */
export const FORWARD_EVENT_TYPES = ["created", "updated"] as const;

/** Which of `known` a rule's name is (a resource type by its short or full name), or null for
 * any other name, and for none. */
export function knownForwardName(value: string | null, known: readonly string[]): string | null {
  if (value === null || value === "") return null;
  const short = value.startsWith("urn:svc:partner:") ? value.slice("urn:svc:partner:".length) : value;
  return known.includes(short) ? short : null;
}

/** `transaction created → http://…`, `any → http://…`. */
export function describeForwardRule(rule: ForwardRuleView): string {
  const what = [rule.resourceType, rule.eventType].filter((v) => v !== null && v !== "").join(" ");
  return `${what || "any"} → ${rule.url}`;
}

/** What keeps the rules from being saved, in the user's words (the shell checks them again). */
export function forwardRuleProblems(rules: ForwardRuleView[]): string[] {
  const problems: string[] = [];
  rules.forEach((rule, i) => {
    const url = rule.url.trim();
    if (url === "") {
      problems.push(`Rule ${i + 1} needs a URL.`);
      return;
    }
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      problems.push(`Rule ${i + 1}: ${url} is not a URL (http://host:port/path).`);
      return;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") problems.push(`Rule ${i + 1}: the URL must start with http:// or https://.`);
  });
  const catchAll = rules.findIndex((r) => !r.resourceType && !r.eventType);
  if (catchAll >= 0 && catchAll < rules.length - 1) {
    problems.push(`Rule ${catchAll + 1} matches every notification, so the rules after it never would: move it last.`);
  }
  return problems;
}
