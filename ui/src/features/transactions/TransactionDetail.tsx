import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, type ResponseStatus, type Transaction } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { CopyLinkButton } from "../../components/CopyLink";
import { RecordView } from "../../components/JsonView";
import { formatTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";
import { isFinal, isLocked, moreFieldsText, respondForm, responseText, RESPONSE_STATUSES, unknownResponseStatus } from "./respondModel";
import { STATUS_KEY } from "../../startup";
import { TransactionNotifications } from "./TransactionNotifications";
import { refusal, useTeam } from "../../lib/team";
import { Notes } from "../notes/Notes";

/** A transaction, its response form and its events; `eventId` (an inspector's "Open" on an event
 * notification) marks that event in the timeline and scrolls it into view. */
export function TransactionDetail({ id, eventId = null }: { id: string; eventId?: string | null }) {
  const marked = useRef<HTMLLIElement>(null);
  const transaction = useQuery({ queryKey: ["transaction", id], queryFn: () => api.getTransaction(id), retry: false });
  const timeline = useQuery({ queryKey: ["events", id], queryFn: () => api.transactionEvents(id), retry: false });

  useEffect(() => {
    marked.current?.scrollIntoView({ block: "center" });
  }, [timeline.data, eventId]);

  if (transaction.isError) {
    return (
      <div className="page">
        <button type="button" className="link" onClick={() => navigate("transactions")}>← Transactions</button>
        <ErrorPanel error={transaction.error} onRetry={() => void transaction.refetch()} />
      </div>
    );
  }
  if (!transaction.data) return <div className="page muted">Loading transaction…</div>;
  const t = transaction.data;
  const events = [...(timeline.data ?? [])].sort((a, b) => (b.sent ?? "").localeCompare(a.sent ?? ""));
  const eventMissing = eventId !== null && timeline.data !== undefined && !timeline.data.some((e) => e.id === eventId);

  return (
    <div className="page">
      <div className="toolbar">
        <button type="button" className="link" onClick={() => navigate("transactions")}>← Transactions</button>
        <h1>Transaction</h1>
        <Id value={t.id} className="mono" />
        {t.status && <span className={`pill ${t.status}`}>{t.status}</span>}
        <span className="muted small">{t.product?.name ?? "—"} · loan <Id value={t.entityRef?.entityId} /> · created {formatTime(t.created)}</span>
        <CopyLinkButton screen="transactions" id={t.id} eventId={eventId} />
      </div>
      <div className="columns three">
        <section className="card">
          <h2>Request</h2>
          {t.document.request != null ? <RecordView value={t.document.request} title="Request" /> : <p className="muted">The service sent no request.</p>}
        </section>
        <section className="card">
          <h2>Response</h2>
          {t.document.response != null ? <RecordView value={t.document.response} title="Response" /> : <p className="muted">No response yet.</p>}
          <RespondFormView transaction={t} />
        </section>
        <section className="card">
          <h2>Events timeline</h2>
          {timeline.isError && <ErrorPanel error={timeline.error} compact onRetry={() => void timeline.refetch()} />}
          {eventMissing && (
            <p className="notice" role="status">Event <code><Id value={eventId} /></code> is not in this transaction's timeline as the service answers it now.</p>
          )}
          <ol className="timeline" aria-label="Events timeline">
            {events.map((e) => (
              <li key={e.id} ref={e.id === eventId ? marked : undefined} className={e.id === eventId ? "marked" : undefined} aria-current={e.id === eventId ? "true" : undefined} data-event-id={e.id}>
                <div className="timeline-head">
                  <strong>{e.text}</strong>
                  <span className="muted small">{formatTime(e.sent)}</span>
                </div>
                <div className="small mono">{e.type}</div>
                <div className="small muted">from {e.from}{e.comments ? ` · ${e.comments}` : ""}</div>
                {e.id === eventId && <div className="small"><span className="pill valid">the notification's event</span> <Id value={e.id} className="mono muted" /></div>}
              </li>
            ))}
            {timeline.data?.length === 0 && <li className="muted">No events.</li>}
          </ol>
        </section>
      </div>
      <TransactionNotifications id={t.id} />
      <Notes kind="transaction" targetId={t.id} />
      <section className="card">
        <h2>As the service sent it</h2>
        <p className="muted small">Every field of the transaction, those the console does not know included, exactly as the service answered.</p>
        <RecordView value={t.document} title="Transaction as sent" />
      </section>
    </div>
  );
}

function RespondFormView({ transaction }: { transaction: Transaction }) {
  const [status, setStatus] = useState<ResponseStatus>("processing");
  const [partnerStatus, setPartnerStatus] = useState(transaction.response?.partnerStatus ?? "");
  const [referenceNumber, setReferenceNumber] = useState(transaction.response?.referenceNumber ?? "");
  const [moreText, setMoreText] = useState(() => moreFieldsText(transaction));
  // A final status waits here for the user's yes (and on production the typed id).
  const [asking, setAsking] = useState<string | null>(null);
  const [typed, setTyped] = useState("");
  const production = useQuery({ queryKey: STATUS_KEY, queryFn: api.appStatus }).data?.active?.environment === "production";
  // Joined to a team workspace, the answer goes through it: a role that may not answer sees why.
  const refused = refusal(useTeam().data, "respond");
  const client = useQueryClient();
  const respond = useMutation({
    mutationFn: ({ text, confirm }: { text: string; confirm: string | null }) => api.respond(respondForm(transaction.id, text, confirm)),
    onSuccess: (updated) => {
      setAsking(null);
      // Its events and the listing are read again by the command's declaration.
      client.setQueryData(["transaction", transaction.id], updated);
    },
  });
  if (isLocked(transaction)) {
    return <p className="notice">A final response locked this transaction; events can still be added by the lender.</p>;
  }
  const unknown = unknownResponseStatus(transaction);
  const built = responseText(status, partnerStatus, referenceNumber, moreText);
  const send = (confirm: string | null) => {
    if ("text" in built) respond.mutate({ text: built.text, confirm });
  };
  return (
    <form
      className="respond-form"
      aria-label="Respond"
      onSubmit={(e) => {
        e.preventDefault();
        if (!("text" in built) || refused !== null) return;
        respond.reset();
        if (isFinal(status)) {
          setTyped("");
          setAsking(built.text);
        } else {
          send(null);
        }
      }}
    >
      <h3>Respond</h3>
      {unknown && (
        <p className="notice" data-testid="unknown-response-status">
          The service answered with response status <code>{unknown}</code>, which the console does not know: it may be final and have locked this transaction, so the service may refuse a new response.
        </p>
      )}
      <label>Status
        <select aria-label="Response status" value={status} onChange={(e) => setStatus(e.target.value as ResponseStatus)}>
          {RESPONSE_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <label>Partner status<input aria-label="Partner status" value={partnerStatus} onChange={(e) => setPartnerStatus(e.target.value)} /></label>
      <label>Reference number<input aria-label="Reference number" value={referenceNumber} onChange={(e) => setReferenceNumber(e.target.value)} /></label>
      <details className="more-fields" open={moreText.trim() !== ""}>
        <summary>Other fields (JSON): respondingParty, loan, resources, errors</summary>
        <textarea
          aria-label="Other response fields"
          className="mono"
          rows={6}
          spellCheck={false}
          value={moreText}
          placeholder={'{"respondingParty": {"name": "Acme Appraisals"}, "loan": {"appraisedValue": 410000}}'}
          onChange={(e) => setMoreText(e.target.value)}
        />
      </details>
      {"error" in built && <p className="bad small" role="alert" data-testid="response-json-error">{built.error}</p>}
      {asking !== null && (
        <div className="confirm-bar" role="alertdialog" aria-label="Send a final response">
          <span>
            <strong>{status}</strong> is final: it locks this transaction's request and response for good (the lender can still add events).
            {production ? " This is a production connection: type the transaction's id to send it." : " Send it?"}
          </span>
          {production && (
            <input aria-label="Transaction id to confirm" className="mono" value={typed} onChange={(e) => setTyped(e.target.value)} placeholder={transaction.id} />
          )}
          <button
            type="button"
            className="primary danger-fill"
            disabled={respond.isPending || (production && typed.trim() !== transaction.id)}
            onClick={() => send(transaction.id)}
          >
            Send {status}
          </button>
          <button type="button" onClick={() => setAsking(null)} disabled={respond.isPending}>Cancel</button>
        </div>
      )}
      {respond.isError && <ErrorPanel error={respond.error} compact />}
      {respond.isSuccess && <p className="ok small" role="status">Response sent.</p>}
      {refused !== null && <p className="small caution" data-testid="respond-refused">{refused}</p>}
      <button type="submit" className="primary" disabled={respond.isPending || !("text" in built) || asking !== null || refused !== null}>Send response</button>
    </form>
  );
}
