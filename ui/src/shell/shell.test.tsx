import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { App } from "../App";
import type { AppStatus, TunnelCheck, TunnelStatus } from "../platform";
import { listenerView, pageOf, product, readyStatus } from "../test/fixtures";
import { mockCommands, type Handler } from "../test/render";
import { KEYCHAIN_CONSEQUENCE, suggestedMove, tunnelBadge } from "./shellModel";

const passed: TunnelCheck = {
  ok: true,
  url: "https://abc.example.app/webhooks",
  message: "The tunnel reaches this listener: the probe arrived and came back 200 in 42 ms.",
  hint: null,
  failure: null,
  arrived: true,
  roundTripMs: 42,
  status: 200,
  captureId: 7,
};
const refused: TunnelCheck = {
  ...passed,
  ok: false,
  message: "Nothing answered at abc.example.app: the connection was refused.",
  hint: "Start the tunnel tool again.",
  failure: "refused",
  arrived: false,
  roundTripMs: null,
  status: null,
  captureId: null,
};
const tunnel = (patch: Partial<TunnelStatus>): TunnelStatus => ({ url: passed.url, phase: "done", check: passed, ...patch });

describe("shell model", () => {
  it("sums up the background tunnel check in the top bar's words", () => {
    expect(tunnelBadge(tunnel({ phase: "running", check: null }))).toEqual({ text: "Tunnel: checking…", tone: "checking", title: `Checking ${passed.url}` });
    expect(tunnelBadge(tunnel({}))).toEqual({ text: "Tunnel OK (42 ms)", tone: "ok", title: passed.message });
    expect(tunnelBadge(tunnel({ check: refused }))).toEqual({ text: "Tunnel failing", tone: "failing", title: `${refused.message} ${refused.hint}` });
    // A check that failed to run at all still says which URL and where to go.
    expect(tunnelBadge(tunnel({ phase: "failed", check: null })).title).toContain(passed.url);
  });

  it("offers the free address with the listener's path, only when both are known", () => {
    const brief = { running: false, url: null, problem: null, suggestedAddress: "127.0.0.1:7071" };
    expect(suggestedMove(brief, "/hooks")).toEqual({ address: "127.0.0.1:7071", path: "/hooks" });
    expect(suggestedMove({ ...brief, url: "http://127.0.0.1:7070/in" }, null)).toEqual({ address: "127.0.0.1:7071", path: "/in" });
    expect(suggestedMove(brief, null)).toBeNull();
    expect(suggestedMove({ ...brief, suggestedAddress: null }, "/hooks")).toBeNull();
  });
});

const sortKeys = () => ({ products: ["listingName"], transactions: ["id"] });

function renderApp(status: AppStatus, more: Record<string, Handler> = {}) {
  const calls = mockCommands({ app_status: () => status, sort_keys: sortKeys, list_products: (args) => pageOf([product(1)], args, 1), ...more });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: 10_000 }, mutations: { retry: false } } });
  render(<QueryClientProvider client={client}><App /></QueryClientProvider>);
  return calls;
}

const portTaken = { kind: "listener" as const, message: "Port 7070 on 127.0.0.1 is already in use.", hint: "127.0.0.1:7071 is free: use it, or stop what holds 7070.", status: null, errorCode: null };

describe("top bar and banners", () => {
  it("shows the listener's URL and the tunnel check, linking to Webhooks", async () => {
    renderApp(readyStatus({ tunnel: tunnel({ check: refused }) }));
    expect(await screen.findByTestId("listener-url")).toHaveTextContent("http://127.0.0.1:7070/webhooks");
    const badge = screen.getByTestId("tunnel-status");
    expect(badge).toHaveTextContent("Tunnel failing");
    expect(badge).toHaveAttribute("title", `${refused.message} ${refused.hint}`);
    expect(badge).toHaveAttribute("href", "#/webhooks");
    expect(screen.queryByTestId("keychain-banner")).toBeNull();
    expect(screen.queryByTestId("listener-problem")).toBeNull();
  });

  it("shows no tunnel badge when no tunnel URL is set", async () => {
    renderApp(readyStatus({ tunnel: null }));
    await screen.findByTestId("listener-url");
    expect(screen.queryByTestId("tunnel-status")).toBeNull();
  });

  it("explains a locked keychain and reads it again on Try again", async () => {
    const locked = readyStatus({ keychain: { available: false, message: "The login keyring is locked." } });
    const calls = renderApp(locked, { retry_keychain: () => readyStatus({ version: 2 }) });
    const banner = await screen.findByTestId("keychain-banner");
    expect(banner).toHaveTextContent("The login keyring is locked.");
    expect(banner).toHaveTextContent(KEYCHAIN_CONSEQUENCE);
    fireEvent.click(within(banner).getByRole("button", { name: "Try again" }));
    await waitFor(() => expect(screen.queryByTestId("keychain-banner")).toBeNull());
    expect(calls.filter((c) => c.cmd === "retry_keychain")).toHaveLength(1);
  });

  it("says so when the keychain still does not answer after Try again", async () => {
    const locked = readyStatus({ keychain: { available: false, message: "The login keyring is locked." } });
    renderApp(locked, { retry_keychain: () => ({ ...locked, version: 2 }) });
    fireEvent.click(within(await screen.findByTestId("keychain-banner")).getByRole("button", { name: "Try again" }));
    expect(await screen.findByText(/It still does not answer/)).toBeInTheDocument();
  });

  it("shows each notice and dismisses the one asked by its index", async () => {
    const notices = ["The settings file was corrupt: kept aside as settings.json.corrupt-1.", "PARTNER_BASE_URL could not be opened."];
    const calls = renderApp(readyStatus({ notices }), { dismiss_notice: () => readyStatus({ notices: [notices[0] as string], version: 2 }) });
    const shown = await screen.findAllByTestId("notice");
    expect(shown.map((n) => n.textContent)).toEqual([expect.stringContaining(notices[0] as string), expect.stringContaining(notices[1] as string)]);
    fireEvent.click(within(shown[1] as HTMLElement).getByRole("button", { name: /Dismiss/ }));
    await waitFor(() => expect(screen.getAllByTestId("notice")).toHaveLength(1));
    expect(calls.find((c) => c.cmd === "dismiss_notice")?.args).toEqual({ index: 1 });
  });

  it("shows why the listener is down and moves it to the free address, keeping its path", async () => {
    const down = readyStatus({ listener: { running: false, url: null, problem: portTaken, suggestedAddress: "127.0.0.1:7071" } });
    let moved = false;
    const movedStatus = readyStatus({ listener: { running: true, url: "http://127.0.0.1:7071/hooks", problem: null, suggestedAddress: null }, version: 2 });
    const calls = renderApp(down, {
      // After the move the shell's status has the listener running at the new address.
      app_status: () => (moved ? movedStatus : down),
      listener_status: () => listenerView({ running: false, address: null, port: null, path: "/hooks", problem: portTaken, suggestedAddress: "127.0.0.1:7071" }),
      set_listener_address: () => {
        moved = true;
        return listenerView({ port: 7071, path: "/hooks", configuredAddress: "127.0.0.1:7071" });
      },
    });
    const banner = await screen.findByTestId("listener-problem");
    expect(banner).toHaveTextContent("Port 7070 on 127.0.0.1 is already in use.");
    expect(screen.getByTestId("listener-off")).toHaveTextContent("Listener off");
    fireEvent.click(await within(banner).findByRole("button", { name: "Use 127.0.0.1:7071" }));
    expect(await screen.findByTestId("listener-url")).toHaveTextContent("http://127.0.0.1:7071/hooks");
    expect(screen.queryByTestId("listener-problem")).toBeNull();
    expect(calls.find((c) => c.cmd === "set_listener_address")?.args).toEqual({ form: { address: "127.0.0.1:7071", path: "/hooks" } });
  });

  it("offers no move when the shell found no free address", async () => {
    renderApp(readyStatus({ listener: { running: false, url: null, problem: portTaken, suggestedAddress: null } }));
    const banner = await screen.findByTestId("listener-problem");
    expect(within(banner).queryByRole("button")).toBeNull();
    expect(within(banner).getByRole("link", { name: "Listener settings" })).toHaveAttribute("href", "#/webhooks");
  });
});
