/**
 * The notifications that never arrived: after the listener was down (the app closed, a laptop
 * asleep, a tunnel dropped) the service gave up after three attempts. The shell works out from
 * the API what each subscription should have received and compares it with the captures
 * (`partner listen missed`, the same check). Nothing arrived for these rows, so they are not
 * captures: each opens its transaction instead. Chosen rows (or all) can be sent again, each
 * rebuilt and signed as the service would have sent it (`partner listen recover`), to this
 * app's listener or any URL, with the receiver's answer shown on its row. Joined to a team
 * workspace, the check and the sending are the workspace's servers' (over the team's captures,
 * with the keys only they hold): the card says "the workspace's listener", and a role that may
 * not recover sees the button disabled with why.
 */
import { useMutation } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, events, type MissedNotification, type Progress, type MissedReport, type RecoveryOutcome, type SubscriptionCheck } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";
import { refusal, useTeam } from "../../lib/team";

/** What the card calls the listener the check compares with: this app's, or the workspace's. */
function listenerName(joined: boolean | undefined): string {
  return joined ? "the workspace's listener" : "this listener";
}

const SINCE_SOURCE: Record<NonNullable<SubscriptionCheck["sinceSource"]>, string> = {
  given: "as asked",
  listenerDown: "when the listener went down",
  firstCapture: "its first capture",
  productChanged: "its product's last change",
};

export function MissedNotifications() {
  const joined = useTeam().data?.joined;
  const [open, setOpen] = useState(false);
  const [includeRecent, setIncludeRecent] = useState(false);
  const [allSubscriptions, setAllSubscriptions] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const find = useMutation({
    mutationFn: () => api.findMissed({ subscriptionId: null, since: null, includeRecent, allSubscriptions }),
    onMutate: () => setProgress(null),
  });
  const running = find.isPending;
  useEffect(() => (running ? events.onMissedProgress(setProgress) : undefined), [running]);
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="missed">
        <span className="summary-title">Missed</span>
        <span className="muted small">· what the service sent while {joined ? "the workspace's listener" : "the listener"} was down, worked out from the API</span>
        {find.data && <span className={`pill ${find.data.missed.length ? "failed" : "valid"}`} data-testid="missed-count">{find.data.missed.length} missed</span>}
      </summary>
      <div className="settings-body checks-body">
        <div className="actions">
          <button type="button" className="primary" data-testid="missed-find" disabled={running} onClick={() => find.mutate()}>
            {running ? "Looking…" : find.data ? "Look again" : "Look for missed notifications"}
          </button>
          {running && <button type="button" onClick={() => void api.cancelMissed()}>Cancel</button>}
          <label className="check-line">
            <input type="checkbox" checked={includeRecent} onChange={(e) => setIncludeRecent(e.target.checked)} disabled={running} />
            <span>Include the last two minutes (the service may still be retrying them)</span>
          </label>
          <label className="check-line">
            <input type="checkbox" checked={allSubscriptions} onChange={(e) => setAllSubscriptions(e.target.checked)} disabled={running} />
            <span>Also subscriptions {listenerName(joined)} never received anything of</span>
          </label>
        </div>
        {running && (
          <p className="muted small" role="status" data-testid="missed-progress">
            {progress ? `${progress.phase ?? "Checking"}: ${progress.done}${progress.total !== null ? ` of ${progress.total}` : ""}` : "Starting…"}
          </p>
        )}
        {find.isError && <ErrorPanel error={find.error} compact />}
        {find.data && !running && <MissedReportView report={find.data} joined={joined} />}
      </div>
    </details>
  );
}

/** The key a notification is known by: what the service repeats on every attempt. */
function missedKey(m: { subscriptionId: string; resourceType: string; eventId: string }): string {
  return `${m.subscriptionId}/${m.resourceType}/${m.eventId}`;
}

function RecoveryCell({ outcome }: { outcome: RecoveryOutcome | undefined }) {
  if (!outcome) return null;
  if (outcome.acknowledged) {
    return <span className="pill valid" title={outcome.url}>sent again · {outcome.status} · {outcome.elapsedMs} ms</span>;
  }
  const why = outcome.error ?? `answered ${outcome.status}`;
  return <span className="pill failed" title={`${outcome.url}: ${why}`}>not taken · {why}</span>;
}

function MissedReportView({ report, joined }: { report: MissedReport; joined: boolean | undefined }) {
  const why = refusal(useTeam().data, "recover");
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [target, setTarget] = useState("");
  const resend = useMutation({
    mutationFn: (notifications: MissedNotification[]) => api.recoverMissed({ notifications, target: target.trim() || null }),
    // The recovered ones are in their transactions' Notifications now: the command's
    // declaration has them read again.
  });
  const outcomes = new Map((resend.data?.outcomes ?? []).map((o) => [missedKey(o), o]));
  const chosen = report.missed.filter((m) => selected.has(missedKey(m)));
  const toggle = (key: string, on: boolean) =>
    setSelected((before) => {
      const next = new Set(before);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });
  const allChosen = report.missed.length > 0 && chosen.length === report.missed.length;
  return (
    <div data-testid="missed-report">
      <p className="small">
        {report.cancelled ? "Cancelled part-way: " : ""}
        {report.missed.length === 0 ? "Nothing missed" : `${report.missed.length} notification${report.missed.length === 1 ? "" : "s"} never arrived`}
        <span className="muted"> · up to {formatTime(report.until)} · {report.transactionsRead} transactions read, {report.transactionsChecked} checked</span>
      </p>
      <table className="grid compact" aria-label="Subscriptions checked">
        <thead>
          <tr><th>Subscription</th><th>Since</th><th>Expected</th><th>Missed</th><th>Not yet due</th></tr>
        </thead>
        <tbody>
          {report.subscriptions.map((s) => (
            <tr key={s.subscriptionId} data-subscription-id={s.subscriptionId}>
              <td className="mono"><Id value={s.subscriptionId} compact /> <span className="muted">{s.resource.replace("urn:svc:partner:", "")}</span></td>
              {s.since ? (
                <>
                  <td>{formatTime(s.since)} <span className="muted small">({s.sinceSource ? SINCE_SOURCE[s.sinceSource] : ""})</span></td>
                  <td>{s.expected}</td>
                  <td className={s.missed ? "bad" : undefined}>{s.missed}</td>
                  <td>{s.notYetDue}</td>
                </>
              ) : (
                <td colSpan={4} className="muted">
                  not checked: {s.notCheckedBecause === "neverCaptured" ? `${listenerName(joined)} never received anything of it (it may point elsewhere)` : "no time to start from"}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {report.missed.length > 0 && (
        <form
          className="actions recover-bar"
          aria-label="Send again"
          onSubmit={(e) => {
            e.preventDefault();
            resend.mutate(chosen.length ? chosen : report.missed);
          }}
        >
          <label className="inline">
            <span>Send to</span>
            <input
              className="mono"
              value={target}
              onChange={(e) => setTarget(e.target.value)}
              placeholder={joined ? "the workspace's webhook endpoint, or http://…" : "this app's listener, or http://…"}
              aria-label="Send again to"
              disabled={resend.isPending}
            />
          </label>
          <button type="submit" className="primary" data-testid="missed-recover" disabled={resend.isPending || why !== null} title={why ?? undefined}>
            {resend.isPending ? "Sending…" : chosen.length ? `Send ${chosen.length} chosen again` : `Send all ${report.missed.length} again`}
          </button>
          <span className="muted small">{why ?? `rebuilt and signed as the service would have sent them${joined ? " by the workspace's servers" : ""}, marked Svc-Replay: recovery`}</span>
        </form>
      )}
      {resend.isError && <ErrorPanel error={resend.error} compact />}
      {resend.data && (
        <p className="small" role="status" data-testid="missed-recover-result">
          {resend.data.cancelled ? "Stopped part-way: " : ""}
          {resend.data.outcomes.filter((o) => o.acknowledged).length} of {resend.data.outcomes.length} taken by {resend.data.outcomes[0]?.url ?? "the receiver"}
          {target.trim() === "" ? " · look again to see them arrived" : ""}
        </p>
      )}
      {report.missed.length > 0 && (
        <table className="grid compact missed-rows" aria-label="Missed notifications">
          <thead>
            <tr>
              <th>
                <input
                  type="checkbox"
                  aria-label="Choose every missed notification"
                  checked={allChosen}
                  onChange={(e) => setSelected(e.target.checked ? new Set(report.missed.map(missedKey)) : new Set())}
                />
              </th>
              <th>Would have been sent</th><th></th><th>Event</th><th>Resource</th><th>Product</th><th>Event id</th><th></th>
            </tr>
          </thead>
          <tbody>
            {report.missed.map((m) => (
              <tr key={missedKey(m)} data-missed-event-id={m.eventId} data-subscription-id={m.subscriptionId} data-transaction-id={m.transactionId}>
                <td>
                  <input type="checkbox" aria-label={`Choose ${m.eventId}`} checked={selected.has(missedKey(m))} onChange={(e) => toggle(missedKey(m), e.target.checked)} />
                </td>
                <td className="mono">{formatTime(m.sentAt)}</td>
                <td>{outcomes.has(missedKey(m)) ? <RecoveryCell outcome={outcomes.get(missedKey(m))} /> : <span className="pill failed">missed</span>}</td>
                <td>{m.eventType}</td>
                <td className="mono" title={m.resourceRef}>{m.resourceType.replace("urn:svc:partner:", "")} <Id value={m.resourceId} compact /></td>
                <td>{m.productName}</td>
                <td className="mono"><Id value={m.eventId} compact /></td>
                <td><button type="button" className="link" onClick={() => navigate("transactions", m.transactionId)}>Open</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
