/**
 * Desktop notifications, each kind off until the user turns it on: a notification that failed
 * verification (a burst is told once, then summed every 10 s), a receiver check with a rule
 * failed, missed notifications found. The shell shows them through the desktop's notification
 * service; no notice holds a header, a body or a key.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type DesktopNotices as Notices } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";

const KINDS: Array<{ key: keyof Notices; label: string }> = [
  { key: "failedVerification", label: "A notification fails verification" },
  { key: "receiverCheckFailed", label: "A receiver check finds a rule failed" },
  { key: "missedFound", label: "The missed check finds notifications that never arrived" },
];

/** "off", or how many of the kinds are on. */
export function noticesSummary(notices: Notices | undefined): string {
  if (!notices) return "";
  const on = KINDS.filter((k) => notices[k.key]).length;
  return on === 0 ? "off" : on === KINDS.length ? "all on" : `${on} of ${KINDS.length} on`;
}

export function DesktopNotices() {
  const [open, setOpen] = useState(false);
  const client = useQueryClient();
  const notices = useQuery({ queryKey: ["desktop-notices"], queryFn: api.desktopNotices });
  const save = useMutation({
    mutationFn: api.setDesktopNotices,
    onSuccess: (saved) => client.setQueryData(["desktop-notices"], saved),
  });
  const current = notices.data;
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="desktop-notices">
        <span className="summary-title">Desktop notifications</span>
        <span className="muted small" data-testid="desktop-notices-summary">{noticesSummary(current)}</span>
      </summary>
      <div className="settings-body">
        <p className="muted small">Told in the desktop&apos;s notification area, so you hear of it while the console is in the background.</p>
        {current && (
          <div role="group" aria-label="Desktop notifications">
            {KINDS.map((kind) => (
              <label key={kind.key} className="check-line">
                <input
                  type="checkbox"
                  data-testid={`notice-${kind.key}`}
                  checked={current[kind.key]}
                  disabled={save.isPending}
                  onChange={(e) => save.mutate({ ...current, [kind.key]: e.target.checked })}
                />
                <span>{kind.label}</span>
              </label>
            ))}
          </div>
        )}
        {notices.isError && <ErrorPanel error={notices.error} compact onRetry={() => void notices.refetch()} />}
        {save.isError && <ErrorPanel error={save.error} compact />}
      </div>
    </details>
  );
}
