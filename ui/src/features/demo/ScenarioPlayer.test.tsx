import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mockCommands, type Handler } from "../../test/render";
import { renderWithClient } from "../../test/render";
import { pageOf, product } from "../../test/fixtures";
import { changeDisplay } from "../../lib/presentation";
import type { ScenarioList, ScenarioPlayView } from "../../platform";
import { DemoScreen } from "./DemoScreen";

const TX = "3f2a9c1e-8b7d-4e2a-9c1f-0a1b2c3d4e5f";

const STEPS = [
  { caption: "The lender orders an appraisal", does: "creates a transaction", outcome: `Transaction ${TX} created` },
  { caption: "The appraiser uploads the report", does: "adds an event", outcome: "Event APPRAISAL_UPLOADED sent" },
  { caption: "The lender closes the order", does: "completes the transaction", outcome: "Transaction completed" },
];

function scenarioList(patch: Partial<ScenarioList> = {}): ScenarioList {
  return {
    scenarios: [
      { name: "appraisal", title: "An appraisal, start to end", summary: "A lender orders an appraisal and gets it.", steps: 3, source: "built-in" },
      { name: "my-own", title: "My own story", summary: "Something of mine.", steps: 1, source: "/home/me/scenarios/my-own.toml" },
    ],
    problems: [],
    folder: "/home/me/scenarios",
    ...patch,
  };
}

/** The play as the shell shows it after `next` steps. */
function playView(next: number, patch: Partial<ScenarioPlayView> = {}): ScenarioPlayView {
  return {
    name: "appraisal",
    title: "An appraisal, start to end",
    summary: "A lender orders an appraisal and gets it.",
    realTime: false,
    steps: STEPS.map((s, i) => ({ ...s, outcome: i < next ? s.outcome : null })),
    next,
    finished: next >= STEPS.length,
    transactionId: next > 0 ? TX : null,
    picture: null,
    sandboxNow: "2026-01-01T00:00:00Z",
    ...patch,
  };
}

/** The shell's scenario commands over one play, and what the Demo screen reads besides. */
function backend(options: { current?: ScenarioPlayView | null; next?: (played: number) => unknown; list?: ScenarioList } = {}) {
  let play: ScenarioPlayView | null = options.current ?? null;
  const handlers: Record<string, Handler> = {
    list_products: (args) => pageOf([product(1)], args, 1),
    demo_faults: () => [],
    notification_picture: () => null,
    list_scenarios: () => options.list ?? scenarioList(),
    scenario_current: () => play,
    scenario_start: () => {
      play = playView(0);
      return play;
    },
    scenario_next: async () => {
      if (!play) throw { kind: "invalidInput", message: "No scenario is being played.", hint: "Start one.", status: null, errorCode: null };
      if (play.finished) throw { kind: "invalidInput", message: "The scenario was played to its end.", hint: "Start it again.", status: null, errorCode: null };
      const played = play.next;
      if (options.next) await options.next(played);
      play = playView(played + 1);
      return play;
    },
    scenario_stop: () => {
      play = null;
      return null;
    },
  };
  const calls = mockCommands(handlers);
  return { calls, count: (cmd: string) => calls.filter((c) => c.cmd === cmd).length };
}

const steps = () => screen.getAllByTestId("scenario-step").map((li) => li.getAttribute("data-state"));
const pictureAsked = (calls: Array<{ cmd: string; args: Record<string, unknown> }>) =>
  calls.filter((c) => c.cmd === "notification_picture").map((c) => (c.args.of as { transactionId?: string }).transactionId);

async function started() {
  const select = await screen.findByTestId("scenario-select");
  await waitFor(() => expect(within(select).getAllByRole("option")).toHaveLength(2));
  fireEvent.click(screen.getByTestId("scenario-start"));
  await screen.findByTestId("scenario-steps");
}

/** A promise the test settles. */
function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

afterEach(() => {
  changeDisplay({ stage: false });
  vi.restoreAllMocks();
});

describe("Demo: scenarios", () => {
  it("draws the notification the play is about when the shell names one, and the lender's own button goes back to the newest", async () => {
    const about = { of: "notification" as const, subscriptionId: "sub-1", resourceType: "urn:svc:partner:transaction", eventId: "ev-1" };
    const calls = mockCommands({
      list_products: (args) => pageOf([product(1)], args, 1),
      demo_faults: () => [],
      notification_picture: () => null,
      list_scenarios: () => scenarioList(),
      scenario_current: () => null,
      scenario_start: () => playView(0),
      scenario_next: () => playView(1, { picture: about }),
      demo_update_transaction: () => ({ message: "updated", transactionId: TX, sandboxNow: "2026-01-01T00:00:00Z" }),
    });
    const asked = () => calls.filter((c) => c.cmd === "notification_picture").map((c) => c.args.of as { of: string; eventId?: string; transactionId?: string });
    renderWithClient(<DemoScreen embedded />);
    await started();
    fireEvent.click(screen.getByTestId("scenario-next"));
    await waitFor(() => expect(asked().at(-1)).toEqual(about));
    expect(asked().some((of) => of.of === "newestOfTransaction")).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Lender updates it" }));
    await waitFor(() => expect(asked().at(-1)).toEqual({ of: "newestOfTransaction", transactionId: TX }));
  });

  it("lists the scenarios, starts one, and each Next shows its outcome, the progress and the picture of its transaction", async () => {
    const { calls, count } = backend();
    renderWithClient(<DemoScreen embedded />);
    const select = await screen.findByTestId("scenario-select");
    await waitFor(() => expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual(["An appraisal, start to end", "My own story"]));
    expect(screen.getByTestId("scenario-summary")).toHaveTextContent("A lender orders an appraisal and gets it. (3 steps)");
    expect(screen.getByTestId("scenario-summary")).not.toHaveTextContent("built-in");
    // A user's file says where it came from.
    fireEvent.change(select, { target: { value: "my-own" } });
    expect(screen.getByTestId("scenario-summary")).toHaveTextContent("Something of mine. (1 step) · from /home/me/scenarios/my-own.toml");
    fireEvent.change(select, { target: { value: "appraisal" } });
    expect(screen.getByTestId("scenario-real-time")).not.toBeChecked();
    expect(screen.getByTestId("scenario-next")).toBeDisabled();
    // The scenario card comes first on the page.
    expect(document.querySelector(".page > .card")).toBe(screen.getByTestId("scenario-player"));

    fireEvent.click(screen.getByTestId("scenario-real-time"));
    fireEvent.click(screen.getByTestId("scenario-start"));
    await screen.findByTestId("scenario-steps");
    expect(calls.find((c) => c.cmd === "scenario_start")?.args).toEqual({ form: { name: "appraisal", realTime: true } });
    expect(screen.getByTestId("scenario-caption")).toHaveTextContent("A lender orders an appraisal and gets it.");
    expect(screen.getByTestId("scenario-caption")).toHaveAttribute("aria-live", "polite");
    expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 0 of 3");
    expect(steps()).toEqual(["todo", "todo", "todo"]);
    expect(screen.queryByTestId("scenario-outcome")).toBeNull();
    expect(pictureAsked(calls)).toEqual([]);

    fireEvent.click(screen.getByTestId("scenario-next"));
    expect(await screen.findByTestId("scenario-outcome")).toHaveTextContent(`Transaction ${TX} created`);
    expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 1 of 3");
    expect(screen.getByTestId("scenario-caption")).toHaveTextContent("The lender orders an appraisal");
    expect(steps()).toEqual(["current", "todo", "todo"]);
    // The Demo screen's live picture now draws the scenario's transaction.
    expect(screen.getByLabelText("Demo transaction")).toHaveValue(TX);
    await waitFor(() => expect(pictureAsked(calls)).toEqual([TX]));

    // N plays the next step from anywhere in the card but a field; the picture is read afresh.
    fireEvent.keyDown(screen.getByTestId("scenario-pace"), { key: "n" });
    fireEvent.keyDown(screen.getByTestId("scenario-select"), { key: "ArrowRight" });
    expect(count("scenario_next")).toBe(1);
    fireEvent.keyDown(screen.getByTestId("scenario-caption"), { key: "n" });
    await waitFor(() => expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 2 of 3"));
    expect(steps()).toEqual(["done", "current", "todo"]);
    expect(screen.getAllByTestId("scenario-outcome")).toHaveLength(2);
    await waitFor(() => expect(pictureAsked(calls)).toEqual([TX, TX]));

    fireEvent.keyDown(screen.getByTestId("scenario-next"), { key: "ArrowRight" });
    expect(await screen.findByTestId("scenario-finished")).toHaveTextContent("Played to its end.");
    expect(steps()).toEqual(["done", "done", "current"]);
    expect(screen.getByTestId("scenario-next")).toBeDisabled();
    expect(screen.getByTestId("scenario-play")).toBeDisabled();
    expect(count("scenario_next")).toBe(3);
  });

  it("Play runs the remaining steps the pace apart until the end", async () => {
    const { count } = backend();
    renderWithClient(<DemoScreen embedded />);
    expect(await screen.findByTestId("scenario-pace")).toHaveValue(3);
    fireEvent.change(screen.getByTestId("scenario-pace"), { target: { value: "0" } });
    await started();
    fireEvent.click(screen.getByTestId("scenario-play"));
    expect(await screen.findByTestId("scenario-finished")).toBeInTheDocument();
    expect(screen.getAllByTestId("scenario-outcome")).toHaveLength(3);
    expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 3 of 3");
    await waitFor(() => expect(screen.getByTestId("scenario-play")).toBeDisabled());
    expect(screen.queryByTestId("scenario-pause")).toBeNull();
    expect(count("scenario_next")).toBe(3);
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("Pause stops Play after the step under way", async () => {
    const gate = deferred();
    const { count } = backend({ next: (played) => (played === 0 ? gate.promise : undefined) });
    renderWithClient(<DemoScreen embedded />);
    fireEvent.change(await screen.findByTestId("scenario-pace"), { target: { value: "0" } });
    await started();
    fireEvent.click(screen.getByTestId("scenario-play"));
    fireEvent.click(await screen.findByTestId("scenario-pause"));
    expect(screen.getByTestId("scenario-play")).toBeDisabled(); // the step is still under way
    await act(async () => gate.resolve());
    await waitFor(() => expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 1 of 3"));
    await act(() => new Promise((r) => setTimeout(r, 50)));
    expect(count("scenario_next")).toBe(1);
    expect(screen.getByTestId("scenario-next")).toBeEnabled();
    expect(screen.getByTestId("scenario-play")).toBeEnabled();
  });

  it("cancels Play's wait when paused or when the screen closes: no timer is left", async () => {
    backend();
    const setSpy = vi.spyOn(globalThis, "setTimeout");
    const clearSpy = vi.spyOn(globalThis, "clearTimeout");
    const { unmount } = renderWithClient(<DemoScreen embedded />);
    fireEvent.change(await screen.findByTestId("scenario-pace"), { target: { value: "7" } });
    await started();
    const waits = () => setSpy.mock.results.filter((_, i) => setSpy.mock.calls[i]?.[1] === 7000).map((r) => r.value as unknown);

    fireEvent.click(screen.getByTestId("scenario-play"));
    await waitFor(() => expect(waits()).toHaveLength(1));
    expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 1 of 3");
    fireEvent.click(screen.getByTestId("scenario-pause"));
    expect(clearSpy).toHaveBeenCalledWith(waits()[0]);

    fireEvent.click(screen.getByTestId("scenario-play"));
    await waitFor(() => expect(waits()).toHaveLength(2));
    unmount();
    expect(clearSpy).toHaveBeenCalledWith(waits()[1]);
  });

  it("shows an error from Next and stops playing", async () => {
    const { count } = backend({
      next: (played) => {
        if (played === 1) throw { kind: "server", message: "The sandbox refused the event.", hint: "Look at Calls.", status: 500, errorCode: null };
      },
    });
    renderWithClient(<DemoScreen embedded />);
    fireEvent.change(await screen.findByTestId("scenario-pace"), { target: { value: "0" } });
    await started();
    fireEvent.click(screen.getByTestId("scenario-play"));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The sandbox refused the event.");
    expect(alert).toHaveTextContent("HTTP 500");
    await waitFor(() => expect(screen.getByTestId("scenario-play")).toBeEnabled());
    expect(screen.queryByTestId("scenario-pause")).toBeNull();
    await act(() => new Promise((r) => setTimeout(r, 50)));
    expect(count("scenario_next")).toBe(2);
    expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 1 of 3");
    expect(screen.queryByTestId("scenario-finished")).toBeNull();
  });

  it("lists the user's files that could not be read, and where they go", async () => {
    backend({ list: scenarioList({ problems: [{ file: "/home/me/scenarios/broken.toml", error: "line 3: a step needs a caption" }] }) });
    renderWithClient(<DemoScreen embedded />);
    const problems = await screen.findByTestId("scenario-problems");
    expect(within(problems).getAllByRole("listitem")).toHaveLength(1);
    expect(problems).toHaveTextContent("/home/me/scenarios/broken.toml: line 3: a step needs a caption");
    expect(screen.getByTestId("scenario-folder")).toHaveTextContent("Your own scenarios go in /home/me/scenarios — the format is in the README.");
  });

  it("says nothing of problems when every file was read", async () => {
    backend();
    renderWithClient(<DemoScreen embedded />);
    await screen.findByTestId("scenario-folder");
    expect(screen.queryByTestId("scenario-problems")).toBeNull();
  });

  it("resumes the play under way when the screen opens, with its picture, and stops it", async () => {
    const { calls } = backend({ current: playView(2) });
    renderWithClient(<DemoScreen embedded />);
    await waitFor(() => expect(screen.getByTestId("scenario-progress")).toHaveTextContent("Step 2 of 3"));
    expect(steps()).toEqual(["done", "current", "todo"]);
    expect(screen.getByTestId("scenario-caption")).toHaveTextContent("The appraiser uploads the report");
    expect(screen.getByTestId("scenario-select")).toHaveValue("appraisal");
    expect(screen.getByTestId("scenario-start")).toHaveTextContent("Start again");
    await waitFor(() => expect(pictureAsked(calls)).toContain(TX));
    expect(screen.getByLabelText("Demo transaction")).toHaveValue(TX);

    fireEvent.click(screen.getByTestId("scenario-next"));
    expect(await screen.findByTestId("scenario-finished")).toBeInTheDocument();

    fireEvent.click(screen.getByTestId("scenario-stop"));
    await waitFor(() => expect(screen.queryByTestId("scenario-steps")).toBeNull());
    expect(calls.filter((c) => c.cmd === "scenario_stop")).toHaveLength(1);
    expect(screen.getByTestId("scenario-start")).toHaveTextContent("Start");
    expect(screen.getByTestId("scenario-stop")).toBeDisabled();
  });

  it("shortens ids in outcomes in stage mode, keeping the full text in the title", async () => {
    backend({ current: playView(1) });
    changeDisplay({ stage: true });
    renderWithClient(<DemoScreen embedded />);
    const outcome = await screen.findByTestId("scenario-outcome");
    expect(outcome).toHaveTextContent("Transaction 3f2a9c1e… created");
    expect(outcome).toHaveAttribute("title", `Transaction ${TX} created`);
  });

  it("shows nothing of scenarios on a real connection", () => {
    mockCommands({});
    renderWithClient(<DemoScreen embedded={false} />);
    expect(screen.queryByTestId("scenario-player")).toBeNull();
  });
});
