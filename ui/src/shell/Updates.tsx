/**
 * Updates: a banner above every screen when a newer version is found (at start, or by "Check
 * now"), and the "About and updates" dialog (from the Display menu): the running version, the
 * setting, "Check now", and the offer: what is new, that installing restarts the app and stops
 * its webhook listener for a moment, and what a .deb or .rpm needs (an administrator). Nothing
 * is installed without "Install and restart".
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { api, events, toCommandError, type UpdateView } from "../platform";
import { installedFrom, OPEN_UPDATES_EVENT, statusLine, updateBanner } from "./updateModel";

export const UPDATE_KEY = ["update"] as const;

/** The shell's update state, kept current by its `update` events. */
export function useUpdateView() {
  const client = useQueryClient();
  const query = useQuery({ queryKey: UPDATE_KEY, queryFn: api.updateState, staleTime: Infinity });
  const { refetch } = query;
  useEffect(
    () =>
      events.onUpdate(
        (view) => client.setQueryData(UPDATE_KEY, view),
        () => void refetch(),
      ),
    [client, refetch],
  );
  return query;
}

/** The banner and, when asked for, the dialog. */
export function Updates() {
  const view = useUpdateView().data;
  const [open, setOpen] = useState(false);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const onOpen = () => {
      returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      setOpen(true);
    };
    window.addEventListener(OPEN_UPDATES_EVENT, onOpen);
    return () => window.removeEventListener(OPEN_UPDATES_EVENT, onOpen);
  }, []);
  const banner = updateBanner(view, dismissed);
  const close = () => {
    setOpen(false);
    returnTo.current?.focus();
  };
  return (
    <>
      {banner && view && (
        <div className="banners update-banners">
          <div className={`banner ${banner.tone}`} role={banner.tone === "bad" ? "alert" : "status"} data-testid="update-banner">
            <div className="banner-text">{banner.text}</div>
            {view.phase !== "installing" && (
              <>
                <button type="button" className="primary" onClick={() => setOpen(true)}>
                  {view.phase === "failed" ? "Details" : "What's new…"}
                </button>
                <button type="button" onClick={() => setDismissed(view.phase === "failed" ? `failed:${view.offer?.version ?? ""}` : (view.offer?.version ?? null))}>
                  Later
                </button>
              </>
            )}
          </div>
        </div>
      )}
      {open && view && <UpdatesDialog view={view} onClose={close} />}
    </>
  );
}

export function UpdatesDialog({ view, onClose }: { view: UpdateView; onClose: () => void }) {
  const client = useQueryClient();
  const titleId = useId();
  const dialog = useRef<HTMLDivElement>(null);
  const show = (next: UpdateView) => client.setQueryData(UPDATE_KEY, next);
  const check = useMutation({ mutationFn: api.checkForUpdate, onSuccess: show });
  const install = useMutation({ mutationFn: api.installUpdate, onSuccess: show });
  const setting = useMutation({ mutationFn: api.setUpdateChecks, onSuccess: show });
  const error = check.error ?? install.error ?? setting.error;

  useEffect(() => {
    dialog.current?.querySelector<HTMLElement>("[data-autofocus]")?.focus();
  }, []);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onClose();
    } else if (e.key === "Tab") {
      // Focus stays in the dialog.
      const items = Array.from(dialog.current?.querySelectorAll<HTMLElement>("button:not(:disabled), input:not(:disabled)") ?? []);
      if (items.length === 0) return;
      const first = items[0];
      const last = items[items.length - 1];
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last?.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first?.focus();
      }
    }
  };

  const offer = view.offer;
  const managed = view.off === "managed";
  const busy = view.phase === "checking" || view.phase === "installing";
  const from = installedFrom(view);
  return (
    <div className="palette-backdrop" onMouseDown={(e) => e.target === e.currentTarget && !busy && onClose()}>
      <div ref={dialog} className="palette updates-dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="updates-dialog" onKeyDown={onKeyDown}>
        <h2 id={titleId} className="updates-title">
          Partner Console {view.current}
          {from && <span className="muted small"> · {from}</span>}
        </h2>
        <p className={`updates-status ${view.phase}`} role="status" data-testid="update-status">
          {statusLine(view)}
        </p>
        {view.phase === "failed" && view.problem && <p className="muted small">{view.problem.hint}</p>}

        {offer && (view.phase === "available" || view.phase === "installing" || view.phase === "failed") && (
          <section className="update-offer" aria-label={`What is new in ${offer.version}`} data-testid="update-offer">
            <h3>
              What's new in {offer.version}
              {offer.date && <span className="muted small"> · {new Date(offer.date).toLocaleDateString()}</span>}
            </h3>
            <div className="update-notes">{offer.notes ?? "The release has no notes."}</div>
            <p className="update-note restart" data-testid="update-restart-note">
              {offer.restartNote}
            </p>
            {offer.adminNote && (
              <p className="update-note admin" data-testid="update-admin-note">
                {offer.adminNote}
              </p>
            )}
            {!offer.installable && <p className="update-note">This copy cannot install it itself: download it from the release page.</p>}
          </section>
        )}

        <label className="inline updates-setting">
          <input
            type="checkbox"
            checked={view.settings.checkAtStart && !managed}
            disabled={managed || setting.isPending}
            onChange={(e) => setting.mutate(e.target.checked)}
          />
          Look for a newer version when Partner Console starts
        </label>
        {view.offNote && view.off !== "setting" && <p className="muted small">{view.offNote}</p>}
        {error && <p className="field-error">{toCommandError(error).message}</p>}

        <div className="updates-actions">
          {offer && offer.installable && (view.phase === "available" || view.phase === "failed") && (
            <button type="button" className="primary" data-autofocus data-testid="install-update" onClick={() => install.mutate()} disabled={install.isPending}>
              {view.phase === "failed" ? "Try again" : `Install ${offer.version} and restart`}
            </button>
          )}
          <button type="button" onClick={() => check.mutate()} disabled={managed || busy} data-autofocus={offer ? undefined : true}>
            {view.phase === "checking" ? "Checking…" : "Check now"}
          </button>
          <span className="spacer" />
          <button type="button" onClick={onClose} disabled={view.phase === "installing"}>
            {offer && view.phase === "available" ? "Later" : "Close"}
          </button>
        </div>
      </div>
    </div>
  );
}
