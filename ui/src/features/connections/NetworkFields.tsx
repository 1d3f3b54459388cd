import type { NetworkDraft } from "./connectionModel";
import { networkProblems } from "./connectionModel";

/**
 * The company-network fields (proxy, extra CA, client certificate), shared by the Add-connection
 * form's "Company network" disclosure and a saved connection's "Network…" editor. Paths are
 * typed; the proxy password and the client key file's content go to the OS keychain.
 */
export function NetworkFields({
  value,
  onChange,
  touched,
  editing,
  testIdPrefix,
}: {
  value: NetworkDraft;
  onChange: (next: NetworkDraft) => void;
  touched: boolean;
  /** Changing a saved connection: blank secrets keep the saved ones; a "forget" choice removes the password. */
  editing: boolean;
  testIdPrefix: string;
}) {
  const problems = networkProblems(value);
  const field = (key: Exclude<keyof NetworkDraft, "forgetProxyPassword">, label: string, type = "text", placeholder = "") => (
    <label>
      {label}
      <input
        type={type}
        autoComplete="off"
        spellCheck={false}
        placeholder={placeholder}
        value={value[key]}
        data-testid={`${testIdPrefix}-${key}`}
        onChange={(e) => onChange({ ...value, [key]: e.target.value })}
        aria-invalid={touched && problems[key] !== undefined}
      />
      {touched && problems[key] && <span className="field-error small">{problems[key]}</span>}
    </label>
  );
  return (
    <div className="form-row">
      {field("proxyUrl", "Proxy URL", "text", "http://proxy.example.com:3128")}
      {field("proxyUser", "Proxy user")}
      {field("proxyPassword", editing ? "Proxy password (blank keeps the saved one)" : "Proxy password (kept in the OS keychain)", "password")}
      {editing && (
        <label className="inline">
          <input
            type="checkbox"
            checked={value.forgetProxyPassword}
            data-testid={`${testIdPrefix}-forgetProxyPassword`}
            onChange={(e) => onChange({ ...value, forgetProxyPassword: e.target.checked })}
          />
          Clear the saved proxy password
        </label>
      )}
      {field("caCertFile", "Extra CA certificate file (PEM)", "text", "/path/to/company-ca.pem")}
      {field("clientCertFile", "Client certificate file (PEM)")}
      {field("clientKeyFile", editing ? "Client key file (blank keeps the saved key)" : "Client key file (its key goes to the keychain)")}
    </div>
  );
}
