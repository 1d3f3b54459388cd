import { describe, expect, it } from "vitest";
import type { ScenarioPlayView } from "../../platform";
import { canPlay, captionOf, chosenScenario, clampPace, isNextKey, isTypingTarget, progressText, stepCount, stepStates } from "./scenarioModel";

function view(next: number, total = 3): ScenarioPlayView {
  return {
    name: "s",
    title: "S",
    summary: "The summary.",
    realTime: false,
    steps: Array.from({ length: total }, (_, i) => ({ caption: `Caption ${i + 1}`, does: "does", outcome: i < next ? "done" : null })),
    next,
    finished: next >= total,
    transactionId: null,
    picture: null,
    sandboxNow: "2026-01-01T00:00:00Z",
  };
}

describe("scenario model", () => {
  it("marks the step just played as current, those before done, the rest to do", () => {
    expect(stepStates(view(0))).toEqual(["todo", "todo", "todo"]);
    expect(stepStates(view(1))).toEqual(["current", "todo", "todo"]);
    expect(stepStates(view(2))).toEqual(["done", "current", "todo"]);
    expect(stepStates(view(3))).toEqual(["done", "done", "current"]);
  });

  it("says how far the play is and which caption to read", () => {
    expect(progressText(view(0))).toBe("Step 0 of 3: nothing played yet");
    expect(progressText(view(2))).toBe("Step 2 of 3");
    expect(captionOf(view(0))).toBe("The summary.");
    expect(captionOf(view(2))).toBe("Caption 2");
    expect(captionOf(view(0, 0))).toBe("The summary.");
  });

  it("plays only a play under way, not finished, with no step running", () => {
    expect(canPlay(null, false)).toBe(false);
    expect(canPlay(view(1), false)).toBe(true);
    expect(canPlay(view(1), true)).toBe(false);
    expect(canPlay(view(3), false)).toBe(false);
  });

  it("keeps the pace within 0 to 60 seconds", () => {
    expect(clampPace("5")).toBe(5);
    expect(clampPace("-2")).toBe(0);
    expect(clampPace("600")).toBe(60);
    expect(clampPace("")).toBe(0);
    expect(clampPace("abc")).toBe(0);
    expect(clampPace(1.5)).toBe(1.5);
  });

  it("picks the chosen scenario, else the one played, else the first", () => {
    const list = [
      { name: "a", title: "A", summary: "", steps: 1, source: "built-in" },
      { name: "b", title: "B", summary: "", steps: 2, source: "built-in" },
    ];
    expect(chosenScenario(list, "", null)?.name).toBe("a");
    expect(chosenScenario(list, "", "b")?.name).toBe("b");
    expect(chosenScenario(list, "a", "b")?.name).toBe("a");
    expect(chosenScenario([], "", null)).toBeUndefined();
    expect(stepCount(1)).toBe("1 step");
    expect(stepCount(4)).toBe("4 steps");
  });

  it("leaves keys typed into fields alone", () => {
    const make = (tag: string, type?: string) => {
      const el = document.createElement(tag);
      if (type) el.setAttribute("type", type);
      return el;
    };
    expect(isTypingTarget(make("input", "number"))).toBe(true);
    expect(isTypingTarget(make("input"))).toBe(true);
    expect(isTypingTarget(make("select"))).toBe(true);
    expect(isTypingTarget(make("textarea"))).toBe(true);
    expect(isTypingTarget(make("input", "checkbox"))).toBe(false);
    expect(isTypingTarget(make("button"))).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
    expect(isNextKey({ key: "n", altKey: false, ctrlKey: false, metaKey: false })).toBe(true);
    expect(isNextKey({ key: "ArrowRight", altKey: false, ctrlKey: false, metaKey: false })).toBe(true);
    expect(isNextKey({ key: "n", altKey: false, ctrlKey: true, metaKey: false })).toBe(false);
    expect(isNextKey({ key: "ArrowLeft", altKey: false, ctrlKey: false, metaKey: false })).toBe(false);
  });
});
