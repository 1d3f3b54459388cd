import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import type { CaptureDetail, CaptureSummary, ForwardRuleView, RepointOffer, TunnelSaved } from "../../platform";
import { captureStore, joinedAs, listenerView } from "../../test/fixtures";
import { mockCommands, renderWithClient } from "../../test/render";
import { Inspector } from "./Inspector";
import { CaptureDetailPane } from "./CaptureDetailPane";
import { ForwardRules } from "./ForwardRules";
import { ListenerChecks } from "./ListenerChecks";
import { MissedNotifications } from "./MissedNotifications";
import { DesktopNotices } from "./DesktopNotices";
import { SandboxDeliveries } from "./SandboxDeliveries";
import { TestModeSettings } from "./TestModeSettings";
import { ListenerSettings } from "./ListenerSettings";
import { ListenerControls, WebhooksScreen } from "./WebhooksScreen";
import { SendAgain } from "./SendAgain";

function capture(id: number, verdict: CaptureSummary["verdict"] = "valid"): CaptureSummary {
  return { id, receivedAt: new Date(1_700_000_000_000 + id * 1000).toISOString(), verdict, eventType: "created", resourceType: "urn:svc:partner:transaction", resourceId: `tx-${id}`, instanceId: "demo", eventId: `e-${id}`, subscriptionId: "s", attempts: 1, replayed: false, groupAttempts: 1 };
}

const taken = { kind: "listener" as const, message: "127.0.0.1:7070 is already in use by another program; 127.0.0.1:7071 is free.", hint: "Use 127.0.0.1:7071, or stop what holds 7070.", status: null, errorCode: null };

describe("listener settings", () => {
  it("saves the address and path the user typed, and says where it listens now", async () => {
    const calls = mockCommands({
      set_listener_address: (a) => {
        const form = a.form as { address: string; path: string };
        return listenerView({ port: 9000, configuredAddress: form.address, path: form.path });
      },
      app_status: () => ({}),
    });
    renderWithClient(<ListenerSettings view={listenerView()} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    expect(screen.getByTestId("listener-store-path")).toHaveTextContent("captures.sqlite");
    expect(screen.getByText(/shared with/)).toHaveTextContent("partner listen");
    expect(screen.getByTestId("listener-data-key")).toHaveTextContent("the OS's secret store");
    fireEvent.change(screen.getByTestId("listener-address-input"), { target: { value: "127.0.0.1:9000" } });
    fireEvent.change(screen.getByTestId("listener-path-input"), { target: { value: "/hooks" } });
    fireEvent.click(screen.getByTestId("listener-save"));
    expect(await screen.findByText("Saved: listening on 127.0.0.1:9000/hooks.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "set_listener_address")?.args).toEqual({ form: { address: "127.0.0.1:9000", path: "/hooks" } });
  });

  it("sends nothing while the address is not IP:PORT, and says why", async () => {
    const calls = mockCommands({});
    renderWithClient(<ListenerSettings view={listenerView()} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    fireEvent.change(screen.getByTestId("listener-address-input"), { target: { value: "7070" } });
    fireEvent.click(screen.getByTestId("listener-save"));
    expect(await screen.findByText("Give the address as IP:PORT, for example 127.0.0.1:7070.")).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });

  it("shows the shell's refusal of a taken port with the free one it offers", async () => {
    mockCommands({
      set_listener_address: () => {
        throw taken;
      },
    });
    renderWithClient(<ListenerSettings view={listenerView()} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    fireEvent.click(screen.getByTestId("listener-save"));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("127.0.0.1:7070 is already in use by another program; 127.0.0.1:7071 is free.");
    expect(alert).toHaveTextContent("Use 127.0.0.1:7071");
  });

  it("opens by itself when the listener is down, and says when the environment chose the address", () => {
    mockCommands({});
    renderWithClient(<ListenerSettings view={listenerView({ running: false, problem: taken, addressFromEnvironment: true, address: "127.0.0.1", port: 7300 })} />);
    expect(screen.getByTestId("listener-settings").closest("details")).toHaveAttribute("open");
    expect(screen.getByTestId("listener-address-from-env")).toHaveTextContent("This run's address is set by PARTNER_LISTENER_ADDR");
    expect(screen.getByRole("alert")).toHaveTextContent("already in use");
  });

  it("names the address the environment chose while the listener runs there", () => {
    mockCommands({});
    renderWithClient(<ListenerSettings view={listenerView({ addressFromEnvironment: true, port: 7300 })} />);
    expect(screen.getByTestId("listener-settings").closest("details")).not.toHaveAttribute("open");
    expect(screen.getByTestId("listener-address-from-env")).toHaveTextContent("This run listens on 127.0.0.1:7300, set by PARTNER_LISTENER_ADDR; the address above is the one in the settings");
    expect(screen.getByTestId("listener-address-input")).toHaveValue("127.0.0.1:7070");
  });

  it("saves retention limits, an empty field as no limit", async () => {
    const calls = mockCommands({
      set_retention: (a) => listenerView({ retention: a.form as { maxCaptures: number | null; maxBytes: number | null; maxAgeDays: number | null; junkRate: number | null } }),
      app_status: () => ({}),
    });
    renderWithClient(<ListenerSettings view={listenerView({ retention: { maxCaptures: 10000, maxBytes: null, maxAgeDays: 7, junkRate: 20 } })} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    expect(screen.getByTestId("retention-max-captures")).toHaveValue("10000");
    fireEvent.change(screen.getByTestId("retention-max-captures"), { target: { value: "500" } });
    fireEvent.change(screen.getByTestId("retention-max-age"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("retention-save"));
    expect(await screen.findByText("Saved: keeps at most 500 captures; junk past 20/s counted, not stored.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "set_retention")?.args).toEqual({ form: { maxCaptures: 500, maxBytes: null, maxAgeDays: null, junkRate: 20 } });
  });

  it("saves a byte budget written as a size and says what junk was counted or pruned", async () => {
    const calls = mockCommands({
      set_retention: (a) => listenerView({ retention: a.form as { maxCaptures: number | null; maxBytes: number | null; maxAgeDays: number | null; junkRate: number | null } }),
      app_status: () => ({}),
    });
    const classSizes = (pruned: number) => ({ captures: 10, bytes: 20_000, pruned });
    const junk = { flood: { summarised: 2950, sampled: 30, junkRate: 20 }, sizes: { junk: classSizes(1234), unverified: classSizes(0), signed: classSizes(0) } };
    renderWithClient(<ListenerSettings view={listenerView({ retention: { maxCaptures: 200000, maxBytes: 2 * 2 ** 30, maxAgeDays: null, junkRate: 20 }, junk })} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    expect(screen.getByTestId("retention-max-bytes")).toHaveValue("2 GiB");
    expect(screen.getByTestId("retention-junk")).toHaveTextContent(
      "2,950 junk requests past 20/s counted and not stored (30 kept as a sample); 1,234 junk captures pruned to keep junk within its share.",
    );
    fireEvent.change(screen.getByTestId("retention-max-bytes"), { target: { value: "500MB" } });
    expect(screen.getByTestId("retention-junk-rate")).toHaveValue("20");
    fireEvent.change(screen.getByTestId("retention-junk-rate"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("retention-save"));
    expect(await screen.findByText("Saved: keeps at most 200000 captures, 476.8 MiB of them.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "set_retention")?.args).toEqual({ form: { maxCaptures: 200000, maxBytes: 500_000_000, maxAgeDays: null, junkRate: null } });
  });

  it("does not offer to save a retention that is not a number", () => {
    mockCommands({});
    renderWithClient(<ListenerSettings view={listenerView()} />);
    fireEvent.click(screen.getByTestId("listener-settings"));
    fireEvent.change(screen.getByTestId("retention-max-age"), { target: { value: "a week" } });
    expect(screen.getByText("Max age is a whole number, or empty for no limit.")).toBeInTheDocument();
    expect(screen.getByTestId("retention-save")).toBeDisabled();
  });
});

const offer: RepointOffer = {
  from: "https://old.example.app",
  to: "https://new.example.app",
  subscriptions: [
    { productId: "p-1", subscriptionId: "sub-1", url: "https://old.example.app/webhooks", newUrl: "https://new.example.app/webhooks" },
    { productId: "p-2", subscriptionId: "sub-2", url: "https://old.example.app/webhooks", newUrl: "https://new.example.app/webhooks" },
  ],
};

describe("tunnel URL and re-pointing", () => {
  const saved = (repoint: RepointOffer | null): TunnelSaved => ({ listener: listenerView({ tunnelUrl: "https://new.example.app/webhooks", callbackUrl: "https://new.example.app/webhooks" }), repoint });

  it("says beside the listener's address how much junk it counted and pruned", () => {
    mockCommands({});
    const classSizes = (pruned: number) => ({ captures: 0, bytes: 0, pruned });
    const junk = { flood: { summarised: 2950, sampled: 30, junkRate: 20 }, sizes: { junk: classSizes(1234), unverified: classSizes(0), signed: classSizes(0) } };
    renderWithClient(<ListenerControls view={listenerView({ junk })} />);
    expect(screen.getByTestId("listener-junk")).toHaveTextContent("junk: 2,950 counted, not stored, 1,234 pruned");
  });

  it("offers to re-point the subscriptions on the replaced URL, and moves them on yes", async () => {
    const calls = mockCommands({
      set_tunnel_url: () => saved(offer),
      repoint_subscriptions: () => ({ changed: offer.subscriptions, failures: [] }),
    });
    renderWithClient(<ListenerControls view={listenerView({ tunnelUrl: "https://old.example.app/webhooks" })} />);
    fireEvent.change(screen.getByLabelText("Tunnel URL"), { target: { value: "https://new.example.app/webhooks" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    const panel = await screen.findByTestId("repoint-offer");
    expect(panel).toHaveTextContent("Re-point 2 subscriptions?");
    expect(panel).toHaveTextContent("https://old.example.app → https://new.example.app");
    expect(within(panel).getAllByRole("row")).toHaveLength(3);
    expect(calls.find((c) => c.cmd === "set_tunnel_url")?.args).toEqual({ url: "https://new.example.app/webhooks" });
    fireEvent.click(within(panel).getByRole("button", { name: "Re-point them" }));
    expect(await screen.findByTestId("repoint-result")).toHaveTextContent("Re-pointed 2 subscriptions.");
    expect(calls.find((c) => c.cmd === "repoint_subscriptions")?.args).toEqual({ from: "https://old.example.app", to: "https://new.example.app" });
  });

  it("lists the products that could not be changed", async () => {
    mockCommands({
      set_tunnel_url: () => saved(offer),
      repoint_subscriptions: () => ({ changed: [offer.subscriptions[0]], failures: ["Product p-2: the server refused the change (HTTP 409)."] }),
    });
    renderWithClient(<ListenerControls view={listenerView()} />);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    fireEvent.click(within(await screen.findByTestId("repoint-offer")).getByRole("button", { name: "Re-point them" }));
    const result = await screen.findByTestId("repoint-result");
    expect(result).toHaveTextContent("Re-pointed 1 subscription. 1 product could not be changed:");
    expect(result).toHaveTextContent("Product p-2: the server refused the change (HTTP 409).");
  });

  it("leaves the subscriptions alone on no, and offers nothing when none used the old URL", async () => {
    const calls = mockCommands({ set_tunnel_url: () => saved(offer) });
    renderWithClient(<ListenerControls view={listenerView()} />);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    fireEvent.click(within(await screen.findByTestId("repoint-offer")).getByRole("button", { name: "Leave them" }));
    expect(screen.queryByTestId("repoint-offer")).toBeNull();
    expect(calls.some((c) => c.cmd === "repoint_subscriptions")).toBe(false);

    mockCommands({ set_tunnel_url: () => saved(null) }, calls);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "set_tunnel_url")).toHaveLength(2));
    expect(screen.queryByTestId("repoint-offer")).toBeNull();
  });

  it("starts the listener with no port (the settings hold the address)", async () => {
    const calls = mockCommands({ listener_start: () => listenerView() });
    renderWithClient(<ListenerControls view={listenerView({ running: false, address: null, port: null })} />);
    fireEvent.click(screen.getByRole("switch", { name: "Listener on" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "listener_start")).toBe(true));
    expect(calls.find((c) => c.cmd === "listener_start")?.args).toEqual({});
  });
});

describe("the inspector over the store", () => {
  it("asks the store for one block at a time, with the filter, and counts what the store counts", async () => {
    const store = captureStore([capture(3, "invalid-signature"), capture(2), capture(1)]);
    const calls = mockCommands(store.handlers);
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("3 of 3"));
    expect(within(screen.getByLabelText("Counts by verdict")).getByText("invalid-signature").parentElement).toHaveTextContent("1");
    // Never the whole store: one block of rows, from the top.
    expect(calls.find((c) => c.cmd === "inspector_page")?.args).toEqual({
      query: { filter: { ids: [], maxId: null, verdicts: [], eventType: null, resourceType: null, subscriptionId: null, since: null, until: null, text: null }, grouped: false, offset: 0, limit: 100, countPastPage: true },
    });
    fireEvent.change(screen.getByLabelText("Search captures"), { target: { value: "e-2" } });
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("1 of 3"));
    expect(calls.filter((c) => c.cmd === "inspector_page").at(-1)?.args).toMatchObject({ query: { filter: { text: "e-2" }, offset: 0, countPastPage: false } });
  });

  it("groups the attempts of a notification into one row", async () => {
    const again = (id: number): CaptureSummary => ({ ...capture(id), eventId: "e-1", attempts: id });
    const store = captureStore([again(1), again(2), again(3), capture(4)]);
    const calls = mockCommands(store.handlers);
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("4 of 4"));
    fireEvent.click(screen.getByLabelText("Group attempts"));
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 notifications of 4"));
    expect(calls.filter((c) => c.cmd === "inspector_page").at(-1)?.args).toMatchObject({ query: { grouped: true, countPastPage: true } });
  });

  it("refreshes from the store when live captures arrive, and says when the live feed fell behind", async () => {
    const store = captureStore([capture(1)]);
    const calls = mockCommands(store.handlers);
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("1 of 1"));
    store.add(capture(2));
    store.add(capture(3));
    store.add(capture(4));
    await emit("captures", { captures: [capture(4)], missed: 2 });
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("4 of 4"));
    expect(screen.getByTestId("live-gap")).toHaveTextContent("2 captures arrived faster than the page could show them live");
    expect(calls.filter((c) => c.cmd === "inspector_page").length).toBeGreaterThanOrEqual(2);
  });
});

describe("clearing captures", () => {
  it("deletes what the filter shows after a confirmation naming the count, up to the newest shown", async () => {
    const store = captureStore([capture(4, "invalid-signature"), capture(3), capture(2, "invalid-signature"), capture(1)]);
    const calls = mockCommands(store.handlers);
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("4 of 4"));
    // Every capture shown: "Clear shown" would be "Clear all".
    expect(screen.getByTestId("clear-shown")).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Verdict filter"), { target: { value: "invalid-signature" } });
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 4"));
    fireEvent.click(screen.getByTestId("clear-shown"));
    const confirm = await screen.findByTestId("clear-confirm");
    expect(calls.some((c) => c.cmd === "clear_captures")).toBe(false);
    expect(confirm).toHaveTextContent("Delete the 2 captures the filter shows?");
    // One arrives while the user reads the confirmation: it is kept.
    store.add(capture(5, "invalid-signature"));
    fireEvent.click(within(confirm).getByRole("button", { name: "Delete 2 captures" }));
    expect(await screen.findByTestId("clear-result")).toHaveTextContent("Deleted 2 captures.");
    expect(calls.find((c) => c.cmd === "clear_captures")?.args).toMatchObject({ form: { filter: { verdicts: ["invalid-signature"] }, upToId: 4 } });
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("1 of 3"));
    expect(store.rows().map((c) => c.id)).toEqual([5, 3, 1]);
  });

  it("clears every capture with no filter, and cancelling sends nothing", async () => {
    const store = captureStore([capture(2), capture(1)]);
    const calls = mockCommands(store.handlers);
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2"));
    fireEvent.click(screen.getByTestId("clear-all"));
    fireEvent.click(await screen.findByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("clear-confirm")).toBeNull();
    fireEvent.click(screen.getByTestId("clear-all"));
    expect(await screen.findByTestId("clear-confirm")).toHaveTextContent("Delete every capture (2 captures) from the capture store?");
    fireEvent.click(screen.getByRole("button", { name: "Delete 2 captures" }));
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("0 of 0"));
    expect(calls.filter((c) => c.cmd === "clear_captures").map((c) => c.args)).toEqual([{ form: { filter: null, upToId: 2 } }]);
    expect(screen.getByTestId("clear-all")).toBeDisabled();
  });

  it("says what failed when the store refuses, and keeps the rows", async () => {
    const store = captureStore([capture(2), capture(1)]);
    mockCommands({
      ...store.handlers,
      clear_captures: () => {
        throw { kind: "io", message: "The capture store is read-only.", hint: "Check the file's permissions.", status: null, errorCode: null };
      },
    });
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2"));
    fireEvent.click(screen.getByTestId("clear-all"));
    fireEvent.click(await screen.findByRole("button", { name: "Delete 2 captures" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The capture store is read-only.");
    expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2");
  });
});

describe("exporting and importing captures", () => {
  it("exports what the filter shows through the save dialog, with progress, and imports back", async () => {
    const store = captureStore([capture(2), capture(1)]);
    const calls = mockCommands({
      ...store.handlers,
      export_captures: async (a) => {
        const form = a.form as { jobId: string };
        await emit("job-progress", { jobId: form.jobId, done: 1, total: 2 });
        return { path: "/home/me/captures.har", count: 2, skipped: 0, cancelled: false };
      },
      import_captures: () => ({ path: "/home/me/captures.jsonl", count: 3, skipped: 1, cancelled: false }),
    });
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2"));
    fireEvent.change(screen.getByLabelText("Capture export"), { target: { value: "har shown" } });
    fireEvent.click(screen.getByRole("button", { name: "Export…" }));
    expect(await screen.findByText("2 captures exported · /home/me/captures.har")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "export_captures")?.args).toMatchObject({ form: { format: "har", ids: null, filter: { verdicts: [] } } });
    fireEvent.click(screen.getByRole("button", { name: "Import…" }));
    expect(await screen.findByText("3 captures imported (1 already there) · /home/me/captures.jsonl")).toBeInTheDocument();
  });

  it("says a cancelled export wrote nothing", async () => {
    const store = captureStore([capture(1)]);
    // The export ends only once it is cancelled, as a real one asked to stop does: however slow
    // the machine, "Cancel" is pressed while it runs.
    let stop: (value: unknown) => void = () => {};
    const calls = mockCommands({
      ...store.handlers,
      export_captures: () => new Promise((resolve) => (stop = resolve)),
      cancel_job: () => {
        stop({ path: "/x.jsonl", count: 0, skipped: 0, cancelled: true });
        return null;
      },
    });
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("1 of 1"));
    fireEvent.click(screen.getByRole("button", { name: "Export…" }));
    fireEvent.click(await screen.findByRole("button", { name: "Cancel" }));
    expect(await screen.findByText("Stopped: nothing was written.")).toBeInTheDocument();
    const job = (calls.find((c) => c.cmd === "export_captures")?.args.form as { jobId: string }).jobId;
    expect(calls.find((c) => c.cmd === "cancel_job")?.args).toEqual({ jobId: job });
  });
});

describe("sending captures again", () => {
  it("sends what the filter shows, paced, with progress, and lists what was not taken", async () => {
    const sent = (id: number, failure: string | null) => ({ captureId: id, eventId: `ev-${id}`, resourceType: "urn:svc:partner:transaction", subscriptionId: "sub-1", status: failure ? 503 : 200, elapsedMs: 4, resigned: true, error: null, failure });
    let finish: (value: unknown) => void = () => {};
    const calls = mockCommands({
      send_captures_again: () => new Promise((resolve) => (finish = resolve)),
      cancel_job: () => null,
    });
    let refreshed = 0;
    const filter = { ids: [], maxId: null, verdicts: ["valid" as const], eventType: null, resourceType: null, subscriptionId: null, since: null, until: null, text: null };
    renderWithClient(<SendAgain filter={filter} filtered shown={3} capped={false} selectedId={null} onSent={() => (refreshed += 1)} />);
    fireEvent.click(screen.getByTestId("send-again-open"));
    const panel = screen.getByTestId("send-again");
    expect(within(panel).getByLabelText("Which captures")).toHaveTextContent("the 3 shown");
    fireEvent.change(within(panel).getByLabelText("At a time"), { target: { value: "0" } });
    expect(within(panel).getByTestId("send-again-start")).toBeDisabled();
    expect(panel).toHaveTextContent("Send 1 to 32 at a time.");
    fireEvent.change(within(panel).getByLabelText("At a time"), { target: { value: "2" } });
    fireEvent.change(within(panel).getByLabelText("Per second"), { target: { value: "5" } });
    fireEvent.change(within(panel).getByLabelText("Send again to"), { target: { value: "http://localhost:3000/hooks" } });
    fireEvent.click(within(panel).getByRole("checkbox"));
    fireEvent.click(within(panel).getByTestId("send-again-start"));
    await waitFor(() => expect(calls.some((c) => c.cmd === "send_captures_again")).toBe(true));
    const form = (calls.find((c) => c.cmd === "send_captures_again")?.args as { form: Record<string, unknown> }).form;
    expect(form).toMatchObject({ filter, ids: null, target: "http://localhost:3000/hooks", concurrency: 2, perSecond: 5, resign: true });
    await emit("job-progress", { jobId: form.jobId, done: 1, total: 3, note: null });
    expect(await screen.findByTestId("send-again-progress")).toHaveTextContent("1 of 3 sent");
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    await waitFor(() => expect(calls.find((c) => c.cmd === "cancel_job")?.args).toEqual({ jobId: form.jobId }));
    finish({ sent: [sent(1, null), sent(2, "answered 503, expected 2xx, 3xx")], cancelled: true });
    const result = await screen.findByTestId("send-again-result");
    expect(result).toHaveTextContent("Stopped: 1 of 2 taken (2xx or 3xx), 1 not");
    expect(within(result).getByRole("list", { name: "Not taken" })).toHaveTextContent("#2 answered 503, expected 2xx, 3xx");
    expect(refreshed).toBe(1);
  });
});

describe("Webhooks screen", () => {
  it("shows the listener controls, the settings and the inspector together", async () => {
    mockCommands({ listener_status: () => listenerView(), ...captureStore([capture(1)]).handlers });
    renderWithClient(<WebhooksScreen />);
    expect(await screen.findByTestId("listener-settings")).toHaveTextContent("127.0.0.1:7070/webhooks");
    expect(screen.getByTestId("listener-address")).toHaveTextContent("127.0.0.1:7070");
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("1 of 1"));
  });
});

describe("checking the listener as a receiver", () => {
  it("lists the subscriptions reaching the listener, the tunnel's first, and checks the one picked", async () => {
    const transaction = "urn:svc:partner:transaction" as const;
    const calls = mockCommands({
      listener_subscriptions: () => [
        { productId: "p-1", productName: "acme-flood", via: "tunnel", subscription: { subscriptionId: "sub-t", url: "https://tunnel.example.dev/webhooks", events: ["created"], resource: transaction } },
        { productId: "p-2", productName: "acme-title", via: "direct", subscription: { subscriptionId: "sub-d", url: "http://127.0.0.1:7070/webhooks", events: ["created"], resource: transaction } },
      ],
      check_receiver: (a) => ({
        url: "http://127.0.0.1:7070/webhooks",
        subscriptionId: (a.form as { subscriptionId: string }).subscriptionId,
        resource: transaction,
        timeoutMs: 30000,
        requestsSent: 6,
        rules: [{ id: "acknowledged-in-time", title: "A correctly signed notification is acknowledged (200-399) within the timeout", outcome: "pass", summary: "acknowledged with 200 in 4 ms" }],
      }),
    });
    renderWithClient(<ListenerChecks />);
    // Nothing is walked until the section is opened.
    expect(calls.some((c) => c.cmd === "listener_subscriptions")).toBe(false);
    fireEvent.click(screen.getByTestId("listener-checks"));
    const table = await screen.findByRole("table", { name: "Subscriptions reaching the listener" });
    const rows = within(table).getAllByRole("row");
    expect(rows[0]).toHaveTextContent("tunnel");
    expect(rows[1]).toHaveTextContent("direct");
    fireEvent.click(screen.getByTestId("listener-check-sub-d"));
    const panel = screen.getByTestId("receiver-check-sub-d");
    expect(within(panel).getByRole("checkbox")).toBeChecked();
    fireEvent.click(within(panel).getByTestId("receiver-check-run"));
    expect(await within(panel).findByTestId("receiver-report")).toHaveTextContent("Every rule passed");
    expect(calls.find((c) => c.cmd === "check_receiver")?.args).toEqual({ form: { productId: "p-2", subscriptionId: "sub-d", allowHttp: true } });
  });

  it("says when no subscription reaches the listener", async () => {
    mockCommands({ listener_subscriptions: () => [] });
    renderWithClient(<ListenerChecks />);
    fireEvent.click(screen.getByTestId("listener-checks"));
    expect(await screen.findByText(/No subscription of this connection reaches the listener/)).toBeInTheDocument();
  });
});

describe("test mode", () => {
  it("applies everything partner listen has: status, delay, failure rate, fail first N, failure status", async () => {
    const calls = mockCommands({
      set_test_mode: (a) => listenerView({ testMode: a.mode as ReturnType<typeof listenerView>["testMode"] }),
    });
    renderWithClient(<TestModeSettings view={listenerView()} />);
    expect(screen.getByTestId("test-mode-summary")).toHaveTextContent("off");
    fireEvent.click(screen.getByTestId("test-mode"));
    fireEvent.click(screen.getByRole("checkbox"));
    fireEvent.change(screen.getByLabelText("Failure rate"), { target: { value: "50" } });
    fireEvent.change(screen.getByLabelText("Fail first"), { target: { value: "2" } });
    fireEvent.change(screen.getByLabelText("Failure status"), { target: { value: "503" } });
    fireEvent.change(screen.getByLabelText("Delay"), { target: { value: "x" } });
    expect(screen.getByText("Delay is a whole number of milliseconds.")).toBeInTheDocument();
    expect(screen.getByTestId("test-mode-apply")).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Delay"), { target: { value: "100" } });
    fireEvent.click(screen.getByTestId("test-mode-apply"));
    expect(await screen.findByRole("status")).toHaveTextContent("Applied: answers 200 after 100 ms · 50 % fail with 503 · first 2 attempts fail with 503.");
    expect(calls.find((c) => c.cmd === "set_test_mode")?.args).toEqual({
      mode: { enabled: true, status: 200, delayMs: 100, failRate: 0.5, failFirstAttempts: 2, failureStatus: 503 },
    });
  });
});

describe("missed notifications", () => {
  it("looks for them on request and shows each as a missed row, with what each subscription expected", async () => {
    const transaction = "urn:svc:partner:transaction" as const;
    const calls = mockCommands({
      find_missed: () => ({
        missed: [
          { subscriptionId: "sub-1", productId: "p-1", productName: "acme-flood", resourceType: transaction, eventType: "created", eventId: "ev-1", resourceId: "tx-1", resourceRef: "http://127.0.0.1:7001/partner/v2/transactions/tx-1", transactionId: "tx-1", sentAt: "2026-11-23T10:00:00Z" },
        ],
        subscriptions: [
          { subscriptionId: "sub-1", productId: "p-1", resource: transaction, events: ["created"], since: "2026-11-23T09:00:00Z", sinceSource: "listenerDown", expected: 3, missed: 1, notYetDue: 0 },
          { subscriptionId: "sub-2", productId: "p-2", resource: transaction, events: ["created"], since: null, notCheckedBecause: "neverCaptured", sinceSource: null, expected: 0, missed: 0, notYetDue: 0 },
        ],
        until: "2026-11-23T10:05:00Z",
        transactionsRead: 4,
        transactionsChecked: 2,
        cancelled: false,
      }),
    });
    renderWithClient(<MissedNotifications />);
    fireEvent.click(screen.getByTestId("missed"));
    fireEvent.click(screen.getByLabelText(/Include the last two minutes/));
    fireEvent.click(screen.getByTestId("missed-find"));
    const report = await screen.findByTestId("missed-report");
    expect(report).toHaveTextContent("1 notification never arrived");
    expect(screen.getByTestId("missed-count")).toHaveTextContent("1 missed");
    const rows = within(screen.getByRole("table", { name: "Missed notifications" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("missed");
    expect(rows[1]).toHaveAttribute("data-transaction-id", "tx-1");
    expect(within(screen.getByRole("table", { name: "Subscriptions checked" })).getByText(/never received anything of it/)).toBeInTheDocument();
    expect(screen.getByText("(when the listener went down)")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "find_missed")?.args).toEqual({ form: { subscriptionId: null, since: null, includeRecent: true, allSubscriptions: false } });
    fireEvent.click(within(rows[1] as HTMLElement).getByRole("button", { name: "Open" }));
    expect(window.location.hash).toBe("#/transactions/tx-1");
  });

  it("sends the chosen ones again, or all of them to a URL, with the receiver's answer on each row", async () => {
    const transaction = "urn:svc:partner:transaction" as const;
    const missedRow = (n: number) => ({ subscriptionId: "sub-1", productId: "p-1", productName: "acme-flood", resourceType: transaction, eventType: "updated" as const, eventId: `ev-${n}`, resourceId: `tx-${n}`, resourceRef: `http://127.0.0.1:7001/partner/v2/transactions/tx-${n}`, transactionId: `tx-${n}`, sentAt: "2026-11-23T10:00:00Z" });
    const outcome = (n: number, url: string, status: number | null, error: string | null) => ({ subscriptionId: "sub-1", resourceType: transaction, eventId: `ev-${n}`, url, status, acknowledged: status === 200, error, elapsedMs: 3 });
    const calls = mockCommands({
      find_missed: () => ({
        missed: [missedRow(1), missedRow(2)],
        subscriptions: [{ subscriptionId: "sub-1", productId: "p-1", resource: transaction, events: ["updated"], since: "2026-11-23T09:00:00Z", sinceSource: "listenerDown", expected: 2, missed: 2, notYetDue: 0 }],
        until: "2026-11-23T10:05:00Z",
        transactionsRead: 2,
        transactionsChecked: 2,
        cancelled: false,
      }),
      recover_missed: (args) => {
        const form = (args as { form: { notifications: { eventId: string }[]; target: string | null } }).form;
        const url = form.target ?? "http://127.0.0.1:7070/webhooks";
        return { outcomes: form.notifications.map((m) => (form.target ? outcome(Number(m.eventId.slice(3)), url, null, "connection refused") : outcome(Number(m.eventId.slice(3)), url, 200, null))), cancelled: false };
      },
    });
    renderWithClient(<MissedNotifications />);
    fireEvent.click(screen.getByTestId("missed"));
    fireEvent.click(screen.getByTestId("missed-find"));
    await screen.findByTestId("missed-report");
    expect(screen.getByTestId("missed-recover")).toHaveTextContent("Send all 2 again");
    fireEvent.click(screen.getByLabelText("Choose ev-2"));
    expect(screen.getByTestId("missed-recover")).toHaveTextContent("Send 1 chosen again");
    fireEvent.click(screen.getByTestId("missed-recover"));
    expect(await screen.findByTestId("missed-recover-result")).toHaveTextContent("1 of 1 taken by http://127.0.0.1:7070/webhooks");
    const sent = calls.filter((c) => c.cmd === "recover_missed");
    expect(sent[0]?.args).toEqual({ form: { notifications: [missedRow(2)], target: null } });
    const rows = () => within(screen.getByRole("table", { name: "Missed notifications" })).getAllByRole("row");
    expect(rows()[2]).toHaveTextContent("sent again · 200");
    expect(rows()[1]).toHaveTextContent("missed");

    // Every row to another receiver, which is not there: each row says why.
    fireEvent.click(screen.getByLabelText("Choose every missed notification"));
    fireEvent.click(screen.getByLabelText("Choose every missed notification"));
    fireEvent.change(screen.getByLabelText("Send again to"), { target: { value: "http://localhost:3999/hooks" } });
    fireEvent.click(screen.getByTestId("missed-recover"));
    await waitFor(() => expect(screen.getByTestId("missed-recover-result")).toHaveTextContent("0 of 2 taken by http://localhost:3999/hooks"));
    expect(calls.filter((c) => c.cmd === "recover_missed")[1]?.args).toEqual({ form: { notifications: [missedRow(1), missedRow(2)], target: "http://localhost:3999/hooks" } });
    expect(rows()[1]).toHaveTextContent("not taken · connection refused");
  });
});

describe("missed notifications through a team workspace", () => {
  it("names the workspace's listener, and a viewer sees Send again disabled with why", async () => {
    const transaction = "urn:svc:partner:transaction" as const;
    mockCommands({
      workspace_status: () => joinedAs("vera", "viewer"),
      find_missed: () => ({
        missed: [{ subscriptionId: "sub-1", productId: "p-1", productName: "acme", resourceType: transaction, eventType: "created", eventId: "ev-1", resourceId: "tx-1", resourceRef: "https://h/partner/v2/transactions/tx-1", transactionId: "tx-1", sentAt: "2026-12-06T10:00:00Z" }],
        subscriptions: [
          { subscriptionId: "sub-1", productId: "p-1", resource: transaction, events: ["created"], since: "2026-12-06T09:00:00Z", sinceSource: "firstCapture", expected: 1, missed: 1, notYetDue: 0 },
          { subscriptionId: "sub-2", productId: "p-2", resource: transaction, events: ["created"], since: null, notCheckedBecause: "neverCaptured", sinceSource: null, expected: 0, missed: 0, notYetDue: 0 },
        ],
        until: "2026-12-06T10:05:00Z",
        transactionsRead: 1,
        transactionsChecked: 1,
        cancelled: false,
      }),
    });
    renderWithClient(<MissedNotifications />);
    expect(await screen.findByText("Also subscriptions the workspace's listener never received anything of")).toBeInTheDocument();
    fireEvent.click(screen.getByTestId("missed"));
    fireEvent.click(screen.getByTestId("missed-find"));
    await screen.findByTestId("missed-report");
    expect(within(screen.getByRole("table", { name: "Subscriptions checked" })).getByText(/the workspace's listener never received anything of it/)).toBeInTheDocument();
    const send = screen.getByTestId("missed-recover");
    expect(send).toBeDisabled();
    expect(send).toHaveAttribute("title", "A viewer may not recover missed notifications: developer and up may. Ask an admin of the workspace.");
    expect(screen.getByRole("form", { name: "Send again" })).toHaveTextContent("A viewer may not recover missed notifications");
    expect(screen.getByLabelText("Send again to")).toHaveAttribute("placeholder", "the workspace's webhook endpoint, or http://…");
  });
});

describe("what the service sent (a sandbox's deliveries)", () => {
  it("lists each notification with its attempts and state, and links the captures the listener kept", async () => {
    mockCommands({
      sandbox_deliveries: () => [
        { eventId: "ev-2", subscriptionId: "sub-1", url: "http://127.0.0.1:7070/webhooks", resourceType: "urn:svc:partner:transaction", resourceId: "tx-2", eventType: "created", state: "discarded", enqueuedAt: "2026-11-23T10:01:00Z", attempts: [{ number: 1, startedAt: "2026-11-23T10:01:00Z", durationMs: 2, status: null, error: "connection refused" }], nextAttemptAt: null, notSentBecause: null, captureIds: [] },
        { eventId: "ev-1", subscriptionId: "sub-1", url: "http://127.0.0.1:7070/webhooks", resourceType: "urn:svc:partner:transaction", resourceId: "tx-1", eventType: "created", state: "delivered", enqueuedAt: "2026-11-23T10:00:00Z", attempts: [{ number: 1, startedAt: "2026-11-23T10:00:00Z", durationMs: 4, status: 503, error: null }, { number: 2, startedAt: "2026-11-23T10:00:20Z", durationMs: 3, status: 200, error: null }], nextAttemptAt: null, notSentBecause: null, captureIds: [7, 9] },
      ],
    });
    renderWithClient(<SandboxDeliveries />);
    fireEvent.click(screen.getByTestId("deliveries"));
    expect(await screen.findByTestId("deliveries-count")).toHaveTextContent("· 2 notifications, 1 never seen by the listener");
    const rows = within(screen.getByRole("table", { name: "Deliveries" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("discarded");
    expect(rows[1]).toHaveTextContent("1: connection refused");
    expect(rows[1]).toHaveTextContent("never seen");
    expect(rows[2]).toHaveTextContent("2: 503 · 200");
    fireEvent.click(screen.getByTestId("delivery-capture-9"));
    expect(window.location.hash).toBe("#/webhooks/9");
  });
});

describe("forward rules", () => {
  it("saves ordered rules and shows what is forwarded", async () => {
    const calls = mockCommands({
      set_forward_rules: (a) => listenerView({ forwardRules: a.rules as ForwardRuleView[] }),
    });
    renderWithClient(<ForwardRules view={listenerView()} />);
    expect(screen.getByTestId("forwarding-summary")).toHaveTextContent("off");
    fireEvent.click(screen.getByTestId("forwarding"));
    fireEvent.click(screen.getByRole("button", { name: "Add rule" }));
    fireEvent.change(screen.getByLabelText("Rule 1 resource type"), { target: { value: "transaction:event" } });
    fireEvent.change(screen.getByLabelText("Rule 1 URL"), { target: { value: " http://localhost:3000/hooks/events " } });
    fireEvent.click(screen.getByRole("button", { name: "Add rule" }));
    // A rule with no URL cannot be saved.
    expect(screen.getByText("Rule 2 needs a URL.")).toBeInTheDocument();
    expect(screen.getByTestId("forward-save")).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Rule 2 URL"), { target: { value: "http://localhost:4000/all" } });
    fireEvent.click(screen.getByTestId("forward-save"));
    expect(await screen.findByText("Saved: 2 rules.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "set_forward_rules")?.args).toEqual({
      rules: [
        { resourceType: "transaction:event", eventType: null, url: "http://localhost:3000/hooks/events" },
        { resourceType: null, eventType: null, url: "http://localhost:4000/all" },
      ],
    });
  });

  it("take any event and resource name: a known one picked, another typed as the service sends it", async () => {
    const calls = mockCommands({
      set_forward_rules: (a) => listenerView({ forwardRules: a.rules as ForwardRuleView[] }),
    });
    renderWithClient(<ForwardRules view={listenerView({ forwardRules: [{ resourceType: "urn:svc:partner:transaction:document", eventType: "created", url: "http://localhost:3000/docs" }] })} />);
    fireEvent.click(screen.getByTestId("forwarding"));
    // A saved name the spec does not show is shown as typed; a known one in its choice.
    expect(screen.getByLabelText("Rule 1 resource type")).toHaveValue("*other");
    expect(screen.getByLabelText("Rule 1 resource type name")).toHaveValue("urn:svc:partner:transaction:document");
    expect(screen.getByLabelText("Rule 1 event type")).toHaveValue("created");
    fireEvent.click(screen.getByRole("button", { name: "Add rule" }));
    fireEvent.change(screen.getByLabelText("Rule 2 event type"), { target: { value: "*other" } });
    fireEvent.change(screen.getByLabelText("Rule 2 event type name"), { target: { value: "reassigned" } });
    fireEvent.change(screen.getByLabelText("Rule 2 URL"), { target: { value: "http://localhost:4000/reassigned" } });
    fireEvent.click(screen.getByTestId("forward-save"));
    expect(await screen.findByText("Saved: 2 rules.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "set_forward_rules")?.args).toEqual({
      rules: [
        { resourceType: "urn:svc:partner:transaction:document", eventType: "created", url: "http://localhost:3000/docs" },
        { resourceType: null, eventType: "reassigned", url: "http://localhost:4000/reassigned" },
      ],
    });
  });
});

describe("a capture's detail", () => {
  const detail = (patch: Partial<CaptureDetail> = {}): CaptureDetail => ({
    summary: capture(7),
    headers: [],
    rawBody: "{}",
    prettyBody: "{}",
    resourceRef: "http://127.0.0.1:3000/partner/v2/transactions/t-1/events/e-7",
    departures: [],
    attempts: [capture(7)],
    answeredStatus: 200,
    outbound: [],
    open: { kind: "event", transactionId: "t-1", eventId: "e-7" },
    ...patch,
  });

  it("says what a valid notification lacks of the spec's shape", async () => {
    mockCommands({ capture_detail: () => detail({ summary: { ...capture(7), eventType: "reassigned" }, departures: ["event type \"reassigned\" is not one the spec shows", "no meta (instanceId, resourceId, resourceType, resourceRef)"] }) });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    expect(await screen.findByTestId("departures")).toHaveTextContent("event type \"reassigned\" is not one the spec shows; no meta");
    expect(screen.getByTestId("detail-verdict")).toHaveTextContent("valid");
  });

  it("opens the event within its transaction, or says why it is not offered", async () => {
    mockCommands({ capture_detail: () => detail() });
    const view = renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    fireEvent.click(await screen.findByTestId("open-resource"));
    expect(window.location.hash).toBe("#/transactions/t-1/events/e-7");
    view.unmount();
    mockCommands({ capture_detail: () => detail({ open: { kind: "refused", reason: "Not offered: the resourceRef points at http://evil.example, not at the service this console reads." } }) });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    expect(await screen.findByTestId("open-refused")).toHaveTextContent("points at http://evil.example");
    expect(screen.queryByTestId("open-resource")).toBeNull();
  });

  it("shows the forward's answer, and replays to another URL", async () => {
    const forward = { kind: "forward", url: "http://localhost:3000/hooks", sentAt: new Date().toISOString(), status: 500, responseHeaders: [["content-type", "text/plain"]] as Array<[string, string]>, responseBody: "boom", elapsedMs: 12, error: null };
    const calls = mockCommands({
      capture_detail: () => detail({ outbound: [forward] }),
      replay_capture: () => ({ answer: { ...forward, kind: "replay", url: "http://localhost:4000/x", status: 202, responseBody: "ok" }, verdict: null }),
    });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    fireEvent.click(await screen.findByRole("tab", { name: "forwards (1)" }));
    expect(screen.getByTestId("outbound-status")).toHaveTextContent("500");
    expect(screen.getByTestId("outbound-body")).toHaveTextContent("boom");
    fireEvent.click(screen.getByRole("tab", { name: "replay" }));
    fireEvent.click(screen.getByLabelText("To another URL"));
    fireEvent.change(screen.getByLabelText("Replay URL"), { target: { value: "http://localhost:4000/x" } });
    fireEvent.click(screen.getByRole("button", { name: "Replay unchanged" }));
    expect(await screen.findByTestId("replay-answer")).toHaveTextContent("http://localhost:4000/x answered 202 in 12 ms.");
    expect(calls.find((c) => c.cmd === "replay_capture")?.args).toEqual({ form: { captureId: 7, body: null, target: "http://localhost:4000/x" } });
  });
});

describe("desktop notifications", () => {
  it("are each off until turned on, and saved one kind at a time", async () => {
    let saved = { failedVerification: false, receiverCheckFailed: false, missedFound: false };
    const calls = mockCommands({
      desktop_notices: () => saved,
      set_desktop_notices: (args) => {
        saved = args.notices as typeof saved;
        return saved;
      },
    });
    renderWithClient(<DesktopNotices />);
    await waitFor(() => expect(screen.getByTestId("desktop-notices-summary")).toHaveTextContent("off"));
    fireEvent.click(screen.getByTestId("desktop-notices"));
    const failed = await screen.findByTestId("notice-failedVerification");
    expect(failed).not.toBeChecked();
    fireEvent.click(failed);
    await waitFor(() => expect(screen.getByTestId("notice-failedVerification")).toBeChecked());
    expect(calls.filter((c) => c.cmd === "set_desktop_notices").map((c) => c.args.notices)).toEqual([{ failedVerification: true, receiverCheckFailed: false, missedFound: false }]);
    expect(screen.getByTestId("desktop-notices-summary")).toHaveTextContent("1 of 3 on");
  });
});
