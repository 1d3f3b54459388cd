import { Fragment, useEffect, useRef, useState } from "react";
import { api, copyText, events, type CallSummary } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { filterCalls, formatBytes, mergeCalls, outcomeLabel, STATUS_CLASSES, statusClass, type StatusClass } from "./callsModel";

/**
 * Every call the active connection's client made (its call log, redacted in the library),
 * newest first, live: the first load lists the log, then the shell's batched `calls` events
 * add to it. "Copy as curl" asks the shell for the call's curl text, whose secrets are
 * `$PARTNER_TOKEN`-style variables. "Clear" empties this view only (the log is the library's).
 */
export function CallsScreen() {
  const [calls, setCalls] = useState<CallSummary[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [text, setText] = useState("");
  const [klass, setKlass] = useState<StatusClass | "all">("all");
  const [open, setOpen] = useState<number | null>(null);
  const [copied, setCopied] = useState<number | null>(null);
  const [copyError, setCopyError] = useState<unknown>(null);
  const connection = useRef<string | null>(null);
  // Calls at or below this number were cleared from the view.
  const clearedUpTo = useRef(0);

  useEffect(() => {
    let stopped = false;
    const load = () =>
      api
        .listCalls(clearedUpTo.current)
        .then((list) => {
          if (stopped) return;
          const fresh = connection.current !== list.connectionId;
          connection.current = list.connectionId;
          setCalls((shown) => mergeCalls(fresh ? [] : shown, list.calls));
          setError(null);
        })
        .catch((e: unknown) => {
          if (!stopped) setError(e);
        });
    const unlisten = events.onCalls((batch) => {
      const fresh = connection.current !== batch.connectionId;
      connection.current = batch.connectionId;
      if (fresh) clearedUpTo.current = 0;
      setCalls((shown) => mergeCalls(fresh ? [] : shown, batch.calls.filter((c) => c.seq > clearedUpTo.current)));
    }, () => void load());
    void load();
    return () => {
      stopped = true;
      unlisten();
    };
  }, []);

  const copyCurl = async (seq: number) => {
    setCopyError(null);
    try {
      const curl = await api.callAsCurl(seq);
      if (await copyText(curl)) setCopied(seq);
    } catch (e) {
      setCopyError(e);
    }
  };

  const shown = filterCalls(calls, text, klass);
  return (
    <div className="page">
      <div className="toolbar">
        <h1>Calls</h1>
        <input
          type="search"
          aria-label="Filter calls"
          placeholder="Filter: path, method, status, request id"
          value={text}
          data-testid="calls-filter"
          onChange={(e) => setText(e.target.value)}
        />
        <select aria-label="Status class" value={klass} data-testid="calls-status-class" onChange={(e) => setKlass(e.target.value as StatusClass | "all")}>
          <option value="all">Any status</option>
          {STATUS_CLASSES.map((c) => (
            <option key={c} value={c}>{c}</option>
          ))}
        </select>
        <button
          type="button"
          data-testid="calls-clear"
          onClick={() => {
            clearedUpTo.current = Math.max(clearedUpTo.current, ...calls.map((c) => c.seq));
            setCalls([]);
            setOpen(null);
          }}
        >
          Clear
        </button>
      </div>
      {error !== null && <ErrorPanel error={error} compact />}
      {copyError !== null && <ErrorPanel error={copyError} compact />}
      <section className="card table-card">
        <table className="grid compact calls-table" aria-label="Calls">
          <colgroup>
            <col className="time" />
            <col className="method" />
            <col />
            <col className="status" />
            <col className="duration" />
            <col className="actions" />
          </colgroup>
          <thead>
            <tr><th>Time</th><th>Method</th><th>Target</th><th>Status</th><th>Duration</th><th></th></tr>
          </thead>
          <tbody>
            {shown.length === 0 && (
              <tr><td colSpan={6} className="muted small">{calls.length === 0 ? "No calls yet: every call to the service appears here as it ends." : "No call matches the filter."}</td></tr>
            )}
            {shown.map((call) => {
              const expanded = open === call.seq;
              return (
                <Fragment key={call.seq}>
                  <tr data-testid="call-row" data-seq={call.seq} data-status-class={statusClass(call)} data-retries={call.retries} data-waited-ms={call.waitedMs}>
                    <td className="mono small">{new Date(call.startedAt).toLocaleTimeString()}</td>
                    <td className="mono">{call.method}</td>
                    <td className="mono"><span className="cell-clip wide" title={call.target}>{call.target}</span></td>
                    <td><span className={`pill ${call.status !== null && call.status < 400 ? "valid" : "invalid"}`}>{outcomeLabel(call)}</span></td>
                    <td className="mono small">{call.durationMs} ms</td>
                    <td>
                      <span className="row-actions">
                        <button type="button" className="link" aria-expanded={expanded} aria-label={`Details of call ${call.seq}`} onClick={() => setOpen(expanded ? null : call.seq)}>
                          {expanded ? "Hide" : "Details"}
                        </button>
                        <button type="button" className="link" data-testid="call-copy-curl" onClick={() => void copyCurl(call.seq)}>
                          {copied === call.seq ? "Copied" : "Copy as curl"}
                        </button>
                      </span>
                    </td>
                  </tr>
                  {expanded && (
                    <tr data-testid="call-details">
                      <td colSpan={6}>
                        <dl className="facts small">
                          <dt>Started</dt><dd className="mono">{call.startedAt}</dd>
                          <dt>Call</dt><dd className="mono">{call.method} {call.target}</dd>
                          <dt>Outcome</dt><dd>{outcomeLabel(call)}</dd>
                          <dt>Duration</dt><dd>{call.durationMs} ms</dd>
                          <dt>Retries</dt><dd>{call.retries}</dd>
                          <dt>Waited</dt><dd>{call.waitedMs > 0 ? `${Math.ceil(call.waitedMs / 1000)} s, as the service asked` : "—"}</dd>
                          <dt>Request id</dt><dd className="mono">{call.requestId ?? "—"}</dd>
                          <dt>Answer size</dt><dd>{formatBytes(call.responseBytes)}</dd>
                        </dl>
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </section>
    </div>
  );
}
