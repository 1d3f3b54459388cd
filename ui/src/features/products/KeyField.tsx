import { useQuery } from "@tanstack/react-query";
import { api } from "../../platform";
import type { KeyChoice } from "./keyModel";

/** Generate a key or paste one; a pasted key is checked against the rule as it is typed. */
export function KeyField({
  choice,
  setChoice,
  pasted,
  setPasted,
}: {
  choice: KeyChoice;
  setChoice: (c: KeyChoice) => void;
  pasted: string;
  setPasted: (k: string) => void;
}) {
  const problems = useQuery({
    queryKey: ["keyProblems", pasted],
    queryFn: () => api.signingKeyProblems(pasted),
    enabled: choice === "paste" && pasted.length > 0,
    gcTime: 0,
  });
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
            {problems.data?.map((p) => <li key={p} className="field-error">{p}</li>)}
            {problems.data?.length === 0 && <li className="ok">The key meets the rule.</li>}
          </ul>
        </>
      )}
    </fieldset>
  );
}
