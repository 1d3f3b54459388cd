import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it, vi } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import type { CallSummary } from "../../platform";
import { CallsScreen } from "./CallsScreen";
import { filterCalls, mergeCalls, statusClass } from "./callsModel";

const call = (seq: number, over: Partial<CallSummary> = {}): CallSummary => ({
  seq,
  startedAt: "2026-11-27T01:00:00Z",
  method: "GET",
  target: `/partner/v2/products?start=${seq}`,
  status: 200,
  error: null,
  durationMs: 12,
  retries: 0,
  waitedMs: 0,
  requestId: `x-request-id=r-${seq}`,
  responseBytes: 512,
  ...over,
});

describe("calls model", () => {
  it("classes outcomes, merges without doubles newest first, and filters by text and class", () => {
    const calls = mergeCalls([call(1), call(2)], [call(2), call(3, { status: 404 }), call(4, { status: null, error: "timeout" })]);
    expect(calls.map((c) => c.seq)).toEqual([4, 3, 2, 1]);
    expect(calls.map(statusClass)).toEqual(["no answer", "4xx", "2xx", "2xx"]);
    expect(filterCalls(calls, "", "4xx").map((c) => c.seq)).toEqual([3]);
    expect(filterCalls(calls, "TIMEOUT", "all").map((c) => c.seq)).toEqual([4]);
    expect(filterCalls(calls, "r-2", "all").map((c) => c.seq)).toEqual([2]);
    expect(filterCalls(calls, "start=1", "2xx").map((c) => c.seq)).toEqual([1]);
  });
});

describe("Calls panel", () => {
  it("lists the log newest first, adds live calls, filters, expands a row and copies it as curl with variables", async () => {
    const curl = `curl -sS 'http://127.0.0.1:1/partner/v2/products?start=2' -H "Authorization: Bearer \${PARTNER_TOKEN}"`;
    const calls = mockCommands({
      list_calls: () => ({ connectionId: "c-1", calls: [call(1), call(2, { status: 503, retries: 1 })], dropped: 0 }),
      call_as_curl: () => curl,
    });
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderWithClient(<CallsScreen />);
    await waitFor(() => expect(screen.getAllByTestId("call-row")).toHaveLength(2));
    expect(screen.getAllByTestId("call-row").map((r) => r.getAttribute("data-seq"))).toEqual(["2", "1"]);

    await emit("calls", { connectionId: "c-1", calls: [call(3, { method: "POST", target: "/partner/v2/transactions", status: 201 })] });
    await waitFor(() => expect(screen.getAllByTestId("call-row")).toHaveLength(3));
    expect(screen.getAllByTestId("call-row")[0]).toHaveAttribute("data-seq", "3");

    fireEvent.change(screen.getByTestId("calls-status-class"), { target: { value: "5xx" } });
    expect(screen.getAllByTestId("call-row").map((r) => r.getAttribute("data-seq"))).toEqual(["2"]);
    fireEvent.change(screen.getByTestId("calls-status-class"), { target: { value: "all" } });
    fireEvent.change(screen.getByTestId("calls-filter"), { target: { value: "transactions" } });
    expect(screen.getAllByTestId("call-row").map((r) => r.getAttribute("data-seq"))).toEqual(["3"]);
    fireEvent.change(screen.getByTestId("calls-filter"), { target: { value: "" } });

    const row = screen.getAllByTestId("call-row").find((r) => r.getAttribute("data-seq") === "2")!;
    fireEvent.click(within(row).getByRole("button", { name: "Details of call 2" }));
    const details = await screen.findByTestId("call-details");
    expect(details).toHaveTextContent("x-request-id=r-2");
    expect(details).toHaveTextContent("Retries1");

    fireEvent.click(within(row).getByTestId("call-copy-curl"));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(curl));
    expect(calls.find((c) => c.cmd === "call_as_curl")?.args).toEqual({ seq: 2 });
    expect(await within(row).findByText("Copied")).toBeInTheDocument();

    fireEvent.click(screen.getByTestId("calls-clear"));
    expect(screen.queryAllByTestId("call-row")).toHaveLength(0);
    await emit("calls", { connectionId: "c-1", calls: [call(4)] });
    await waitFor(() => expect(screen.getAllByTestId("call-row")).toHaveLength(1));
  });

  it("starts afresh when calls of another connection arrive", async () => {
    mockCommands({ list_calls: () => ({ connectionId: "c-1", calls: [call(1), call(2)], dropped: 0 }) });
    renderWithClient(<CallsScreen />);
    await waitFor(() => expect(screen.getAllByTestId("call-row")).toHaveLength(2));
    await emit("calls", { connectionId: "c-2", calls: [call(1, { target: "/other" })] });
    await waitFor(() => expect(screen.getAllByTestId("call-row")).toHaveLength(1));
    expect(screen.getByTestId("call-row")).toHaveTextContent("/other");
  });
});
