import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { navigate } from "../../lib/router";

type Tab = "headers" | "raw" | "pretty" | "signature" | "attempts" | "replay";

export function CaptureDetailPane({ id, onSelect }: { id: number; onSelect: (id: number) => void }) {
  const [tab, setTab] = useState<Tab>("pretty");
  const detail = useQuery({ queryKey: ["capture", id], queryFn: () => api.captureDetail(id), retry: false });
  if (detail.isError) return <ErrorPanel error={detail.error} onRetry={() => void detail.refetch()} />;
  if (!detail.data) return <p className="muted pad">Loading…</p>;
  const d = detail.data;
  const tabs: Tab[] = ["pretty", "raw", "headers", "signature", "attempts", "replay"];
  return (
    <div className="capture-detail">
      <div className="detail-head">
        <span className={`pill ${d.summary.verdict}`} data-testid="detail-verdict">{d.summary.verdict}</span>
        <strong>{d.summary.eventType} · {d.summary.resourceType.replace("urn:svc:partner:", "")}</strong>
        <span className="muted small">{formatTime(d.summary.receivedAt)} · answered {d.answeredStatus}</span>
      </div>
      {d.transactionId && (
        <button type="button" className="link" onClick={() => navigate("transactions", d.transactionId)}>
          Open transaction {d.transactionId}
        </button>
      )}
      <div className="tabs" role="tablist">
        {tabs.map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
            {t}
          </button>
        ))}
      </div>
      {tab === "headers" && (
        <table className="fields">
          <tbody>
            {d.headers.map(([k, v], i) => (
              <tr key={`${k}-${i}`}><th scope="row">{k}</th><td className="mono">{v}</td></tr>
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
      {tab === "replay" && <Replay id={id} raw={d.rawBody} />}
    </div>
  );
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
              <tr><th scope="row">Svc-Signature</th><td className="mono">{report.data.received ?? "(missing)"}</td></tr>
              <tr><th scope="row">Body</th><td className="mono">{report.data.bodyBytes} bytes, SHA-256 {report.data.bodySha256}</td></tr>
              {report.data.checks.map((c) => (
                <tr key={c.keyLabel}>
                  <th scope="row">{c.keyLabel}</th>
                  <td className="mono">{c.expected} {c.matches ? <span className="pill valid">matches</span> : <span className="pill invalid-signature">differs</span>}</td>
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

function Replay({ id, raw }: { id: number; raw: string }) {
  const [edited, setEdited] = useState(raw);
  const replay = useMutation({ mutationFn: (body: string | null) => api.replay({ captureId: id, body }) });
  return (
    <div className="replay">
      <p className="muted small">Replay sends the captured request to the listener again: unchanged with its original headers, or edited and re-signed with the subscription's current key.</p>
      <div className="actions">
        <button type="button" className="primary" onClick={() => replay.mutate(null)} disabled={replay.isPending}>Replay unchanged</button>
        <button type="button" onClick={() => replay.mutate(edited)} disabled={replay.isPending || edited === raw}>Replay edited</button>
      </div>
      <textarea aria-label="Edited body" value={edited} onChange={(e) => setEdited(e.target.value)} rows={10} spellCheck={false} />
      {replay.isError && <ErrorPanel error={replay.error} compact />}
      {replay.data && (
        <p role="status" className="ok small">
          Listener answered {replay.data.status}{replay.data.verdict ? `, verdict ${replay.data.verdict}` : ""}.
        </p>
      )}
    </div>
  );
}
