import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type AppStatus } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { Id } from "../../components/Id";
import { showChangedStatus, STATUS_KEY } from "../../startup";
import { baseUrlLabel, connectionActions, draftProblems, EMPTY_DRAFT, networkDraftOf, networkProblems, RESET_SANDBOX_LOSS, toNetworkForm, toNewConnection, type ConnectionDraft, type NetworkDraft } from "./connectionModel";
import { NetworkFields } from "./NetworkFields";
import { ConnectionCheck } from "./ConnectionCheck";
import { TeamWorkspace } from "./TeamWorkspace";

export function ConnectionsScreen() {
  const client = useQueryClient();
  const status = useQuery({ queryKey: STATUS_KEY, queryFn: api.appStatus });
  // Another connection (or a sandbox started afresh) changes every listing: all are asked again.
  const set = (s: AppStatus) => showChangedStatus(client, s);
  const select = useMutation({ mutationFn: api.selectConnection, onSuccess: set });
  const remove = useMutation({ mutationFn: api.removeConnection, onSuccess: set });
  // Read-only changes no listing: only the status (the banner's badge) is shown anew.
  const readOnly = useMutation({
    mutationFn: (c: { id: string; readOnly: boolean }) => api.setConnectionReadOnly(c.id, c.readOnly),
    onSuccess: (next) => client.setQueryData(STATUS_KEY, next),
  });
  const [confirmReset, setConfirmReset] = useState(false);
  // The connection being checked ("Check connection"), shown under the table.
  const [checking, setChecking] = useState<{ id: string; label: string } | null>(null);
  const reset = useMutation({
    mutationFn: api.resetSandbox,
    onSuccess: (s) => {
      setConfirmReset(false);
      set(s);
    },
  });
  const [draft, setDraft] = useState<ConnectionDraft>(EMPTY_DRAFT);
  const [touched, setTouched] = useState(false);
  const problems = draftProblems(draft);
  const netProblems = networkProblems(draft.network);
  // A saved connection's "Network…" editor: which connection, and its settings as typed.
  const [editing, setEditing] = useState<{ id: string; label: string; network: NetworkDraft; touched: boolean } | null>(null);
  const changeNetwork = useMutation({
    mutationFn: (e: { id: string; network: NetworkDraft }) => api.changeConnectionNetwork({ id: e.id, network: toNetworkForm(e.network) }),
    onSuccess: (s) => {
      setEditing(null);
      set(s);
    },
    onError: () => setEditing((e) => (e ? { ...e, network: { ...e.network, proxyPassword: "", clientKeyFile: "" } } : e)),
  });
  const add = useMutation({
    mutationFn: () => api.addConnection(toNewConnection(draft)),
    onSuccess: (s) => {
      setDraft(EMPTY_DRAFT);
      setTouched(false);
      set(s);
    },
    onError: () => setDraft((d) => ({ ...d, clientSecret: "", network: { ...d.network, proxyPassword: "" } })),
  });

  if (status.isError) return <div className="page"><h1>Connections</h1><ErrorPanel error={status.error} onRetry={() => void status.refetch()} /></div>;
  const s = status.data;
  const field = (key: Exclude<keyof ConnectionDraft, "network" | "environment" | "readOnly">, label: string, type = "text") => (
    <label>
      {label}
      <input
        type={type}
        autoComplete="off"
        value={draft[key]}
        onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
        aria-invalid={touched && problems[key] !== undefined}
      />
      {touched && problems[key] && <span className="field-error small">{problems[key]}</span>}
    </label>
  );

  return (
    <div className="page">
      <div className="toolbar"><h1>Connections</h1></div>
      <section className="card table-card">
        <table className="grid compact" aria-label="Connections">
          <thead><tr><th>Name</th><th>Environment</th><th>Base URL</th><th>Client id</th><th></th></tr></thead>
          <tbody>
            {s?.connections.map((c) => {
              const active = s.active?.id === c.id;
              const can = connectionActions(c, s.active?.id ?? null);
              return (
                <tr key={c.id} className={active ? "selected" : undefined} data-connection-id={c.id}>
                  <td>
                    {c.label}{c.embedded ? <span className="muted small"> (embedded)</span> : null}
                    {c.network.summary && <div className="muted small" data-testid="connection-network-summary">{c.network.summary}</div>}
                  </td>
                  <td><span className={`env-badge ${c.environment}`}>{c.environment}</span></td>
                  <td className={c.baseUrl ? "mono" : "muted small"}><span className="cell-clip wide" title={baseUrlLabel(c)}>{baseUrlLabel(c)}</span></td>
                  <td className="mono"><span className="cell-clip"><Id value={c.clientId} /></span></td>
                  <td>
                    <span className="row-actions">
                      {active && <span className="pill valid">active</span>}
                      {!c.embedded && (
                        <label className="inline small" title="Refuse every write (respond, products, subscriptions, keys) before it is sent">
                          <input
                            type="checkbox"
                            data-testid="connection-read-only"
                            checked={c.readOnly}
                            disabled={readOnly.isPending}
                            onChange={(e) => readOnly.mutate({ id: c.id, readOnly: e.target.checked })}
                          />
                          read-only
                        </label>
                      )}
                      {can.use && (
                        <button type="button" onClick={() => select.mutate(c.id)} disabled={select.isPending}>
                          {select.isPending && select.variables === c.id ? (c.embedded ? "Starting…" : "Signing in…") : "Use"}
                        </button>
                      )}
                      <button type="button" className="link" data-testid="check-connection" onClick={() => setChecking({ id: c.id, label: c.label })}>
                        Check
                      </button>
                      {!c.embedded && (
                        <button type="button" className="link" data-testid="connection-network" onClick={() => setEditing({ id: c.id, label: c.label, network: networkDraftOf(c), touched: false })}>
                          Network…
                        </button>
                      )}
                      {can.remove && <button type="button" className="link danger" onClick={() => remove.mutate(c.id)}>Remove</button>}
                      {can.reset && (
                        <button type="button" className="danger" data-testid="reset-sandbox" onClick={() => setConfirmReset(true)} disabled={confirmReset || reset.isPending}>
                          Reset sandbox
                        </button>
                      )}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {confirmReset && (
          <div className="confirm-bar" role="alertdialog" aria-label="Reset the embedded sandbox" data-testid="reset-sandbox-confirm">
            <span>
              <strong>Reset the embedded sandbox?</strong> {RESET_SANDBOX_LOSS}
            </span>
            <button type="button" className="primary danger-fill" onClick={() => reset.mutate()} disabled={reset.isPending}>
              {reset.isPending ? "Resetting…" : "Yes, reset the sandbox"}
            </button>
            <button type="button" onClick={() => setConfirmReset(false)} disabled={reset.isPending}>Cancel</button>
          </div>
        )}
        {reset.isSuccess && !confirmReset && <p className="ok small" role="status">The embedded sandbox started again from its demo data.</p>}
        {[select, remove, reset, readOnly].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
      </section>
      {checking && <ConnectionCheck key={checking.id} id={checking.id} label={checking.label} onClose={() => setChecking(null)} />}
      {editing && (
        <form
          className="card form-card"
          aria-label={`Company network of ${editing.label}`}
          data-testid="network-editor"
          onSubmit={(e) => {
            e.preventDefault();
            setEditing({ ...editing, touched: true });
            if (Object.keys(networkProblems(editing.network)).length === 0) changeNetwork.mutate(editing);
          }}
        >
          <h2>Company network of {editing.label}</h2>
          <p className="muted small">Leave every field blank to use this machine&apos;s own network (its trust store and HTTPS_PROXY). The new settings are tried by signing in before they are kept.</p>
          <NetworkFields value={editing.network} onChange={(network) => setEditing({ ...editing, network })} touched={editing.touched} editing testIdPrefix="edit-network" />
          {changeNetwork.isError && <ErrorPanel error={changeNetwork.error} compact />}
          <div className="actions">
            <button type="submit" className="primary" data-testid="network-save" disabled={changeNetwork.isPending}>{changeNetwork.isPending ? "Signing in…" : "Sign in and save"}</button>
            <button type="button" onClick={() => { setEditing(null); changeNetwork.reset(); }} disabled={changeNetwork.isPending}>Cancel</button>
          </div>
        </form>
      )}
      <form
        className="card form-card"
        aria-label="Add a connection"
        onSubmit={(e) => {
          e.preventDefault();
          setTouched(true);
          if (Object.keys(problems).length === 0 && Object.keys(netProblems).length === 0) add.mutate();
        }}
      >
        <h2>Add a connection</h2>
        <div className="form-row">
          {field("label", "Name")}
          {field("baseUrl", "Base URL")}
          {field("clientId", "Client id")}
          {field("clientSecret", "Client secret (kept in the OS keychain)", "password")}
          <fieldset className="inline-set">
            <legend>Environment</legend>
            {(["sandbox", "production"] as const).map((env) => (
              <label key={env} className="inline">
                <input type="radio" name="env" checked={draft.environment === env} onChange={() => setDraft({ ...draft, environment: env })} />
                <span className={`env-badge ${env}`}>{env}</span>
              </label>
            ))}
          </fieldset>
          <label className="inline" title="Support staff looking at production: every write is refused before it is sent, and can be allowed later in this table">
            <input type="checkbox" data-testid="new-connection-read-only" checked={draft.readOnly} onChange={(e) => setDraft({ ...draft, readOnly: e.target.checked })} />
            Read-only: refuse every write (respond, products, subscriptions, keys)
          </label>
        </div>
        <details className="disclosure" data-testid="company-network" open={Object.keys(netProblems).length > 0 && touched ? true : undefined}>
          <summary>Company network</summary>
          <p className="muted small">Only when this machine reaches the service through a proxy, a company CA or a client certificate of its own.</p>
          <NetworkFields value={draft.network} onChange={(network) => setDraft({ ...draft, network })} touched={touched} editing={false} testIdPrefix="new-network" />
        </details>
        {add.isError && <ErrorPanel error={add.error} compact />}
        <div className="actions"><button type="submit" className="primary" disabled={add.isPending}>Add and sign in</button></div>
      </form>
      <TeamWorkspace />
    </div>
  );
}
