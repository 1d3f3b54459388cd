/** "Copy link": a `partner-console://` link that opens the app on this resource and connection. */
import { useEffect, useState } from "react";
import { api, copyText } from "../platform";
import { ErrorPanel } from "./ErrorPanel";

export function CopyLinkButton({ screen, id, eventId = null }: { screen: "transactions" | "products"; id: string; eventId?: string | null }) {
  const [state, setState] = useState<"idle" | "copying" | "copied" | "failed">("idle");
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (state !== "copied") return;
    const timer = window.setTimeout(() => setState("idle"), 2000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = () => {
    setState("copying");
    setError(null);
    api.resourceLink(screen, id, eventId).then(
      async (link) => setState((await copyText(link)) ? "copied" : "failed"),
      (raw) => {
        setError(raw);
        setState("idle");
      },
    );
  };
  return (
    <>
      <button type="button" onClick={copy} disabled={state === "copying"} title={eventId ? "A link to this transaction with the marked event" : "A link that opens this in the app"}>
        Copy link
      </button>
      {state === "copied" && <span className="ok small" role="status">Link copied</span>}
      {state === "failed" && <span className="bad small" role="alert">The clipboard refused the link.</span>}
      {error !== null && <ErrorPanel error={error} compact />}
    </>
  );
}
