import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ReactElement } from "react";

export type Handler = (args: Record<string, unknown>) => unknown;

/** Mocks the shell's commands by name: an unknown command rejects like a missing one would. */
export function mockCommands(handlers: Record<string, Handler>, calls: Array<{ cmd: string; args: Record<string, unknown> }> = []) {
  // Events are mocked too: a test can `emit` one to the listeners the UI registered.
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    const handler = handlers[cmd];
    if (!handler) throw { kind: "internal", message: `no mock for ${cmd}`, hint: "", status: null, errorCode: null };
    return handler((args ?? {}) as Record<string, unknown>);
  }, { shouldMockEvents: true });
  return calls;
}

export function renderWithClient(ui: ReactElement) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity }, mutations: { retry: false } } });
  const view = render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>);
  // `rerender` replaces the whole tree: a test re-renders inside the same client.
  return { ...view, client, rerenderWithClient: (next: ReactElement) => view.rerender(<QueryClientProvider client={client}>{next}</QueryClientProvider>) };
}
