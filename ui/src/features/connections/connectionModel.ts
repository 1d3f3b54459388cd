import type { ConnectionView, Environment, NewConnection } from "../../platform";

export interface ConnectionDraft {
  label: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  environment: Environment;
}

export const EMPTY_DRAFT: ConnectionDraft = { label: "", baseUrl: "", clientId: "", clientSecret: "", environment: "sandbox" };

/** The form's problems in words, keyed by field; empty when it can be sent. */
export function draftProblems(d: ConnectionDraft): Partial<Record<keyof ConnectionDraft, string>> {
  const problems: Partial<Record<keyof ConnectionDraft, string>> = {};
  if (!d.label.trim()) problems.label = "Give the connection a name.";
  try {
    const url = new URL(d.baseUrl.trim());
    if (url.protocol !== "https:" && url.protocol !== "http:") problems.baseUrl = "Use an http(s):// address.";
    else if (d.environment === "production" && url.protocol !== "https:") problems.baseUrl = "Production needs https://.";
  } catch {
    problems.baseUrl = "Type the service's base URL, e.g. https://api.example.com.";
  }
  if (!d.clientId.trim()) problems.clientId = "The client id is required.";
  if (!d.clientSecret) problems.clientSecret = "The client secret is required (it goes to the keychain).";
  return problems;
}

export function toNewConnection(d: ConnectionDraft): NewConnection {
  return {
    label: d.label.trim(),
    baseUrl: d.baseUrl.trim().replace(/\/+$/, ""),
    clientId: d.clientId.trim(),
    clientSecret: d.clientSecret,
    environment: d.environment,
  };
}

/** What a reset of the embedded sandbox destroys, said before the user confirms it. */
export const RESET_SANDBOX_LOSS =
  "Every product, subscription, transaction and delivery made in the embedded sandbox is lost; it starts again from the demo data.";

/** What a row of the connections table offers. */
export interface ConnectionActions {
  /** Make it the active connection (the embedded sandbox starts if it is not running). */
  use: boolean;
  /** The embedded sandbox and the active connection cannot be removed. */
  remove: boolean;
  /** Only the embedded sandbox can be reset. */
  reset: boolean;
}

export function connectionActions(connection: ConnectionView, activeId: string | null): ConnectionActions {
  const active = connection.id === activeId;
  return { use: !active, remove: !active && !connection.embedded, reset: connection.embedded };
}

/** The base URL cell: the embedded sandbox has none until it first starts. */
export function baseUrlLabel(connection: ConnectionView): string {
  if (connection.baseUrl) return connection.baseUrl;
  return connection.embedded ? "not started: starts when used" : "—";
}
