import { useState } from "react";
import { copyText, type ShownOnceKey } from "../../platform";
import { Secret } from "../../components/Secret";
import { useStageMode } from "../../lib/useDisplay";

/** The new key, shown this once with a copy button; "Done" drops it from the page for good. */
export function ShownOnce({ shown, onDone }: { shown: ShownOnceKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const stage = useStageMode();
  return (
    <div className="card shown-once" role="dialog" aria-label="New signing key">
      <h3>New signing key — shown once</h3>
      <p className="muted small">
        Kept in the OS keychain for the listener to verify with.
        {shown.previousStillVerifies ? " The previous key still verifies until you retire it." : ""}
      </p>
      <code className="key" data-testid="shown-key"><Secret value={shown.key} /></code>
      {stage && <p className="muted small">Copy still copies it; turn stage mode off to see it.</p>}
      <div className="actions">
        <button type="button" onClick={() => void copyText(shown.key).then(setCopied)}>{copied ? "Copied" : "Copy"}</button>
        <button type="button" className="primary" onClick={onDone} autoFocus>Done</button>
      </div>
    </div>
  );
}
