/**
 * The banners above every screen: things the user must act on or be told once, each one line
 * with its action on the right, so a few of them still leave the screen usable at 960x600.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, toCommandError, type AppStatus, type ListenerView } from "../platform";
import { showChangedStatus, showStatus } from "../startup";
import { KEYCHAIN_CONSEQUENCE, suggestedMove } from "./shellModel";

export function ShellBanners({ status }: { status: AppStatus }) {
  const listenerProblem = !status.listener.running && status.listener.problem !== null;
  if (status.keychain.available && status.notices.length === 0 && !listenerProblem) return null;
  return (
    <div className="banners">
      {!status.keychain.available && <KeychainBanner message={status.keychain.message} />}
      <Notices notices={status.notices} />
      {listenerProblem && <ListenerProblemBanner listener={status.listener} />}
    </div>
  );
}

function KeychainBanner({ message }: { message: string | null }) {
  const client = useQueryClient();
  const retry = useMutation({
    mutationFn: api.retryKeychain,
    // The keys may be readable now: the key badges and the listener's view are asked again.
    onSuccess: (next) => showChangedStatus(client, next),
  });
  const stillLocked = retry.isSuccess && !retry.data.keychain.available;
  return (
    <div className="banner warn" role="alert" data-testid="keychain-banner">
      <div className="banner-text">
        <strong>The OS keychain is not available.</strong> {message && <span>{message} </span>}
        <span className="muted">{KEYCHAIN_CONSEQUENCE}</span>
        {stillLocked && <span className="field-error"> It still does not answer: unlock it, then try again.</span>}
        {retry.isError && <span className="field-error"> {toCommandError(retry.error).message}</span>}
      </div>
      <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending}>
        {retry.isPending ? "Trying…" : "Try again"}
      </button>
    </div>
  );
}

function Notices({ notices }: { notices: string[] }) {
  const client = useQueryClient();
  // Notices are dismissed by index: one at a time, so no index refers to a list already shifted.
  const dismiss = useMutation({ mutationFn: api.dismissNotice, onSuccess: (next) => showStatus(client, next) });
  return (
    <>
      {notices.map((notice, index) => (
        <div className="banner info" role="status" data-testid="notice" key={`${index}:${notice}`}>
          <div className="banner-text">{notice}</div>
          <button type="button" aria-label={`Dismiss: ${notice}`} onClick={() => dismiss.mutate(index)} disabled={dismiss.isPending}>
            Dismiss
          </button>
        </div>
      ))}
      {dismiss.isError && (
        <div className="banner bad" role="alert">
          <div className="banner-text">{toCommandError(dismiss.error).message}</div>
        </div>
      )}
    </>
  );
}

function ListenerProblemBanner({ listener }: { listener: AppStatus["listener"] }) {
  const client = useQueryClient();
  // The path to keep comes from the listener's own view (the brief has only its URL, and none
  // while it is down).
  const view = useQuery({ queryKey: ["listener"], queryFn: api.listenerStatus, enabled: listener.suggestedAddress !== null });
  const move = suggestedMove(listener, view.data?.path ?? null);
  const use = useMutation({
    mutationFn: api.setListenerAddress,
    onSuccess: (next: ListenerView) => {
      // The status is read again by the command's declaration.
      client.setQueryData(["listener"], next);
    },
  });
  const problem = listener.problem;
  return (
    <div className="banner bad" role="alert" data-testid="listener-problem">
      <div className="banner-text">
        <strong>Webhook listener not running.</strong> {problem?.message}{" "}
        <span className="muted">{problem?.hint}</span>
        {use.isError && <span className="field-error"> {toCommandError(use.error).message}</span>}
      </div>
      {move && (
        <button type="button" className="primary" onClick={() => use.mutate(move)} disabled={use.isPending}>
          Use {move.address}
        </button>
      )}
      <a href="#/webhooks" className="small">Listener settings</a>
    </div>
  );
}
