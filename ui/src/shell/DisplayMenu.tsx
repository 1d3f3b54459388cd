/**
 * "Display" in the top bar: the theme (System, Light, Dark, High contrast) and stage mode, and
 * stage mode's shortcut (Ctrl+Shift+M) anywhere; and "About and updates…" (`Updates.tsx`). A menu button: Enter, Space or ArrowDown opens
 * it on the checked theme; arrows, Home and End move; Enter or Space picks; Escape (or Tab, or
 * a click outside) closes it and gives focus back to the button.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { changeDisplay, isStageShortcut, STAGE_SHORTCUT_LABEL, THEMES, toggleStage } from "../lib/presentation";
import { useDisplay } from "../lib/useDisplay";
import { openUpdates } from "./updateModel";

export function DisplayMenu() {
  const display = useDisplay();
  const [open, setOpen] = useState(false);
  const [position, setPosition] = useState<{ top: number; right: number }>({ top: 44, right: 8 });
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const menuId = useId();

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (isStageShortcut(e)) {
        e.preventDefault();
        toggleStage();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // Focus goes into the menu on its checked theme; a click outside it closes it.
  useEffect(() => {
    if (!open) return;
    const items = menuItems(menu.current);
    (items.find((item) => item.getAttribute("aria-checked") === "true" && item.getAttribute("role") === "menuitemradio") ?? items[0])?.focus();
    const onPointer = (e: MouseEvent) => {
      const target = e.target as Node | null;
      if (target && !menu.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("mousedown", onPointer);
    return () => document.removeEventListener("mousedown", onPointer);
  }, [open]);

  const openMenu = () => {
    // Fixed under the button: the top bar clips what overflows it.
    const rect = button.current?.getBoundingClientRect();
    if (rect) setPosition({ top: rect.bottom + 4, right: Math.max(4, window.innerWidth - rect.right) });
    setOpen(true);
  };
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };

  const onButtonKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      openMenu();
    }
  };

  const onMenuKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const items = menuItems(menu.current);
    const at = items.findIndex((item) => item === document.activeElement);
    const focusAt = (index: number) => items[(index + items.length) % items.length]?.focus();
    switch (e.key) {
      case "Escape":
        e.preventDefault();
        close();
        break;
      case "Tab":
        // Tab leaves the menu as it leaves any popup: closed, focus back on its button.
        e.preventDefault();
        close();
        break;
      case "ArrowDown":
        e.preventDefault();
        focusAt(at + 1);
        break;
      case "ArrowUp":
        e.preventDefault();
        focusAt(at < 0 ? -1 : at - 1);
        break;
      case "Home":
        e.preventDefault();
        focusAt(0);
        break;
      case "End":
        e.preventDefault();
        focusAt(-1);
        break;
    }
  };

  return (
    <>
      <button
        ref={button}
        type="button"
        className={`display-button small${display.stage ? " stage-on" : ""}`}
        data-testid="display-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        title={`Theme and stage mode (${STAGE_SHORTCUT_LABEL}: stage mode)`}
        onClick={() => (open ? close() : openMenu())}
        onKeyDown={onButtonKey}
      >
        Display{display.stage ? " · stage" : ""} ▾
      </button>
      {open && (
        <div ref={menu} id={menuId} className="display-menu" role="menu" aria-label="Display" data-testid="display-menu" style={{ top: position.top, right: position.right }} onKeyDown={onMenuKey}>
          <div className="menu-group" aria-hidden="true">Theme</div>
          {THEMES.map((theme) => (
            <button
              key={theme.value}
              type="button"
              role="menuitemradio"
              aria-checked={display.theme === theme.value}
              tabIndex={-1}
              data-theme-choice={theme.value}
              onClick={() => {
                changeDisplay({ theme: theme.value });
                close();
              }}
            >
              <span className="check" aria-hidden="true">{display.theme === theme.value ? "●" : ""}</span>
              {theme.label}
              {theme.value === "system" && <span className="muted small menu-hint">follows the desktop</span>}
            </button>
          ))}
          <div role="separator" />
          <button
            type="button"
            role="menuitemcheckbox"
            aria-checked={display.stage}
            tabIndex={-1}
            data-testid="stage-toggle"
            onClick={() => {
              toggleStage();
              close();
            }}
          >
            <span className="check" aria-hidden="true">{display.stage ? "✓" : ""}</span>
            Stage mode
            <kbd className="muted menu-hint">{STAGE_SHORTCUT_LABEL}</kbd>
          </button>
          <div role="separator" />
          <button
            type="button"
            role="menuitem"
            tabIndex={-1}
            data-testid="open-updates"
            onClick={() => {
              close();
              openUpdates();
            }}
          >
            <span className="check" aria-hidden="true" />
            About and updates…
          </button>
        </div>
      )}
    </>
  );
}

function menuItems(menu: HTMLElement | null): HTMLElement[] {
  return menu ? Array.from(menu.querySelectorAll<HTMLElement>("[role^='menuitem']")) : [];
}
