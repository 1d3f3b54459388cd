import { emit } from "@tauri-apps/api/event";
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import { embeddedConnection, readyStatus } from "../../test/fixtures";
import { ConnectionsScreen } from "./ConnectionsScreen";
import type { CheckStepView, ConnectionCheckView } from "../../platform";

const step = (name: string, outcome: string, detail: string, advice: string | null = null): CheckStepView => ({ name, outcome, detail, advice, elapsedMs: 3 });

describe("Connections: check connection", () => {
  it("shows each step as it ends, what to do under the one that failed, and copies the report", async () => {
    let finish: (report: ConnectionCheckView) => void = () => {};
    const calls = mockCommands({
      app_status: () => readyStatus(),
      check_connection: () => new Promise<ConnectionCheckView>((resolve) => (finish = resolve)),
    });
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderWithClient(<ConnectionsScreen />);
    const row = await screen.findByRole("row", { name: /Embedded sandbox/ });
    fireEvent.click(within(row).getByRole("button", { name: "Check" }));
    const panel = await screen.findByRole("region", { name: `Check of ${embeddedConnection.label}` });
    await waitFor(() => expect(calls.some((c) => c.cmd === "check_connection")).toBe(true));
    expect(calls.find((c) => c.cmd === "check_connection")?.args).toEqual({ id: embeddedConnection.id });

    // A step told by the shell while the check runs is shown at once.
    await emit("connection-check", { connectionId: embeddedConnection.id, step: step("address", "passed", "127.0.0.1") });
    expect(await within(panel).findByText("127.0.0.1")).toBeInTheDocument();
    expect(within(panel).getByText("Checking…")).toBeInTheDocument();

    const failed = step("tls", "failed", "issued by CN=Acme Inspection CA, which this machine does not trust", "Add the CA to the connection (Network…).");
    finish({
      connectionId: embeddedConnection.id,
      baseUrl: "https://api.example.test",
      clientId: "c",
      steps: [step("address", "passed", "127.0.0.1"), failed, step("token", "skipped", "the TLS step failed")],
      allPassed: false,
      text: "Connection check of https://api.example.test (client c)\n✗ tls ...",
    });
    expect(await within(panel).findByTestId("connection-check-verdict")).toHaveTextContent("A step did not pass");
    const tls = panel.querySelector("[data-step=tls]");
    expect(tls).toHaveAttribute("data-outcome", "failed");
    expect(tls).toHaveTextContent("→ Add the CA to the connection (Network…).");
    fireEvent.click(within(panel).getByRole("button", { name: "Copy as text" }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(expect.stringContaining("Connection check of https://api.example.test")));
    fireEvent.click(within(panel).getByRole("button", { name: "Close" }));
    expect(screen.queryByTestId("connection-check")).toBeNull();
  });
});
