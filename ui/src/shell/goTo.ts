/**
 * "Go to": whatever was pasted (a transaction, event or product id, a `resourceRef` URL, a
 * capture's eventId) is resolved by the shell against the active connection, and the app opens
 * what it names — or says, in the shell's words, why nothing.
 */
import { api, toCommandError } from "../platform";
import { navigate } from "../lib/router";
import { goToStep } from "../features/support/supportModel";

/** Opens what `text` names; answers the words to show when it names nothing (or failed). */
export async function followGoTo(text: string): Promise<string | null> {
  const typed = text.trim();
  if (typed === "") return "Paste a transaction, event or product id, or a resource link.";
  try {
    const step = goToStep(await api.goTo(typed));
    if ("message" in step) return step.message;
    navigate(step.screen, step.id, step.eventId);
    return null;
  } catch (raw) {
    const failure = toCommandError(raw);
    return `${failure.message} ${failure.hint}`.trim();
  }
}
