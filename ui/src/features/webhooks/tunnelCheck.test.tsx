import { fireEvent, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import { listenerView } from "../../test/fixtures";
import type { ListenerView, TunnelCheck } from "../../platform";
import { describeTunnelCheck, TUNNEL_FAILURE_LABEL } from "./listenerModel";
import { ListenerControls } from "./WebhooksScreen";

const view: ListenerView = listenerView({
  port: 41234,
  configuredAddress: "127.0.0.1:41234",
  callbackUrl: "https://abc.example.app/webhooks",
  tunnelUrl: "https://abc.example.app/webhooks",
});

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

const wrongPath: TunnelCheck = {
  ...passed,
  ok: false,
  message: "The probe reached the listener at /hooks, not at /webhooks: fix the path of the tunnel URL.",
  hint: "End the tunnel URL with /webhooks, the listener's path, and save it again.",
  failure: "wrongPath",
  status: 404,
};

describe("tunnel check model", () => {
  it("names each failure class and the measured facts", () => {
    expect(describeTunnelCheck(passed)).toEqual({ badge: "Reached", facts: "HTTP 200 · 42 ms · arrived at the listener" });
    expect(describeTunnelCheck(wrongPath).badge).toBe("Wrong path");
    const dns: TunnelCheck = { ...passed, ok: false, failure: "dns", arrived: false, status: null, roundTripMs: null, message: "The tunnel's host name did not resolve (DNS).", hint: "Check the host name." };
    expect(describeTunnelCheck(dns)).toEqual({ badge: "DNS", facts: "not seen by the listener" });
    expect(new Set(Object.values(TUNNEL_FAILURE_LABEL)).size).toBe(Object.keys(TUNNEL_FAILURE_LABEL).length);
  });
});

describe("Webhooks listener controls", () => {
  it("runs the tunnel check and shows what failed, what was measured and what to do", async () => {
    const calls = mockCommands({ check_tunnel: () => wrongPath });
    renderWithClient(<ListenerControls view={view} />);
    fireEvent.click(screen.getByRole("button", { name: "Check tunnel" }));
    const result = await screen.findByTestId("tunnel-check");
    expect(within(result).getByText("Wrong path")).toHaveClass("pill", "failed");
    expect(result).toHaveTextContent("The probe reached the listener at /hooks");
    expect(result).toHaveTextContent("HTTP 404 · 42 ms · arrived at the listener");
    expect(result).toHaveTextContent("End the tunnel URL with /webhooks");
    expect(calls.filter((c) => c.cmd === "check_tunnel")).toHaveLength(1);
  });

  it("shows a passing check with its round trip and no advice", async () => {
    mockCommands({ check_tunnel: () => passed });
    renderWithClient(<ListenerControls view={view} />);
    fireEvent.click(screen.getByRole("button", { name: "Check tunnel" }));
    const result = await screen.findByTestId("tunnel-check");
    expect(within(result).getByText("Reached")).toHaveClass("valid");
    expect(result).toHaveTextContent("42 ms");
    expect(result.querySelector(".hint")).toBeNull();
  });

  it("says what to do when the check itself is refused (no tunnel URL)", async () => {
    mockCommands({
      check_tunnel: () => {
        throw { kind: "invalidInput", message: "No tunnel URL is set.", hint: "Paste the https:// URL your tunnel tool prints, save it, then check.", status: null, errorCode: null };
      },
    });
    renderWithClient(<ListenerControls view={{ ...view, tunnelUrl: null }} />);
    fireEvent.click(screen.getByRole("button", { name: "Check tunnel" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("No tunnel URL is set.");
    expect(alert).toHaveTextContent("Paste the https:// URL");
  });
});
