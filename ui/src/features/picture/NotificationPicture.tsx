import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, type NotificationPicture as Picture, type PictureOf } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { FileJobStatus, useFileJob } from "../../components/FileJob";
import { isSettled, pictureKey } from "./pictureModel";
import "./picture.css";

/**
 * The life of a notification, drawn: the lender's act, each of the service's attempts through
 * the network to the listener, the signature check, the answers, waits, forwards, replays and
 * recoveries. The shell draws the SVG from what the console recorded (one drawing for the window
 * and the exported files); this panel shows it and exports it for slides.
 *
 * `live` reads it again every 1.5 s until the notification is settled (the Demo, as it plays).
 */
export function NotificationPicture({
  of,
  live = false,
  heading = "The life of this notification",
  generation = 0,
}: {
  of: PictureOf;
  live?: boolean;
  heading?: string;
  /** Bumped when something new may have happened (the Demo's next step): read it afresh. */
  generation?: number;
}) {
  const picture = useQuery({
    queryKey: ["notification-picture", pictureKey(of), generation],
    queryFn: () => api.notificationPicture(of),
    retry: false,
    staleTime: 0,
    refetchInterval: (query) => (live && !isSettled(query.state.data) ? 1500 : false),
    // The Demo's next step reads the same picture afresh: it stays until the new one is drawn
    // (another notification's never stands in for this one's).
    placeholderData: (previous, previousQuery) => (previousQuery?.queryKey[1] === pictureKey(of) ? previous : undefined),
  });
  const saving = useFileJob("picture");
  const [enlarged, setEnlarged] = useState(false);
  // Escape returns from the enlarged picture wherever the focus is.
  useEffect(() => {
    if (!enlarged) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setEnlarged(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [enlarged]);
  const drawn: Picture | null | undefined = picture.data;
  return (
    <section
      className={enlarged ? "picture-panel enlarged" : "picture-panel"}
      aria-label="Notification picture"
      data-testid="notification-picture"
      role={enlarged ? "dialog" : undefined}
      aria-modal={enlarged ? true : undefined}
    >
      <div className="toolbar">
        <h3>{heading}</h3>
        <button type="button" data-testid="picture-enlarge" aria-pressed={enlarged} disabled={!drawn} onClick={() => setEnlarged((e) => !e)} title="The picture over the whole window (Escape returns)">
          {enlarged ? "Back (Esc)" : "Enlarge"}
        </button>
        <button type="button" onClick={() => void picture.refetch()} disabled={picture.isFetching} data-testid="picture-refresh">
          {picture.isFetching ? "Reading…" : "Refresh"}
        </button>
        <button type="button" data-testid="picture-export-svg" disabled={!drawn || saving.running} onClick={() => saving.run(() => api.exportNotificationPicture(of, "svg"))} title="Fixed colours on white, for slides and documents">
          Export SVG…
        </button>
        <button type="button" data-testid="picture-export-png" disabled={!drawn || saving.running} onClick={() => saving.run(() => api.exportNotificationPicture(of, "png"))} title="Twice the picture's size, sharp on a slide">
          Export PNG…
        </button>
        <FileJobStatus job={saving} unit="picture" verb="saved" />
      </div>
      {picture.isError && <ErrorPanel error={picture.error} compact onRetry={() => void picture.refetch()} />}
      {drawn === null && (
        <p className="muted" data-testid="picture-none">
          {live ? "Waiting for the service to send the notification…" : "The console knows nothing of this notification yet: nothing was captured and the service recorded nothing."}
        </p>
      )}
      {drawn && (
        // The SVG is the shell's own drawing, every text in it escaped there (`notification_diagram.rs`).
        <div className="picture-frame" data-testid="picture-svg" data-outcome={drawn.story.outcome} dangerouslySetInnerHTML={{ __html: drawn.svg }} />
      )}
      {picture.isPending && <p className="muted">Drawing…</p>}
    </section>
  );
}
