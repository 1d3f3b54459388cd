import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type CaptureDetail, type Comparison, type EvidenceScope, type CaptureFilter, type OutboundView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { navigate } from "../../lib/router";
import { Id } from "../../components/Id";
import { NamedValue, Secret } from "../../components/Secret";
import { NotificationPicture } from "../picture/NotificationPicture";
import { Notes } from "../notes/Notes";
import { refusal, useTeam } from "../../lib/team";

type Tab = "headers" | "raw" | "pretty" | "signature" | "attempts" | "forwards" | "picture" | "replay" | "compare" | "evidence" | "notes";

/** One capture: its request, signature check, attempts, forwards and replays, replay, a
 * comparison with another capture (`compareWith`: the one shown before, offered first) and
 * evidence. `filter` and `shown` are the inspector's, for "the captures shown". */
export function CaptureDetailPane({
  id,
  onSelect,
  filter = null,
  shown = 0,
  compareWith = null,
}: {
  id: number;
  onSelect: (id: number) => void;
  filter?: CaptureFilter | null;
  shown?: number;
  compareWith?: number | null;
}) {
  const [tab, setTab] = useState<Tab>("pretty");
  const detail = useQuery({ queryKey: ["capture", id], queryFn: () => api.captureDetail(id), retry: false });
  const joined = useTeam().data?.joined === true;
  if (detail.isError) return <ErrorPanel error={detail.error} onRetry={() => void detail.refetch()} />;
  if (!detail.data) return <p className="muted pad">Loading…</p>;
  const d = detail.data;
  // A team workspace's captures: its server checked the signatures with keys that stay there,
  // keeps no forwards, and draws no picture here; the team's notes are on them instead.
  const tabs: Tab[] = joined
    ? ["pretty", "raw", "headers", "attempts", "replay", "compare", "evidence", "notes"]
    : ["pretty", "raw", "headers", "signature", "attempts", "forwards", "picture", "replay", "compare", "evidence"];
  // Compare with the capture shown before, else this notification's first attempt.
  const firstAttempt = d.attempts.length > 1 && d.attempts[0]?.id !== id ? (d.attempts[0]?.id ?? null) : null;
  const other = compareWith !== null && compareWith !== id ? compareWith : firstAttempt;
  return (
    <div className="capture-detail">
      <div className="detail-head">
        <span className={`pill ${d.summary.verdict}`} data-testid="detail-verdict">{d.summary.verdict}</span>
        <strong>{d.summary.eventType} · {d.summary.resourceType.replace("urn:svc:partner:", "")}</strong>
        <span className="muted small">{formatTime(d.summary.receivedAt)} · answered {d.answeredStatus}</span>
      </div>
      {d.departures.length > 0 && (
        <p className="muted small" data-testid="departures">
          Taken as the service signed it, though not the shape the spec shows: {d.departures.join("; ")}.
        </p>
      )}
      <OpenResourceLink detail={d} />
      <div className="tabs" role="tablist">
        {tabs.map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
            {t}{t === "forwards" && d.outbound.length > 0 ? ` (${d.outbound.length})` : ""}
          </button>
        ))}
      </div>
      {tab === "headers" && (
        <table className="fields">
          <tbody>
            {d.headers.map(([k, v], i) => (
              <tr key={`${k}-${i}`}><th scope="row">{k}</th><td className="mono"><NamedValue name={k} value={v} /></td></tr>
            ))}
          </tbody>
        </table>
      )}
      {tab === "raw" && <pre className="json" data-testid="raw-body">{d.rawBody}</pre>}
      {tab === "pretty" && <pre className="json">{d.prettyBody ?? "(the body is not JSON)"}</pre>}
      {tab === "signature" && <SignatureDebugger id={id} />}
      {tab === "attempts" && (
        <table className="grid compact" aria-label="Attempts">
          <thead><tr><th>#</th><th>Received</th><th>Verdict</th><th></th></tr></thead>
          <tbody>
            {d.attempts.map((a, i) => (
              <tr key={a.id} className={a.id === id ? "selected" : undefined}>
                <td>{i + 1}</td>
                <td>{formatTime(a.receivedAt)}{a.replayed ? " (replay)" : ""}</td>
                <td><span className={`pill ${a.verdict}`}>{a.verdict}</span></td>
                <td>{a.id !== id && <button type="button" className="link" onClick={() => onSelect(a.id)}>show</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {tab === "forwards" && <Outbound records={d.outbound} />}
      {tab === "replay" && <Replay id={id} raw={d.rawBody} />}
      {tab === "notes" && joined && <Notes kind="capture" targetId={String(id)} heading={false} />}
      {tab === "compare" && <Compare key={id} id={id} suggested={other} />}
      {tab === "picture" && <NotificationPicture of={{ of: "capture", captureId: id }} />}
      {tab === "evidence" && <EvidenceBundle id={id} attempts={d.attempts.length} filter={filter} shown={shown} />}
    </div>
  );
}

/** This capture beside another: their bodies path by path, their headers, their verdicts. */
function Compare({ id, suggested }: { id: number; suggested: number | null }) {
  const [typed, setTyped] = useState(suggested === null ? "" : String(suggested));
  const [other, setOther] = useState<number | null>(suggested);
  const [onlyDifferences, setOnlyDifferences] = useState(true);
  const compared = useQuery({
    queryKey: ["compare", other, id],
    queryFn: () => api.compareCaptures(other ?? 0, id),
    enabled: other !== null,
    retry: false,
  });
  const c = compared.data;
  const headers = c ? c.headers.filter((h) => !onlyDifferences || !h.same) : [];
  return (
    <div className="compare" data-testid="compare">
      <form
        className="compare-with"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number(typed.trim().replace(/^#/, ""));
          setOther(Number.isInteger(n) && n > 0 ? n : null);
        }}
      >
        <label>
          Compare capture <input aria-label="Capture to compare with" className="mono" size={8} value={typed} onChange={(e) => setTyped(e.target.value)} placeholder="#id" />
        </label>
        <span className="small">with this one (#{id})</span>
        <button type="submit">Compare</button>
      </form>
      {other === null && <p className="muted small">Pick another capture in the list, then this tab compares it with the one you looked at before; or type a capture's number.</p>}
      {compared.isError && <ErrorPanel error={compared.error} compact />}
      {c && (
        <>
          <table className="grid compact" aria-label="Compared captures">
            <thead><tr><th></th><th>#{c.first.id}</th><th>#{c.second.id} (this one)</th></tr></thead>
            <tbody>
              <tr><th scope="row">Verdict</th><td><span className={`pill ${c.first.verdict}`}>{c.first.verdict}</span></td><td><span className={`pill ${c.second.verdict}`}>{c.second.verdict}</span></td></tr>
              <tr><th scope="row">Answered</th><td>{c.first.answered}</td><td>{c.second.answered}</td></tr>
              <tr><th scope="row">Received</th><td>{formatTime(c.first.receivedAt)}</td><td>{formatTime(c.second.receivedAt)}</td></tr>
              <tr><th scope="row">Event</th><td className="mono">{c.first.eventType ?? "—"} {c.first.eventId && <Id value={c.first.eventId} />}</td><td className="mono">{c.second.eventType ?? "—"} {c.second.eventId && <Id value={c.second.eventId} />}</td></tr>
            </tbody>
          </table>
          <h4>Body</h4>
          <BodyDifferences body={c.body} first={c.first.id} second={c.second.id} />
          <h4>
            Headers{" "}
            <label className="small muted">
              <input type="checkbox" checked={onlyDifferences} onChange={(e) => setOnlyDifferences(e.target.checked)} /> only those that differ
            </label>
          </h4>
          {headers.length === 0 ? (
            <p className="muted small">{onlyDifferences ? "Every header is the same." : "No headers."}</p>
          ) : (
            <table className="grid compact" aria-label="Headers compared">
              <thead><tr><th>Header</th><th>#{c.first.id}</th><th>#{c.second.id}</th></tr></thead>
              <tbody>
                {headers.map((h) => (
                  <tr key={h.name} className={h.same ? undefined : "differs"}>
                    <th scope="row">{h.name}</th>
                    <td className="mono">{h.first === null ? "—" : <NamedValue name={h.name} value={h.first} />}</td>
                    <td className="mono">{h.second === null ? "—" : <NamedValue name={h.name} value={h.second} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </div>
  );
}

function BodyDifferences({ body, first, second }: { body: Comparison["body"]; first: number; second: number }) {
  switch (body.kind) {
    case "identical":
      return <p className="small" data-testid="body-comparison">The bodies are byte for byte the same.</p>;
    case "bytes":
      return <p className="small" data-testid="body-comparison">The bodies differ, and they are not both JSON.</p>;
    case "missing":
      return <p className="small" data-testid="body-comparison">A body was not kept (too large, or it never arrived whole), so the bodies cannot be compared.</p>;
    case "json":
      if (body.differences.length === 0) {
        return (
          <p className="small" data-testid="body-comparison">
            The same JSON document in other bytes: re-serialised, so a signature made over one cannot match the other.
          </p>
        );
      }
      return (
        <table className="grid compact" aria-label="Body differences" data-testid="body-comparison">
          <thead><tr><th>Path</th><th>Change</th><th>#{first}</th><th>#{second}</th></tr></thead>
          <tbody>
            {body.differences.map((d) => (
              <tr key={d.path}>
                <td className="mono">{d.path}</td>
                <td>{d.change}</td>
                <td className="mono">{d.first === undefined || d.first === null && d.change === "added" ? "—" : JSON.stringify(d.first)}</td>
                <td className="mono">{d.second === undefined || d.second === null && d.change === "removed" ? "—" : JSON.stringify(d.second)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      );
  }
}

function SignatureDebugger({ id }: { id: number }) {
  const [pasted, setPasted] = useState("");
  const [tryKey, setTryKey] = useState<string | null>(null);
  const report = useQuery({
    queryKey: ["signature", id, tryKey],
    queryFn: () => api.signatureReport(id, tryKey),
    retry: false,
    gcTime: 0,
  });
  return (
    <div className="signature">
      {report.isError && <ErrorPanel error={report.error} compact />}
      {report.data && (
        <>
          <p data-testid="signature-explanation">{report.data.explanation}</p>
          <table className="fields">
            <tbody>
              <tr><th scope="row">Svc-Signature</th><td className="mono">{report.data.received === null ? "(missing)" : <Secret value={report.data.received} testId="received-signature" />}</td></tr>
              <tr><th scope="row">Body</th><td className="mono">{report.data.bodyBytes} bytes, SHA-256 {report.data.bodySha256}</td></tr>
              {report.data.checks.map((c) => (
                <tr key={c.keyLabel}>
                  <th scope="row">{c.keyLabel}</th>
                  <td className="mono"><Secret value={c.expected} /> {c.matches ? <span className="pill valid">matches</span> : <span className="pill invalid-signature">differs</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setTryKey(pasted || null);
          setPasted("");
        }}
      >
        <input type="password" aria-label="Try a key" placeholder="Try another key (not stored)" value={pasted} onChange={(e) => setPasted(e.target.value)} autoComplete="off" />
        <button type="submit">Check</button>
      </form>
    </div>
  );
}

/** "Open": the event within its transaction's timeline, or the transaction; offered only for a
 * verified notification about the active connection's service (the shell decides), else why not. */
function OpenResourceLink({ detail }: { detail: CaptureDetail }) {
  const open = detail.open;
  switch (open.kind) {
    case "event":
      return (
        <button type="button" className="link" data-testid="open-resource" onClick={() => navigate("transactions", open.transactionId, open.eventId)}>
          Open event <Id value={open.eventId} /> in transaction <Id value={open.transactionId} />
        </button>
      );
    case "transaction":
      return (
        <button type="button" className="link" data-testid="open-resource" onClick={() => navigate("transactions", open.transactionId)}>
          Open transaction <Id value={open.transactionId} />
        </button>
      );
    case "refused":
      return <p className="muted small" data-testid="open-refused">{open.reason}</p>;
  }
}

/** What the console sent on for this capture (forwards to the user's app, replays) and what came back. */
function Outbound({ records }: { records: OutboundView[] }) {
  if (records.length === 0) {
    return <p className="muted small pad">Not forwarded or replayed. Forward rules are in Listener settings; Replay sends it anywhere.</p>;
  }
  return (
    <ol className="outbound-list" aria-label="Forwards and replays">
      {[...records].reverse().map((r, i) => (
        <li key={`${r.sentAt}-${i}`} className="outbound" data-kind={r.kind} data-testid="outbound">
          <OutboundAnswer record={r} />
        </li>
      ))}
    </ol>
  );
}

function OutboundAnswer({ record: r }: { record: OutboundView }) {
  return (
    <>
      <div className="detail-head">
        <span className={`pill ${r.error ? "invalid-signature" : r.status !== null && r.status < 400 ? "valid" : "invalid-signature"}`} data-testid="outbound-status">
          {r.error ? "no answer" : r.status}
        </span>
        <strong>{r.kind}</strong>
        <span className="mono small wrap-anywhere">{r.url}</span>
        <span className="muted small">{formatTime(r.sentAt)} · {r.elapsedMs} ms</span>
      </div>
      {r.error && <p className="error small">{r.error}</p>}
      {r.responseHeaders.length > 0 && (
        <details>
          <summary className="small">{r.responseHeaders.length} response headers</summary>
          <table className="fields">
            <tbody>
              {r.responseHeaders.map(([k, v], i) => (
                <tr key={`${k}-${i}`}><th scope="row">{k}</th><td className="mono"><NamedValue name={k} value={v} /></td></tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
      {r.responseBody && <pre className="json small" data-testid="outbound-body">{r.responseBody}</pre>}
    </>
  );
}

/** Replay to this listener or to any URL, unchanged or edited (re-signed); always marked as a
 * replay, never counted as the service's attempt. */
function Replay({ id, raw }: { id: number; raw: string }) {
  const client = useQueryClient();
  const team = useTeam().data;
  const why = refusal(team, "replay");
  const [edited, setEdited] = useState(raw);
  const [toListener, setToListener] = useState(true);
  const [target, setTarget] = useState("");
  const replay = useMutation({
    mutationFn: (body: string | null) => api.replay({ captureId: id, body, target: toListener ? null : target.trim() }),
    // A replay that succeeded is read again by the command's declaration; one that failed may
    // still have been kept.
    onError: () => void client.invalidateQueries({ queryKey: ["capture", id] }),
  });
  const answer = replay.data?.answer;
  return (
    <div className="replay">
      <p className="muted small">
        Replay sends the captured request again, marked <code>Svc-Replay: 1</code>: unchanged with its original headers, or edited and re-signed with the
        subscription's current key. A replay is never counted as the service's attempt.
      </p>
      <fieldset className="choices">
        <label className="check-line">
          <input type="radio" name={`replay-target-${id}`} checked={toListener} onChange={() => setToListener(true)} />
          <span>{team?.joined ? "To the workspace's webhook endpoint" : "To this listener"}</span>
        </label>
        <label className="check-line">
          <input type="radio" name={`replay-target-${id}`} checked={!toListener} onChange={() => setToListener(false)} />
          <span>To another URL</span>
        </label>
        {!toListener && <input aria-label="Replay URL" className="mono" placeholder="http://localhost:3000/hooks" value={target} onChange={(e) => setTarget(e.target.value)} />}
      </fieldset>
      <div className="actions">
        <button type="button" className="primary" onClick={() => replay.mutate(null)} disabled={why !== null || replay.isPending || (!toListener && target.trim() === "")}>Replay unchanged</button>
        <button type="button" onClick={() => replay.mutate(edited)} disabled={why !== null || replay.isPending || edited === raw || (!toListener && target.trim() === "")}>Replay edited</button>
        {why !== null && <span className="muted small" data-testid="replay-refused">{why}</span>}
      </div>
      <textarea aria-label="Edited body" value={edited} onChange={(e) => setEdited(e.target.value)} rows={8} spellCheck={false} />
      {replay.isError && <ErrorPanel error={replay.error} compact />}
      {answer && (
        <div role="status" className="replay-answer" data-testid="replay-answer">
          <p className={answer.error ? "error small" : "ok small"}>
            {answer.error
              ? `No answer from ${answer.url}: ${answer.error}`
              : `${toListener ? (team?.joined ? "The workspace" : "Listener") : answer.url} answered ${answer.status} in ${answer.elapsedMs} ms${replay.data?.verdict ? `, verdict ${replay.data.verdict}` : ""}.`}
          </p>
          {!toListener && <OutboundAnswer record={answer} />}
        </div>
      )}
    </div>
  );
}

/**
 * Evidence for a support ticket: a HAR 1.2 file and a Markdown summary (verdict, the signature
 * debugger's diagnosis, attempts and their timing, the forward's answer, the service's delivery
 * record on a sandbox), with no key, secret or token in either and the chosen body fields masked.
 */
function EvidenceBundle({ id, attempts, filter, shown }: { id: number; attempts: number; filter: CaptureFilter | null; shown: number }) {
  const [scope, setScope] = useState<EvidenceScope>(attempts > 1 ? "notification" : "capture");
  const [fields, setFields] = useState("");
  const [path, setPath] = useState("");
  const why = refusal(useTeam().data, "export-evidence");
  const save = useMutation({
    mutationFn: () =>
      api.evidenceBundle({
        captureId: id,
        scope,
        shown: scope === "shown" ? filter : null,
        maskFields: fields.split(",").map((f) => f.trim()).filter((f) => f.length > 0),
        path: path.trim() || null,
      }),
  });
  const choices: Array<{ value: EvidenceScope; label: string }> = [
    { value: "capture", label: "This capture" },
    { value: "notification", label: `Every attempt of its notification (${attempts})` },
    { value: "shown", label: `The ${shown.toLocaleString("en-US")} captures shown` },
  ];
  return (
    <form
      className="evidence form-card"
      aria-label="Evidence bundle"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <p className="muted small">
        A redacted bundle for a support ticket: a HAR 1.2 file and a Markdown summary. Signing keys, client secrets and tokens are never in it;
        Authorization and cookie headers are masked.
      </p>
      <fieldset className="choices">
        {choices.map((c) => (
          <label key={c.value} className="check-line">
            <input type="radio" name="evidence-scope" checked={scope === c.value} onChange={() => setScope(c.value)} />
            <span>{c.label}</span>
          </label>
        ))}
      </fieldset>
      <label>
        Body fields to mask (comma-separated)
        <input aria-label="Fields to mask" value={fields} onChange={(e) => setFields(e.target.value)} placeholder="meta.resourceId, loan.borrower.name" className="mono" />
      </label>
      <label>
        Save as
        <input aria-label="Evidence path" value={path} onChange={(e) => setPath(e.target.value)} placeholder="the export folder (…/evidence-N-time.har and .md)" className="mono" />
      </label>
      <div className="actions">
        <button type="submit" className="primary" data-testid="evidence-save" disabled={why !== null || save.isPending}>{save.isPending ? "Saving…" : "Save evidence"}</button>
        {why !== null && <span className="muted small" data-testid="evidence-refused">{why}</span>}
      </div>
      {save.isError && <ErrorPanel error={save.error} compact />}
      {save.data && (
        <div className="ok small" role="status" data-testid="evidence-saved">
          <p>
            {save.data.captures} capture{save.data.captures === 1 ? "" : "s"} in <code>{save.data.harPath}</code> and <code>{save.data.summaryPath}</code>
          </p>
          <p className="muted">
            {save.data.headersMasked} headers, {save.data.fieldsMasked} body fields and {save.data.secretsMasked} secrets masked
            {save.data.bodiesWithheld ? `, ${save.data.bodiesWithheld} bodies left out` : ""}
            {save.data.withDeliveries ? " · with the service's delivery records" : ""}
          </p>
        </div>
      )}
    </form>
  );
}
