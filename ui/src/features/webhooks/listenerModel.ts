import type { TestMode, TunnelCheck, TunnelFailureKind } from "../../platform";

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
