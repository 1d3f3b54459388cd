import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, type ReceiverExchange, type ReceiverReport, type ReceiverRule, type RuleOutcome, type Subscription } from "../platform";
import { ErrorPanel } from "./ErrorPanel";

const OUTCOME_MARK: Record<RuleOutcome, string> = { pass: "✓", fail: "✗", warn: "!", skipped: "–" };
const OUTCOME_WORD: Record<RuleOutcome, string> = { pass: "pass", fail: "fail", warn: "warn", skipped: "skipped" };

/** Plain `http://` to this machine: development, where the check may warn instead of failing. */
export function isLoopbackHttp(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Checks a subscription's receiver as the service would meet it: a handful of marked
 * notifications (signed right, redelivered, and four that must be refused), the TLS handshake
 * and the certificate, each rule of the spec with its evidence. The same check as
 * `partner check-receiver`; the key never leaves the shell.
 */
export function ReceiverCheck({ productId, subscription, onClose }: { productId: string; subscription: Subscription; onClose: () => void }) {
  const [allowHttp, setAllowHttp] = useState(isLoopbackHttp(subscription.url ?? ""));
  const check = useMutation({
    mutationFn: () => api.checkReceiver({ productId, subscriptionId: subscription.subscriptionId, allowHttp }),
  });
  const cancel = () => void api.cancelReceiverCheck(subscription.subscriptionId);
  return (
    <section className="card form-card receiver-check" aria-label="Check receiver" data-testid={`receiver-check-${subscription.subscriptionId}`}>
      <h3>Check the receiver at <span className="mono">{subscription.url}</span></h3>
      <p className="muted small">
        Sends six notifications marked <code>conformance-check</code> with made-up ids, signed with this subscription&apos;s key:
        one signed right, its redelivery, and four the receiver must refuse. Nothing real is sent.
      </p>
      <label className="check-line">
        <input type="checkbox" checked={allowHttp} onChange={(e) => setAllowHttp(e.target.checked)} disabled={check.isPending} />
        <span>Allow plain <code>http://</code> (development on this machine): a warning instead of a failure</span>
      </label>
      <div className="actions">
        <button type="button" className="primary" data-testid="receiver-check-run" disabled={check.isPending} onClick={() => check.mutate()}>
          {check.isPending ? "Checking…" : check.data ? "Check again" : "Check"}
        </button>
        {check.isPending && <button type="button" onClick={cancel}>Cancel</button>}
        <button type="button" onClick={() => { if (check.isPending) cancel(); onClose(); }}>Close</button>
      </div>
      {check.isError && <ErrorPanel error={check.error} compact />}
      {check.data && !check.isPending && <ReportView report={check.data} />}
    </section>
  );
}

function ReportView({ report }: { report: ReceiverReport }) {
  const failed = report.rules.filter((r) => r.outcome === "fail").length;
  const warned = report.rules.filter((r) => r.outcome === "warn").length;
  return (
    <div className="receiver-report" data-testid="receiver-report" data-failed={failed}>
      <p className={failed ? "bad" : "ok"} role="status">
        {failed ? `${failed} of ${report.rules.length} rules failed` : `Every rule passed${warned ? `, ${warned} with a warning` : ""}`}
        <span className="muted small"> · {report.requestsSent} requests · {report.resource.replace("urn:svc:partner:", "")} notifications · {report.timeoutMs / 1000} s to answer</span>
      </p>
      <ul className="rule-list">
        {report.rules.map((rule) => <RuleView key={rule.id} rule={rule} />)}
      </ul>
    </div>
  );
}

function RuleView({ rule }: { rule: ReceiverRule }) {
  const evidence = rule.evidence ?? [];
  return (
    <li className={`rule ${rule.outcome}`} data-rule={rule.id} data-outcome={rule.outcome}>
      <div className="rule-head">
        <span className={`pill rule-${rule.outcome}`} aria-label={OUTCOME_WORD[rule.outcome]}>{OUTCOME_MARK[rule.outcome]} {OUTCOME_WORD[rule.outcome]}</span>
        <strong>{rule.title}</strong>
      </div>
      <p className="small">{rule.summary}</p>
      {rule.tlsVersions && <p className="muted small">Accepted: {rule.tlsVersions.length ? rule.tlsVersions.join(", ") : "none of TLS 1.2 and 1.3"}</p>}
      {evidence.length > 0 && (
        <details>
          <summary className="small">{evidence.length === 1 ? "1 request" : `${evidence.length} requests`}</summary>
          <table className="grid compact evidence">
            <tbody>
              {evidence.map((e) => <ExchangeRow key={`${e.sent}/${e.eventId}`} exchange={e} />)}
            </tbody>
          </table>
        </details>
      )}
    </li>
  );
}

function ExchangeRow({ exchange: e }: { exchange: ReceiverExchange }) {
  const answer = e.status !== undefined ? `${e.status}` : `no answer: ${e.error ?? "unknown"}`;
  return (
    <tr>
      <td>{e.sent}</td>
      <td className="mono">{answer}</td>
      <td className="mono">{e.durationMs} ms</td>
      <td className="mono"><span className="cell-clip wide" title={e.bodyExcerpt ?? ""}>{e.bodyExcerpt ?? ""}</span></td>
    </tr>
  );
}
