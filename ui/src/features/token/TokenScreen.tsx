import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, events, type TokenView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { countdown, formatTime } from "../../lib/format";
import { firstExpiry, secondsLeft } from "./tokenModel";
import { FieldValue } from "../../components/Secret";

export function TokenScreen() {
  const client = useQueryClient();
  const token = useQuery({ queryKey: ["token"], queryFn: api.tokenState, retry: false });
  const [receivedAt, setReceivedAt] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => events.onToken((view) => client.setQueryData(["token"], view)), [client]);
  useEffect(() => setReceivedAt(Date.now()), [token.data]);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);

  const set = (v: TokenView) => client.setQueryData(["token"], v);
  const refresh = useMutation({ mutationFn: api.tokenRefresh, onSuccess: set });
  const revoke = useMutation({ mutationFn: api.tokenRevoke, onSuccess: set });
  const introspect = useMutation({ mutationFn: api.tokenIntrospect });

  if (token.isError) return <div className="page"><h1>Token</h1><ErrorPanel error={token.error} onRetry={() => void token.refetch()} /></div>;
  const view = token.data;
  if (!view) return <div className="page muted">Loading token state…</div>;
  const idle = secondsLeft(view, view.idleExpiresAt, receivedAt, now);
  const max = secondsLeft(view, view.maxExpiresAt, receivedAt, now);
  const first = firstExpiry(idle, max);

  return (
    <div className="page">
      <div className="toolbar">
        <h1>Token</h1>
        <span className={`pill token-${view.phase}`} data-testid="token-phase">{view.phase}</span>
        <span className="spacer" />
        <button type="button" className="primary" onClick={() => refresh.mutate()} disabled={refresh.isPending}>Refresh now</button>
        <button type="button" onClick={() => introspect.mutate()} disabled={introspect.isPending}>Introspect</button>
        <button type="button" className="danger" onClick={() => revoke.mutate()} disabled={revoke.isPending || view.phase !== "active"}>Revoke</button>
      </div>
      {[refresh, revoke, introspect].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
      {view.lastError && <p className="field-error">Last failure: {view.lastError}</p>}
      <div className="columns">
        <section className="card">
          <h2>Lifetime</h2>
          <div className="countdowns">
            <div className={`countdown${first === "idle" ? " first" : ""}`}>
              <span className="label">Idle expiry (15 min after last use)</span>
              <span className="value" data-testid="idle-countdown">{idle === null ? "—" : countdown(idle)}</span>
              <span className="muted small">{formatTime(view.idleExpiresAt)}</span>
            </div>
            <div className={`countdown${first === "max" ? " first" : ""}`}>
              <span className="label">Maximum expiry (120 min after issue)</span>
              <span className="value" data-testid="max-countdown">{max === null ? "—" : countdown(max)}</span>
              <span className="muted small">{formatTime(view.maxExpiresAt)}</span>
            </div>
          </div>
          <p className="muted small">Issued {formatTime(view.issuedAt)}. The client renews the token before whichever expiry comes first.</p>
        </section>
        <section className="card">
          <h2>Introspection</h2>
          {introspect.data ? (
            <table className="fields" data-testid="introspection">
              <tbody>
                {Object.entries(introspect.data).map(([k, v]) => (
                  <tr key={k}><th scope="row">{k}</th><td className="mono"><FieldValue name={k} value={String(v)} /></td></tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">Ask the server what it knows about the current token.</p>
          )}
        </section>
      </div>
      <section className="card">
        <h2>History</h2>
        <table className="grid compact" aria-label="Token history">
          <thead><tr><th>When</th><th>Event</th><th>Detail</th></tr></thead>
          <tbody>
            {[...view.history].reverse().map((h, i) => (
              <tr key={`${h.at}-${i}`}><td>{formatTime(h.at)}</td><td><span className={`pill token-${h.kind}`}>{h.kind}</span></td><td>{h.detail}</td></tr>
            ))}
            {view.history.length === 0 && <tr><td colSpan={3} className="empty">No token events yet.</td></tr>}
          </tbody>
        </table>
      </section>
    </div>
  );
}
