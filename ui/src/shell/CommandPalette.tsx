/**
 * The command palette (Ctrl+K, ⌘K on a Mac): one input that opens whatever id or link is typed ("Go to …",
 * first), a screen by name, starts a sync of the local index, or changes the display (stage
 * mode, theme). A modal dialog: focus stays in it, Escape closes it and gives focus back to
 * where it was.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { navigate } from "../lib/router";
import { moveSelection, paletteItems, requestSync, type PaletteItem } from "../features/support/supportModel";
import { followGoTo } from "./goTo";
import { changeDisplay } from "../lib/presentation";
import { isPaletteShortcut } from "../lib/shortcuts";
import { useDisplay } from "../lib/useDisplay";

/** Ctrl+K (⌘K on a Mac) anywhere opens it (`lib/shortcuts`). */
export function CommandPalette() {
  const [open, setOpen] = useState(false);
  const returnTo = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (isPaletteShortcut(e)) {
        e.preventDefault();
        if (!open) returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
        setOpen(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open]);
  if (!open) return null;
  const close = () => {
    setOpen(false);
    returnTo.current?.focus();
  };
  return <PaletteDialog onClose={close} />;
}

function PaletteDialog({ onClose }: { onClose: () => void }) {
  const [text, setText] = useState("");
  const [selected, setSelected] = useState(0);
  const [message, setMessage] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const titleId = useId();
  const listId = useId();
  const display = useDisplay();
  const items = paletteItems(text, display);
  const current = Math.min(selected, Math.max(0, items.length - 1));

  useEffect(() => {
    input.current?.focus();
  }, []);

  const run = (item: PaletteItem | undefined) => {
    if (!item || pending) return;
    if (item.kind === "screen") {
      navigate(item.screen);
      onClose();
    } else if (item.kind === "display") {
      changeDisplay(item.change);
      onClose();
    } else if (item.kind === "sync") {
      requestSync();
      navigate("support");
      onClose();
    } else {
      setPending(true);
      setMessage(null);
      void followGoTo(item.text).then((said) => {
        setPending(false);
        if (said === null) onClose();
        else setMessage(said);
      });
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onClose();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setSelected(moveSelection(current, items.length, e.key));
    } else if (e.key === "Enter") {
      e.preventDefault();
      run(items[current]);
    } else if (e.key === "Tab") {
      // The input is the dialog's one stop: focus does not leave the modal.
      e.preventDefault();
      input.current?.focus();
    }
  };

  return (
    <div className="palette-backdrop" onMouseDown={(e) => { if (e.target === e.currentTarget) onClose(); }}>
      <div className="palette" role="dialog" aria-modal="true" aria-labelledby={titleId} onKeyDown={onKeyDown}>
        <h2 id={titleId} className="palette-title">Go to or run</h2>
        <input
          ref={input}
          aria-label="Command"
          role="combobox"
          aria-expanded="true"
          aria-controls={listId}
          aria-activedescendant={items[current] ? `${listId}-${current}` : undefined}
          aria-autocomplete="list"
          className="mono"
          placeholder="An id, a link, or a screen's name"
          spellCheck={false}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setSelected(0);
            setMessage(null);
          }}
        />
        <ul id={listId} role="listbox" aria-label="Choices" className="palette-list">
          {items.map((item, i) => (
            <li
              key={`${item.kind}-${item.label}`}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              className={i === current ? "selected" : undefined}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => run(item)}
            >
              {item.label}
              {item.kind === "screen" && <span className="muted small"> screen</span>}
            </li>
          ))}
          {items.length === 0 && <li className="muted small">Nothing matches: type an id or link to go to it.</li>}
        </ul>
        {pending && <p className="small muted" role="status">Looking it up…</p>}
        {message && <p className="small bad" role="alert" data-testid="palette-message">{message}</p>}
        <p className="small muted palette-keys">↑↓ choose · Enter go · Esc close</p>
      </div>
    </div>
  );
}
