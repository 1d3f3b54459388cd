import type { TokenView } from "../../platform";

/**
 * Seconds left until an expiry, on the shell's clock: `view.now` is when the shell looked, so the
 * countdown is `expiry − view.now − (wall time passed since)`. The sandbox clock can run ahead of
 * the wall clock, and this keeps the countdown right.
 */
export function secondsLeft(view: TokenView, expiry: string | null, receivedAtMs: number, nowMs: number): number | null {
  if (!expiry) return null;
  const end = Date.parse(expiry);
  const base = Date.parse(view.now);
  if (Number.isNaN(end) || Number.isNaN(base)) return null;
  return (end - base - (nowMs - receivedAtMs)) / 1000;
}

/** Which expiry comes first: the one that will actually end the token. */
export function firstExpiry(idle: number | null, max: number | null): "idle" | "max" | null {
  if (idle === null && max === null) return null;
  if (idle === null) return "max";
  if (max === null) return "idle";
  return idle <= max ? "idle" : "max";
}
