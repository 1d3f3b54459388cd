import type { DemoOutcome } from "../../platform";

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
