import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../platform";
import { canSubmitKey, keyToSend, type KeyChoice } from "./keyModel";

/** The signing-key part of a form (rotate, add a subscription): its state and what follows. */
export interface KeyChoiceState {
  choice: KeyChoice;
  setChoice: (c: KeyChoice) => void;
  pasted: string;
  setPasted: (k: string) => void;
  /** What the rule (partner-api's, through the shell) says of the pasted key, once asked. */
  problems: string[] | undefined;
  /** The key the command gets: null asks the shell to generate one. */
  keyToSend: string | null;
  canSubmit: boolean;
  /** Forgets the pasted key (after it was sent). */
  clear: () => void;
}

/** Generate a key or paste one; a pasted key is checked against the rule as it is typed. */
export function useKeyChoice(): KeyChoiceState {
  const [choice, setChoice] = useState<KeyChoice>("generate");
  const [pasted, setPasted] = useState("");
  const problems = useQuery({
    queryKey: ["keyProblems", pasted],
    queryFn: () => api.signingKeyProblems(pasted),
    enabled: choice === "paste" && pasted.length > 0,
    // A key is a secret: its answer is not kept in the cache once the form is gone.
    gcTime: 0,
  });
  return {
    choice,
    setChoice,
    pasted,
    setPasted,
    problems: problems.data,
    keyToSend: keyToSend(choice, pasted),
    canSubmit: canSubmitKey(choice, pasted, problems.data),
    clear: () => setPasted(""),
  };
}

/** The field of a `useKeyChoice` state. */
export function KeyField({ keyChoice }: { keyChoice: KeyChoiceState }) {
  const { choice, setChoice, pasted, setPasted, problems } = keyChoice;
  return (
    <fieldset className="key-field">
      <legend>Signing key</legend>
      <label className="inline">
        <input type="radio" name="key-choice" checked={choice === "generate"} onChange={() => setChoice("generate")} />
        Generate a compliant key
      </label>
      <label className="inline">
        <input type="radio" name="key-choice" checked={choice === "paste"} onChange={() => setChoice("paste")} />
        Paste my own
      </label>
      {choice === "paste" && (
        <>
          <input
            aria-label="Signing key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={pasted}
            onChange={(e) => setPasted(e.target.value)}
            placeholder="32–64 chars: upper, lower, digit, one of !@#$^&*"
          />
          <ul className="key-problems" aria-live="polite" data-testid="key-problems">
            {pasted.length === 0 && <li className="muted">Type or paste a key.</li>}
            {problems?.map((p) => <li key={p} className="field-error">{p}</li>)}
            {problems?.length === 0 && <li className="ok">The key meets the rule.</li>}
          </ul>
        </>
      )}
    </fieldset>
  );
}
