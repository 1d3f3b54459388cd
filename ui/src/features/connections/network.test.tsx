import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import { embeddedConnection, readyStatus } from "../../test/fixtures";
import { ConnectionsScreen } from "./ConnectionsScreen";
import { EMPTY_NETWORK, networkProblems, toNetworkForm } from "./connectionModel";

const staging = {
  ...embeddedConnection,
  id: "c-1",
  label: "Staging",
  baseUrl: "https://staging.example.com",
  clientId: "client-1",
  embedded: false,
  network: { proxyUrl: "http://proxy.corp:3128/", proxyUser: "alice", caCertFile: "/etc/corp-ca.pem", clientCertFile: null, summary: "via proxy proxy.corp:3128 · extra CA" },
};

describe("company network fields", () => {
  it("checks the proxy fields and sends blank as none", () => {
    expect(networkProblems(EMPTY_NETWORK)).toEqual({});
    expect(networkProblems({ ...EMPTY_NETWORK, proxyUrl: "http://me:pw@proxy:3128" }).proxyUrl).toContain("own fields");
    expect(networkProblems({ ...EMPTY_NETWORK, proxyUser: "alice" }).proxyUrl).toContain("needs the proxy's URL");
    expect(networkProblems({ ...EMPTY_NETWORK, proxyUrl: "http://proxy:3128", proxyPassword: "pw" }).proxyUser).toContain("needs its user");
    expect(networkProblems({ ...EMPTY_NETWORK, clientKeyFile: "/k.pem" }).clientCertFile).toBeDefined();
    expect(toNetworkForm({ ...EMPTY_NETWORK, proxyUrl: " http://proxy:3128 ", caCertFile: "  " })).toEqual({
      proxyUrl: "http://proxy:3128",
      proxyUser: null,
      proxyPassword: null,
      forgetProxyPassword: false,
      caCertFile: null,
      clientCertFile: null,
      clientKeyFile: null,
    });
  });
});

describe("Connections: company network", () => {
  it("keeps the disclosure closed by default and sends its fields with the new connection", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus(),
      add_connection: () => readyStatus({ connections: [embeddedConnection, staging] }),
    });
    renderWithClient(<ConnectionsScreen />);
    const disclosure = await screen.findByTestId("company-network");
    expect(disclosure).not.toHaveAttribute("open");
    const form = screen.getByRole("form", { name: "Add a connection" });
    fireEvent.change(within(form).getByLabelText("Name"), { target: { value: "Corp" } });
    fireEvent.change(within(form).getByLabelText("Base URL"), { target: { value: "https://api.example.com" } });
    fireEvent.change(within(form).getByLabelText("Client id"), { target: { value: "id-1" } });
    fireEvent.change(within(form).getByLabelText(/Client secret/), { target: { value: "s3cret" } });
    fireEvent.click(within(disclosure).getByText("Company network"));
    fireEvent.change(screen.getByTestId("new-network-proxyUrl"), { target: { value: "http://proxy.corp:3128" } });
    fireEvent.change(screen.getByTestId("new-network-proxyUser"), { target: { value: "alice" } });
    fireEvent.change(screen.getByTestId("new-network-proxyPassword"), { target: { value: "proxy-pw" } });
    fireEvent.change(screen.getByTestId("new-network-caCertFile"), { target: { value: "/etc/corp-ca.pem" } });
    fireEvent.click(within(form).getByRole("button", { name: "Add and sign in" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "add_connection")).toBe(true));
    const sent = calls.find((c) => c.cmd === "add_connection")?.args.form as Record<string, unknown>;
    expect(sent.network).toEqual({
      proxyUrl: "http://proxy.corp:3128",
      proxyUser: "alice",
      proxyPassword: "proxy-pw",
      forgetProxyPassword: false,
      caCertFile: "/etc/corp-ca.pem",
      clientCertFile: null,
      clientKeyFile: null,
    });
  });

  it("sends no network when the disclosure was left alone", async () => {
    const calls = mockCommands({ app_status: () => readyStatus(), add_connection: () => readyStatus() });
    renderWithClient(<ConnectionsScreen />);
    const form = await screen.findByRole("form", { name: "Add a connection" });
    fireEvent.change(within(form).getByLabelText("Name"), { target: { value: "Plain" } });
    fireEvent.change(within(form).getByLabelText("Base URL"), { target: { value: "https://api.example.com" } });
    fireEvent.change(within(form).getByLabelText("Client id"), { target: { value: "id-1" } });
    fireEvent.change(within(form).getByLabelText(/Client secret/), { target: { value: "s3cret" } });
    fireEvent.click(within(form).getByRole("button", { name: "Add and sign in" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "add_connection")).toBe(true));
    expect(calls.find((c) => c.cmd === "add_connection")?.args.form).not.toHaveProperty("network");
  });

  it("shows a saved connection's network and changes it with Network…, blank secrets kept", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus({ connections: [embeddedConnection, staging] }),
      change_connection_network: () => readyStatus({ connections: [embeddedConnection, { ...staging, network: { ...staging.network, caCertFile: null, summary: "via proxy proxy.corp:3128" } }] }),
    });
    renderWithClient(<ConnectionsScreen />);
    expect(await screen.findByTestId("connection-network-summary")).toHaveTextContent("via proxy proxy.corp:3128 · extra CA");
    fireEvent.click(screen.getByTestId("connection-network"));
    const editor = await screen.findByTestId("network-editor");
    expect(screen.getByTestId("edit-network-proxyUrl")).toHaveValue("http://proxy.corp:3128/");
    expect(screen.getByTestId("edit-network-proxyPassword")).toHaveValue("");
    fireEvent.change(screen.getByTestId("edit-network-caCertFile"), { target: { value: "" } });
    fireEvent.click(screen.getByTestId("edit-network-forgetProxyPassword"));
    fireEvent.click(within(editor).getByTestId("network-save"));
    await waitFor(() => expect(calls.some((c) => c.cmd === "change_connection_network")).toBe(true));
    expect(calls.find((c) => c.cmd === "change_connection_network")?.args.change).toEqual({
      id: "c-1",
      network: {
        proxyUrl: "http://proxy.corp:3128/",
        proxyUser: "alice",
        proxyPassword: null,
        forgetProxyPassword: true,
        caCertFile: null,
        clientCertFile: null,
        clientKeyFile: null,
      },
    });
    await waitFor(() => expect(screen.queryByTestId("network-editor")).toBeNull());
  });
});
