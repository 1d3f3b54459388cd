import type { ConnectionView, Environment, NetworkForm, NewConnection } from "../../platform";

/** The "Company network" fields, as typed (blank is "none"). */
export interface NetworkDraft {
  proxyUrl: string;
  proxyUser: string;
  /** Kept in the keychain; blank when changing a saved connection keeps the saved one. */
  proxyPassword: string;
  /** Remove the saved proxy password (changing a saved connection). */
  forgetProxyPassword: boolean;
  caCertFile: string;
  clientCertFile: string;
  /** Read once; the key goes to the keychain, the path is not kept. */
  clientKeyFile: string;
}

export const EMPTY_NETWORK: NetworkDraft = {
  proxyUrl: "",
  proxyUser: "",
  proxyPassword: "",
  forgetProxyPassword: false,
  caCertFile: "",
  clientCertFile: "",
  clientKeyFile: "",
};

/** A saved connection's network settings as the form starts from (secrets blank: kept). */
export function networkDraftOf(connection: ConnectionView): NetworkDraft {
  const n = connection.network;
  return {
    ...EMPTY_NETWORK,
    proxyUrl: n.proxyUrl ?? "",
    proxyUser: n.proxyUser ?? "",
    caCertFile: n.caCertFile ?? "",
    clientCertFile: n.clientCertFile ?? "",
  };
}

/** The network fields' problems in words, keyed by field. The shell checks the rest (files, proxy). */
export function networkProblems(n: NetworkDraft): Partial<Record<keyof NetworkDraft, string>> {
  const problems: Partial<Record<keyof NetworkDraft, string>> = {};
  if (n.proxyUrl.trim()) {
    try {
      const url = new URL(n.proxyUrl.trim());
      if (url.protocol !== "http:" && url.protocol !== "https:") problems.proxyUrl = "Use an http:// or https:// proxy address.";
      else if (url.username || url.password) problems.proxyUrl = "Give the proxy user and password in their own fields, not in the URL.";
    } catch {
      problems.proxyUrl = "Type the proxy's address, e.g. http://proxy.example.com:3128.";
    }
  } else if (n.proxyUser.trim() || n.proxyPassword) {
    problems.proxyUrl = "A proxy user or password needs the proxy's URL.";
  }
  if (n.proxyPassword && !n.proxyUser.trim()) problems.proxyUser = "A proxy password needs its user.";
  if (n.clientKeyFile.trim() && !n.clientCertFile.trim()) problems.clientCertFile = "Give the client certificate file with its key.";
  return problems;
}

/** Whether any company-network setting is given. */
export function hasNetwork(n: NetworkDraft): boolean {
  return [n.proxyUrl, n.proxyUser, n.proxyPassword, n.caCertFile, n.clientCertFile, n.clientKeyFile].some((v) => v.trim() !== "");
}

const blankAsNull = (v: string): string | null => (v.trim() ? v.trim() : null);

export function toNetworkForm(n: NetworkDraft): NetworkForm {
  return {
    proxyUrl: blankAsNull(n.proxyUrl),
    proxyUser: blankAsNull(n.proxyUser),
    proxyPassword: n.proxyPassword ? n.proxyPassword : null,
    forgetProxyPassword: n.forgetProxyPassword,
    caCertFile: blankAsNull(n.caCertFile),
    clientCertFile: blankAsNull(n.clientCertFile),
    clientKeyFile: blankAsNull(n.clientKeyFile),
  };
}

export interface ConnectionDraft {
  label: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  environment: Environment;
  network: NetworkDraft;
  /** Every write refused before sending, from the start. */
  readOnly: boolean;
}

export const EMPTY_DRAFT: ConnectionDraft = { label: "", baseUrl: "", clientId: "", clientSecret: "", environment: "sandbox", network: EMPTY_NETWORK, readOnly: false };

/** The form's problems in words, keyed by field; empty when it can be sent. */
export function draftProblems(d: ConnectionDraft): Partial<Record<Exclude<keyof ConnectionDraft, "network" | "readOnly">, string>> {
  const problems: Partial<Record<Exclude<keyof ConnectionDraft, "network" | "readOnly">, string>> = {};
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
    ...(hasNetwork(d.network) ? { network: toNetworkForm(d.network) } : {}),
    ...(d.readOnly ? { readOnly: true } : {}),
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
