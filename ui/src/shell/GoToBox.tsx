/** The top bar's "Go to" box: paste an id or a link, Enter opens it. */
import { useState, type FormEvent } from "react";
import { followGoTo } from "./goTo";

export function GoToBox() {
  const [text, setText] = useState("");
  const [message, setMessage] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setPending(true);
    setMessage(null);
    void followGoTo(text).then((said) => {
      setPending(false);
      setMessage(said);
      if (said === null) setText("");
    });
  };
  return (
    <form className="goto-box" role="search" aria-label="Go to" onSubmit={onSubmit}>
      <input
        aria-label="Go to"
        className="mono"
        placeholder="Go to id or link… (Ctrl+K)"
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
