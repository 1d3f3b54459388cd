import { toCommandError } from "../platform";

const TITLES: Record<string, string> = {
  notConnected: "Not connected",
  invalidInput: "Not accepted",
  server: "The server refused",
  network: "Could not reach the server",
  keychain: "Keychain problem",
  io: "File problem",
  cancelled: "Cancelled",
  listener: "Listener problem",
  internal: "Something went wrong",
  refused: "Not allowed for your role",
};

/** What failed and what to do: every view shows this instead of going blank. */
export function ErrorPanel({
  error,
  onRetry,
  compact = false,
}: {
  error: unknown;
  onRetry?: () => void;
  compact?: boolean;
}) {
  const failure = toCommandError(error);
  const status = failure.status ? ` (HTTP ${failure.status}${failure.errorCode ? `, ${failure.errorCode}` : ""})` : "";
  return (
    <div className={compact ? "error-panel compact" : "error-panel"} role="alert">
      <strong>{TITLES[failure.kind] ?? "Error"}{status}</strong>
      <p>{failure.message}</p>
      <p className="hint">{failure.hint}</p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
