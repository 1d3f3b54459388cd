/**
 * "Did they get it?": every notification the console knows about for a transaction (the
 * service's attempts on a sandbox, what the listener received and answered, forwards, replays
 * and recoveries), one timeline per notification, each capture opening in the inspector. Built
 * by the shell from what the console already records (`transaction_notifications`). "Save
 * evidence…" writes the transaction, its events and this timeline as one JSON file.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, type NotificationStory, type StoryEntry, type StoryStep } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { FileJobStatus, useFileJob } from "../../components/FileJob";
import { formatTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";
import { NotificationPicture } from "../picture/NotificationPicture";

const STEP: Record<StoryStep, string> = {
  serviceAttempt: "service sent",
  serviceGaveUp: "service gave up",
  captured: "listener received",
  replayCaptured: "listener received a replay",
  recoveryCaptured: "listener received a recovery",
  forwarded: "forwarded",
  replayed: "sent again",
};

const OUTCOME_PILL: Record<string, string> = {
  delivered: "valid",
  acknowledged: "valid",
  recovered: "valid",
  discarded: "failed",
  refused: "failed",
  pending: "processing",
  replayed: "muted-pill",
};

/** What an entry came to, in a few words. */
function entryText(entry: StoryEntry): string {
  const parts: string[] = [];
  if (entry.step === "serviceAttempt" && entry.attempt !== null) parts.push(`attempt ${entry.attempt}`);
  if (entry.step === "captured" && entry.attempt !== null) parts.push(`attempt ${entry.attempt}`);
  if (entry.verdict) parts.push(entry.verdict);
  if (entry.status !== null) parts.push(entry.step === "serviceAttempt" || entry.step === "captured" || entry.step.endsWith("Captured") ? `answered ${entry.status}` : `got ${entry.status}`);
  if (entry.error) parts.push(entry.error);
  if (entry.elapsedMs !== null && entry.step !== "serviceGaveUp") parts.push(`${entry.elapsedMs} ms`);
  return parts.join(" · ");
}

export function TransactionNotifications({ id }: { id: string }) {
  // Read again whenever the section is shown: notifications arrive, and are recovered or sent
  // again, while the user is elsewhere.
  const timeline = useQuery({ queryKey: ["transaction-notifications", id], queryFn: () => api.transactionNotifications(id), retry: false, staleTime: 0 });
  const data = timeline.data;
  const saving = useFileJob("transaction-evidence");
  return (
    <section className="card" aria-label="Notifications">
      <div className="toolbar">
        <h2>Notifications</h2>
        <span className="muted small">did they get it? · every notification the console knows about for this transaction</span>
        <button type="button" onClick={() => void timeline.refetch()} disabled={timeline.isFetching} data-testid="notifications-refresh">
          {timeline.isFetching ? "Reading…" : "Refresh"}
        </button>
        <button type="button" data-testid="transaction-evidence" disabled={saving.running} onClick={() => saving.run(() => api.saveTransactionEvidence(id))} title="The transaction and its events as the service sent them, and this timeline, in one JSON file for a support ticket">
          Save evidence…
        </button>
        <FileJobStatus job={saving} unit="notifications" verb="saved" />
      </div>
      {timeline.isError && <ErrorPanel error={timeline.error} compact onRetry={() => void timeline.refetch()} />}
      {data && (
        <>
          {[data.deliveriesNote, data.capturesNote].filter((n): n is string => !!n).map((note) => (
            <p key={note} className="muted small">{note}</p>
          ))}
          {data.notifications.some((n) => n.entries.some((e) => e.step.startsWith("service"))) && (
            <p className="muted small">The service's steps carry its clock, the console's this machine's: each attempt is followed by what the listener received of it.</p>
          )}
          {data.capturesCapped && <p className="muted small">More captures name this transaction than are read: the newest are shown.</p>}
          {data.notifications.length === 0 ? (
            <p className="muted" data-testid="notifications-none">No notification about this transaction is known: none was captured{data.deliveriesNote ? "" : " and the service recorded none"}.</p>
          ) : (
            <ol className="stories" aria-label="Notifications of this transaction">
              {data.notifications.map((story) => (
                <Story key={`${story.subscriptionId}/${story.resourceType}/${story.eventId}`} story={story} />
              ))}
            </ol>
          )}
        </>
      )}
      {!data && !timeline.isError && <p className="muted">Reading…</p>}
    </section>
  );
}

function Story({ story }: { story: NotificationStory }) {
  const [drawn, setDrawn] = useState(false);
  return (
    <li className="story" data-story-event-id={story.eventId} data-story-subscription-id={story.subscriptionId} data-story-resource={story.resourceType} data-outcome={story.outcome}>
      <div className="story-head">
        <span className={`pill ${OUTCOME_PILL[story.outcome] ?? "muted-pill"}`}>{story.outcome}</span>
        {story.outcome !== "recovered" && story.entries.some((e) => e.step === "recoveryCaptured") && <span className="pill valid">recovered</span>}
        <strong>{story.eventType || "—"}</strong>
        <span className="mono">{story.resourceType.replace("urn:svc:partner:", "")}</span>
        <span className="muted small mono">event <Id value={story.eventId} compact /></span>
        <span className="muted small mono">subscription <Id value={story.subscriptionId} compact /></span>
        <button type="button" className="link small" aria-expanded={drawn} data-testid="story-picture" onClick={() => setDrawn((d) => !d)}>
          {drawn ? "Hide picture" : "Picture"}
        </button>
      </div>
      {drawn && <NotificationPicture of={{ of: "notification", subscriptionId: story.subscriptionId, resourceType: story.resourceType, eventId: story.eventId }} />}
      <ol className="story-steps">
        {story.entries.map((entry, index) => (
          <li key={index} data-step={entry.step} className={entry.step.startsWith("service") ? "from-service" : undefined}>
            <span className="mono small">{formatTime(entry.at)}</span>
            <span className="story-step">{STEP[entry.step]}</span>
            <span className="small">{entryText(entry)}</span>
            {entry.url && entry.step !== "captured" && <span className="muted small mono story-url" title={entry.url}>{entry.url}</span>}
            {entry.captureId !== null && (
              <button type="button" className="link small" onClick={() => navigate("webhooks", String(entry.captureId))}>
                capture #{entry.captureId}
              </button>
            )}
          </li>
        ))}
      </ol>
    </li>
  );
}
