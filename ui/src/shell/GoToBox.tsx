/** The top bar's "Go to" box: paste an id or a link, Enter opens it. */
import { useEffect, useState, type FormEvent } from "react";
import { followGoTo } from "./goTo";
import { SHORTCUTS } from "../lib/shortcuts";

export function GoToBox() {
  const [text, setText] = useState("");
  // The words of the last attempt, and where the user was when they were said.
  const [said, setSaid] = useState<{ text: string; at: string } | null>(null);
  const message = said?.text ?? null;
  const setMessage = (text: string | null) => setSaid(text === null ? null : { text, at: window.location.hash });
  const [pending, setPending] = useState(false);
  // The message answers the last attempt: moving elsewhere drops it.
  useEffect(() => {
    const drop = () => setSaid((s) => (s && s.at !== window.location.hash ? null : s));
    window.addEventListener("hashchange", drop);
    return () => window.removeEventListener("hashchange", drop);
  }, []);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setPending(true);
    setMessage(null);
    void followGoTo(text).then((answer) => {
      setPending(false);
      setMessage(answer);
      if (answer === null) setText("");
    });
  };
  return (
    <form className="goto-box" role="search" aria-label="Go to" onSubmit={onSubmit}>
      <input
        aria-label="Go to"
        className="mono"
        placeholder={`Go to id or link… (${SHORTCUTS.palette})`}
        spellCheck={false}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setMessage(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") setMessage(null);
        }}
        readOnly={pending}
        aria-busy={pending}
      />
      {message && (
        <span className="goto-message small" role="alert" data-testid="goto-message">
          {message}
          <button type="button" className="link" aria-label="Dismiss" onClick={() => setMessage(null)}>×</button>
        </span>
      )}
    </form>
  );
}
