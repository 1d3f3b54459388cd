import type { ScenarioPlayView, ScenarioSummary } from "../../platform";

/** The query key of the play under way (the shell's `scenario_current`, kept up to date by each step). */
export const SCENARIO_PLAY_KEY = ["scenario-play"] as const;
export const SCENARIOS_KEY = ["scenarios"] as const;

/** The seconds Play waits between two steps: 0 to 60, 3 unless changed. */
export const PACE_DEFAULT = 3;
export const PACE_MAX = 60;

/** A pace typed into the field, kept within 0–60 s (anything not a number is 0). */
export function clampPace(value: string | number): number {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(n)) return 0;
  return Math.max(0, Math.min(PACE_MAX, n));
}

export type StepState = "done" | "current" | "todo";

/**
 * Each step as the list shows it: the step just played is `current` (its caption is the one the
 * presenter reads), those before it `done`, those not played yet `todo`.
 */
export function stepStates(view: ScenarioPlayView): StepState[] {
  const played = Math.min(view.next, view.steps.length);
  return view.steps.map((_, i) => (i < played - 1 ? "done" : i === played - 1 ? "current" : "todo"));
}

/** "Step 2 of 5": how far the play is (step 0 before the first is played). */
export function progressText(view: ScenarioPlayView): string {
  const total = view.steps.length;
  const played = Math.min(view.next, total);
  if (played === 0) return `Step 0 of ${total}: nothing played yet`;
  return `Step ${played} of ${total}`;
}

/** What the caption box shows: the caption of the step just played, or before the first, the summary. */
export function captionOf(view: ScenarioPlayView): string {
  const played = Math.min(view.next, view.steps.length);
  return played === 0 ? view.summary : (view.steps[played - 1]?.caption ?? view.summary);
}

/** Whether Next (or Play) can play a step now. */
export function canPlay(view: ScenarioPlayView | null | undefined, running: boolean): boolean {
  return !!view && !view.finished && !running;
}

/** The scenario the picker shows: the user's choice, else the one being played, else the first. */
export function chosenScenario(scenarios: ScenarioSummary[], choice: string, playing: string | null | undefined): ScenarioSummary | undefined {
  const name = choice || playing || "";
  return scenarios.find((s) => s.name === name) ?? (choice ? undefined : scenarios[0]);
}

/** "1 step" / "5 steps". */
export function stepCount(n: number): string {
  return n === 1 ? "1 step" : `${n} steps`;
}

/**
 * Whether a key press in this element is typing (the N / → shortcut leaves it alone): text and
 * number fields, selects, text areas and editable content.
 */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!target || typeof (target as Element).tagName !== "string") return false;
  const el = target as HTMLElement;
  const tag = el.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  if (tag === "input") {
    const type = ((el as HTMLInputElement).type || "text").toLowerCase();
    return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(type);
  }
  return el.isContentEditable === true;
}

/** The keys that play the next step while the focus is in the card. */
export function isNextKey(e: { key: string; altKey: boolean; ctrlKey: boolean; metaKey: boolean }): boolean {
  if (e.altKey || e.ctrlKey || e.metaKey) return false;
  return e.key === "n" || e.key === "N" || e.key === "ArrowRight";
}
