import type { Environment, NewConnection } from "../../platform";

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
