import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { Id } from "../components/Id";
import type { CaptureDetail, CaptureSummary, SignatureReport } from "../platform";
import { CaptureDetailPane } from "../features/webhooks/CaptureDetailPane";
import { ShownOnce } from "../features/products/ShownOnce";
import { TokenScreen } from "../features/token/TokenScreen";
import { paletteItems } from "../features/support/supportModel";
import { changeDisplay, currentDisplay, DEFAULT_DISPLAY, DISPLAY_STORAGE_KEY, STAGE_MASK } from "../lib/presentation";
import { pageOf, product, readyStatus } from "../test/fixtures";
import { mockCommands, renderWithClient } from "../test/render";
import { DisplayMenu } from "./DisplayMenu";

const UUID = "0f8e2c4a-1b2c-4d5e-8f90-123456789abc";

afterEach(() => {
  act(() => changeDisplay(DEFAULT_DISPLAY));
  localStorage.clear();
});

const root = () => document.documentElement;

describe("the Display menu", () => {
  it("opens on the checked theme, moves with the arrows, picks with Enter and gives focus back", async () => {
    const user = userEvent.setup();
    render(<DisplayMenu />);
    const button = screen.getByTestId("display-button");
    expect(button).toHaveAttribute("aria-expanded", "false");
    button.focus();
    await user.keyboard("{Enter}");
    const menu = screen.getByRole("menu", { name: "Display" });
    expect(button).toHaveAttribute("aria-expanded", "true");
    expect(within(menu).getByRole("menuitemradio", { name: /System/ })).toHaveFocus();
    expect(within(menu).getByRole("menuitemradio", { name: /System/ })).toHaveAttribute("aria-checked", "true");
    await user.keyboard("{ArrowDown}{ArrowDown}");
    expect(within(menu).getByRole("menuitemradio", { name: "Dark" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(screen.queryByRole("menu")).toBeNull();
    expect(button).toHaveFocus();
    expect(root()).toHaveAttribute("data-theme", "dark");
    expect(JSON.parse(localStorage.getItem(DISPLAY_STORAGE_KEY) ?? "null")).toEqual({ theme: "dark", stage: false });
    // Opened again, the checked theme is where focus lands.
    await user.keyboard("{ArrowDown}");
    expect(within(screen.getByRole("menu")).getByRole("menuitemradio", { name: "Dark" })).toHaveFocus();
  });

  it("wraps with the arrows, goes to the ends with Home and End, and closes on Escape and Tab", async () => {
    const user = userEvent.setup();
    render(<DisplayMenu />);
    const button = screen.getByTestId("display-button");
    await user.click(button);
    const menu = screen.getByRole("menu");
    await user.keyboard("{ArrowUp}");
    expect(within(menu).getByRole("menuitem", { name: /About and updates/ })).toHaveFocus();
    await user.keyboard("{ArrowDown}");
    expect(within(menu).getByRole("menuitemradio", { name: /System/ })).toHaveFocus();
    await user.keyboard("{End}");
    expect(within(menu).getByRole("menuitem", { name: /About and updates/ })).toHaveFocus();
    await user.keyboard("{Home}");
    expect(within(menu).getByRole("menuitemradio", { name: /System/ })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("menu")).toBeNull();
    expect(button).toHaveFocus();
    await user.keyboard(" ");
    expect(screen.getByRole("menu")).toBeInTheDocument();
    await user.keyboard("{Tab}");
    expect(screen.queryByRole("menu")).toBeNull();
    expect(button).toHaveFocus();
    // Nothing was chosen on the way.
    expect(currentDisplay()).toEqual(DEFAULT_DISPLAY);
  });

  it("turns stage mode on from the menu, and off with Ctrl+Shift+M", async () => {
    const user = userEvent.setup();
    render(<DisplayMenu />);
    await user.click(screen.getByTestId("display-button"));
    const toggle = screen.getByRole("menuitemcheckbox", { name: /Stage mode/ });
    expect(toggle).toHaveAttribute("aria-checked", "false");
    expect(toggle).toHaveTextContent("Ctrl+Shift+M");
    await user.click(toggle);
    expect(root()).toHaveAttribute("data-stage", "on");
    expect(screen.getByTestId("display-button")).toHaveTextContent("Display · stage");
    await user.keyboard("{Control>}{Shift>}M{/Shift}{/Control}");
    expect(root()).not.toHaveAttribute("data-stage");
    await user.keyboard("{Control>}{Shift>}M{/Shift}{/Control}");
    expect(root()).toHaveAttribute("data-stage", "on");
    // Ctrl+M alone is not the shortcut.
    await user.keyboard("{Control>}m{/Control}");
    expect(root()).toHaveAttribute("data-stage", "on");
  });

  it("closes on a click outside it", async () => {
    const user = userEvent.setup();
    render(<><DisplayMenu /><p>elsewhere</p></>);
    await user.click(screen.getByTestId("display-button"));
    expect(screen.getByRole("menu")).toBeInTheDocument();
    await user.click(screen.getByText("elsewhere"));
    expect(screen.queryByRole("menu")).toBeNull();
  });
});

describe("the command palette's display commands", () => {
  it("offers stage mode the other way round and the themes not in force", () => {
    const labels = (stage: boolean, theme: typeof DEFAULT_DISPLAY.theme) => paletteItems("", { stage, theme }).filter((i) => i.kind === "display").map((i) => i.label);
    expect(labels(false, "system")).toEqual(["Stage mode: turn on", "Theme: Light", "Theme: Dark", "Theme: High contrast"]);
    expect(labels(true, "dark")).toEqual(["Stage mode: turn off", "Theme: System", "Theme: Light", "Theme: High contrast"]);
    expect(paletteItems("stage").map((i) => i.label)).toEqual(["Go to stage", "Stage mode: turn on"]);
  });
});

function renderApp() {
  mockCommands({ app_status: () => readyStatus(), sort_keys: () => ({ products: ["listingName"], transactions: ["id"] }), list_products: (args) => pageOf([product(1)], args, 1) });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: 10_000 }, mutations: { retry: false } } });
  render(<QueryClientProvider client={client}><App /></QueryClientProvider>);
}

describe("stage mode in the app", () => {
  it("puts the connection's strip across the window, and the palette turns stage mode off", async () => {
    renderApp();
    await screen.findByTestId("env-badge");
    expect(screen.queryByTestId("stage-strip")).toBeNull();
    fireEvent.keyDown(window, { key: "M", ctrlKey: true, shiftKey: true });
    const strip = await screen.findByTestId("stage-strip");
    const active = readyStatus().active;
    expect(strip).toHaveTextContent(new RegExp(`sandbox.*${active?.label ?? "?"}`, "i"));
    expect(strip).toHaveClass("sandbox");
    fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    const input = await screen.findByRole("combobox", { name: "Command" });
    fireEvent.change(input, { target: { value: "stage mode" } });
    fireEvent.keyDown(input, { key: "ArrowDown" });
    expect(screen.getByRole("option", { name: "Stage mode: turn off" })).toHaveAttribute("aria-selected", "true");
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(screen.queryByTestId("stage-strip")).toBeNull());
    expect(root()).not.toHaveAttribute("data-stage");
  });
});

describe("ids in stage mode", () => {
  it("shows the first 8 characters, keeping the whole id in the title", () => {
    render(<><Id value={UUID} /><Id value={UUID} compact /><Id value="t-1" /></>);
    expect(screen.getByText(UUID)).toHaveAttribute("title", UUID);
    expect(screen.getByText("0f8e2c4a…9abc")).toBeInTheDocument();
    act(() => changeDisplay({ stage: true }));
    const shortened = screen.getAllByText("0f8e2c4a…");
    expect(shortened).toHaveLength(2);
    for (const id of shortened) expect(id).toHaveAttribute("title", UUID);
    expect(screen.getByText("t-1")).toBeInTheDocument();
  });
});

describe("secrets in stage mode", () => {
  it("hides a new signing key, while Copy still copies it", async () => {
    const key = "E2eRotatedKey#0123456789abcdefghijKLMN";
    const copied: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (text: string) => void copied.push(text) }, configurable: true });
    act(() => changeDisplay({ stage: true }));
    render(<ShownOnce shown={{ subscriptionId: UUID, key, previousStillVerifies: false }} onDone={() => {}} />);
    expect(screen.getByTestId("shown-key")).toHaveTextContent(STAGE_MASK);
    expect(document.body.textContent).not.toContain(key);
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    await waitFor(() => expect(copied).toContain(key));
    // Off again, the key that is still on screen shows.
    act(() => changeDisplay({ stage: false }));
    expect(screen.getByTestId("shown-key")).toHaveTextContent(key);
  });

  const summary: CaptureSummary = { id: 7, receivedAt: new Date(1_700_000_000_000).toISOString(), verdict: "valid", eventType: "created", resourceType: "urn:svc:partner:transaction", resourceId: UUID, instanceId: "demo", eventId: "e-7", subscriptionId: "s", attempts: 1, replayed: false, groupAttempts: 1 };
  const signature = "sha256=4f1b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f";
  const detail: CaptureDetail = {
    summary,
    headers: [["Content-Type", "application/json"], ["Svc-Signature", signature], ["Authorization", "Bearer eyJhbGciOi.secret-token"], ["Svc-SubscriptionId", "s"]],
    rawBody: "{}",
    prettyBody: "{}",
    resourceRef: null,
    departures: [],
    attempts: [summary],
    answeredStatus: 200,
    outbound: [],
    open: { kind: "transaction", transactionId: UUID },
  };
  const report: SignatureReport = { received: signature, bodyBytes: 2, bodySha256: "44136fa3", checks: [{ keyLabel: "current key", expected: "sha256=0a1b2c3d", matches: false }], explanation: "The signature does not match the current key." };

  it("masks the credential and signature headers in the inspector, and leaves the others", async () => {
    mockCommands({ capture_detail: () => detail, signature_report: () => report });
    act(() => changeDisplay({ stage: true }));
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    fireEvent.click(await screen.findByRole("tab", { name: "headers" }));
    const row = (name: string) => screen.getByRole("rowheader", { name }).closest("tr") as HTMLElement;
    expect(row("Svc-Signature")).toHaveTextContent(STAGE_MASK);
    expect(row("Authorization")).toHaveTextContent(STAGE_MASK);
    expect(row("Content-Type")).toHaveTextContent("application/json");
    expect(row("Svc-SubscriptionId")).toHaveTextContent("s");
    expect(document.body.textContent).not.toContain("secret-token");
    expect(document.body.textContent).not.toContain(signature);
    // The "Open" link's transaction id is shortened.
    expect(screen.getByTestId("open-resource")).toHaveTextContent("Open transaction 0f8e2c4a…");
    // The signature debugger: what arrived and what the key gives, masked; the verdict still said.
    fireEvent.click(screen.getByRole("tab", { name: "signature" }));
    expect(await screen.findByTestId("received-signature")).toHaveTextContent(STAGE_MASK);
    expect(screen.getByRole("rowheader", { name: "current key" }).closest("tr")).toHaveTextContent(`${STAGE_MASK} differs`);
    expect(document.body.textContent).not.toContain("sha256=0a1b2c3d");
  });

  it("shows the headers as they came when stage mode is off", async () => {
    mockCommands({ capture_detail: () => detail });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    fireEvent.click(await screen.findByRole("tab", { name: "headers" }));
    expect(screen.getByRole("rowheader", { name: "Svc-Signature" }).closest("tr")).toHaveTextContent(signature);
    expect(screen.queryByText(STAGE_MASK)).toBeNull();
  });

  it("shows the token screen's introspection with its ids shortened and its kind of token as it is", async () => {
    const now = new Date().toISOString();
    mockCommands({
      token_state: () => ({ phase: "active", issuedAt: now, idleExpiresAt: now, maxExpiresAt: now, now, lastError: null, history: [] }),
      token_introspect: () => ({ active: true, scope: "partner", client_id: "demo-partner", token_type: "Bearer", exp: 1_700_000_000, environment: "sandbox", identity_type: "partner", encompass_client_id: UUID }),
    });
    act(() => changeDisplay({ stage: true }));
    renderWithClient(<TokenScreen />);
    fireEvent.click(await screen.findByRole("button", { name: "Introspect" }));
    const table = await screen.findByTestId("introspection");
    const row = (name: string) => within(table).getByRole("rowheader", { name }).closest("tr") as HTMLElement;
    expect(row("encompass_client_id")).toHaveTextContent("0f8e2c4a…");
    expect(table).not.toHaveTextContent(UUID);
    expect(row("token_type")).toHaveTextContent("Bearer");
    expect(row("client_id")).toHaveTextContent("demo-partner");
  });
});
