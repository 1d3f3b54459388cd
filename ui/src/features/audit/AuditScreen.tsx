import { useQuery } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { api } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { Id } from "../../components/Id";
import { FileJobStatus, useFileJob } from "../../components/FileJob";
import { formatTime } from "../../lib/format";
import { countText, filterAudit, OUTCOMES, outcomeClass, workspaceLogText, type Outcome } from "./auditModel";

/**
 * The audit log: every write the console sent (respond, create or change a product, subscribe,
 * rotate, delete) or refused on a read-only connection, from the app and the `partner`
 * command alike, newest first, with the service's answer. Read again each time the screen
 * opens; exported whole as CSV or JSON Lines. While the app is joined to a team workspace, the
 * workspace's log instead: every member's writes there, with their name and role (the same
 * filter and outcome apply; the connection, call and body columns are this machine's only).
 */
export function AuditScreen() {
  const log = useQuery({ queryKey: ["audit-log"], queryFn: api.auditLog, staleTime: 0 });
  const [text, setText] = useState("");
  const [outcome, setOutcome] = useState<Outcome | "all">("all");
  const [open, setOpen] = useState<number | null>(null);
  const exporting = useFileJob("audit-export");

  const entries = log.data?.entries ?? [];
  const shown = filterAudit(entries, text, outcome);
  const team = log.data ? workspaceLogText(log.data) : null;
  return (
    <div className="page">
      <div className="toolbar">
        <h1>Audit log</h1>
        <input
          type="search"
          aria-label="Filter writes"
          placeholder={team ? "Filter: member, role, action, target, detail" : "Filter: connection, action, target, answer, request id"}
          value={text}
          data-testid="audit-filter"
          onChange={(e) => setText(e.target.value)}
        />
        <select aria-label="Outcome" value={outcome} data-testid="audit-outcome" onChange={(e) => setOutcome(e.target.value as Outcome | "all")}>
          <option value="all">Any outcome</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>{o}</option>
          ))}
        </select>
        <button type="button" onClick={() => void log.refetch()} disabled={log.isFetching}>Reload</button>
        <button type="button" data-testid="audit-export-csv" disabled={exporting.running} onClick={() => exporting.run(() => api.exportAuditLog("csv"))}>Export CSV…</button>
        <button type="button" data-testid="audit-export-jsonl" disabled={exporting.running} onClick={() => exporting.run(() => api.exportAuditLog("json"))}>Export JSON Lines…</button>
        <FileJobStatus job={exporting} unit="writes" verb="exported" />
      </div>
      {log.isError && <ErrorPanel error={log.error} compact onRetry={() => void log.refetch()} />}
      {team && <p className="small" data-testid="audit-workspace">{team}</p>}
      {log.data && team && (
        <p className="muted small" data-testid="audit-count">{countText(entries.length, log.data.total, log.data.older)}</p>
      )}
      {log.data && !team && (
        <p className="muted small" data-testid="audit-count">
          {countText(entries.length, log.data.total)} · kept in <span className="mono">{log.data.path}</span>
          {log.data.unreadable > 0 && (
            <span className="warn-text" data-testid="audit-unreadable"> · {log.data.unreadable.toLocaleString("en-US")} line(s) of the file are not entries: kept there, not shown{log.data.unopened > 0 && `; ${log.data.unopened.toLocaleString("en-US")} of them do not open with this console's data key (the key may differ from the one that wrote them)`}</span>
          )}
        </p>
      )}
      <section className="card table-card">
        <table className="grid compact audit-table" aria-label="Audit log">
          <colgroup>
            <col className="time" />
            <col className="connection" />
            <col className="action" />
            <col />
            <col className="status" />
            <col />
            <col className="actions" />
          </colgroup>
          <thead>
            <tr><th>When</th><th>{team ? "Member" : "Connection"}</th><th>Action</th><th>Target</th><th>Outcome</th><th>{team ? "Detail" : "Answer"}</th><th></th></tr>
          </thead>
          <tbody>
            {log.isPending && (
              <tr><td colSpan={7} className="muted small">Loading…</td></tr>
            )}
            {log.data && shown.length === 0 && (
              <tr><td colSpan={7} className="muted small">{entries.length === 0 ? (team ? "No writes in the team workspace yet: every member's notes, answers, syncs, replays, clears and refusals appear here." : "No writes yet: every response, product change, subscription, rotation or deletion the console sends (or refuses on a read-only connection) appears here.") : "No write matches the filter."}</td></tr>
            )}
            {shown.map((entry, index) => {
              const expanded = open === index;
              return (
                <Fragment key={`${entry.at}-${index}`}>
                  <tr data-testid="audit-row" data-outcome={entry.outcome}>
                    <td className="mono small" title={entry.at}>{formatTime(entry.at)}</td>
                    {entry.member !== null ? (
                      <td><span className="cell-clip" title={`${entry.member} (${entry.role ?? "no role"}) · ${entry.baseUrl}`}>{entry.member}</span>{entry.role && <span className="muted small"> ({entry.role})</span>}</td>
                    ) : (
                      <td><span className="cell-clip" title={`${entry.connection} · ${entry.baseUrl}`}>{entry.connection}</span>{entry.via === "cli" && <span className="muted small"> (CLI)</span>}</td>
                    )}
                    <td>{entry.action}</td>
                    <td className="mono small"><span className="cell-clip wide" title={entry.target}>{entry.target}</span></td>
                    <td><span className={`pill ${outcomeClass(entry.outcome)}`}>{entry.outcome}{entry.status !== null ? ` ${entry.status}` : ""}</span></td>
                    <td className="small"><span className="cell-clip wide" title={entry.answer}>{entry.answer}</span></td>
                    <td>
                      <button type="button" className="link" aria-expanded={expanded} onClick={() => setOpen(expanded ? null : index)}>
                        {expanded ? "Hide" : "Details"}
                      </button>
                    </td>
                  </tr>
                  {expanded && (
                    <tr data-testid="audit-details">
                      <td colSpan={7}>
                        {entry.member !== null ? (
                          <dl className="facts small">
                            <dt>When</dt><dd className="mono">{entry.at}</dd>
                            <dt>Member</dt><dd>{entry.member} <span className="muted">({entry.role ?? "no role"})</span></dd>
                            <dt>Workspace</dt><dd className="mono">{entry.baseUrl}</dd>
                            <dt>Action</dt><dd className="mono">{entry.action}</dd>
                            <dt>Target</dt><dd className="mono">{entry.target}</dd>
                            <dt>Detail</dt><dd>{entry.answer || "—"}</dd>
                          </dl>
                        ) : (
                          <dl className="facts small">
                            <dt>When</dt><dd className="mono">{entry.at}</dd>
                            <dt>Connection</dt><dd>{entry.connection} <span className="mono muted">{entry.baseUrl} · <Id value={entry.clientId} /></span></dd>
                            <dt>Sent by</dt><dd>{entry.via === "cli" ? "the partner command" : "the app"}</dd>
                            <dt>Call</dt><dd className="mono">{entry.call || "— (refused before it was built)"}</dd>
                            <dt>Answer</dt><dd>{entry.answer}</dd>
                            <dt>Request id</dt><dd className="mono">{entry.requestId ?? "—"}</dd>
                          </dl>
                        )}
                        {entry.sent && (
                          <>
                            <p className="muted small">Sent (every key, secret or token replaced):</p>
                            <pre className="json" data-testid="audit-sent">{entry.sent}</pre>
                          </>
                        )}
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
