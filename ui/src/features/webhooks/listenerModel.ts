import type { TestMode } from "../../platform";

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
