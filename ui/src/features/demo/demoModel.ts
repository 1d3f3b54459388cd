import type { DemoOutcome, FaultForm } from "../../platform";

export const CLOCK_STEPS = [
  { minutes: 1, label: "1 min" },
  { minutes: 15, label: "15 min" },
  { minutes: 60, label: "1 h" },
  { minutes: 120, label: "2 h" },
];

/** Newest first, at most 50 lines. */
export function appendOutcome(log: DemoOutcome[], outcome: DemoOutcome): DemoOutcome[] {
  return [outcome, ...log].slice(0, 50);
}

/** The faults the Demo screen offers, each as the sandbox's fault for `count` calls. */
export const FAULT_KINDS = [
  { key: "429", label: "429 rate limited (Retry-After 2 s)", form: { status: 429, retryAfterSeconds: 2, latencyMs: null, drop: false } },
  { key: "503", label: "503 unavailable", form: { status: 503, retryAfterSeconds: null, latencyMs: null, drop: false } },
  { key: "500", label: "500 server error", form: { status: 500, retryAfterSeconds: null, latencyMs: null, drop: false } },
  { key: "slow", label: "3 s slower", form: { status: null, retryAfterSeconds: null, latencyMs: 3000, drop: false } },
  { key: "drop", label: "connection dropped", form: { status: null, retryAfterSeconds: null, latencyMs: null, drop: true } },
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number]["key"];

export const FAULT_ENDPOINTS = [
  { key: "products", label: "Products" },
  { key: "transactions", label: "Transactions (and events, responses)" },
  { key: "token", label: "Token issuance" },
  { key: "any", label: "Every call" },
] as const;

/** The sandbox's fault of `kind` on `endpoint` for the next `count` calls. */
export function faultForm(endpoint: string, kind: FaultKind, count: number): FaultForm {
  const chosen = FAULT_KINDS.find((k) => k.key === kind) ?? FAULT_KINDS[0];
  return { endpoint, count, ...chosen.form };
}
