/**
 * A secret on screen: a token, a client secret, a signing key, a signature, a credential header.
 * Stage mode shows the fixed mask instead (the value is not in the page at all, not even in a
 * title); the caller's copy button, if any, still copies the value.
 */
import { isSecretName, looksLikeId, STAGE_MASK } from "../lib/presentation";
import { useStageMode } from "../lib/useDisplay";
import { Id } from "./Id";

export function Secret({ value, testId }: { value: string; testId?: string }) {
  const stage = useStageMode();
  if (stage) return <span className="stage-mask" data-testid={testId} data-masked="true">{STAGE_MASK}</span>;
  return <span data-testid={testId}>{value}</span>;
}

/** A header's (or a record field's) value: masked in stage mode when its name says it is a secret. */
export function NamedValue({ name, value }: { name: string; value: string }) {
  return isSecretName(name) ? <Secret value={value} /> : <>{value}</>;
}

/**
 * A record field's value (record tables, introspection): a secret by its name is masked in stage
 * mode, and a value that reads as an id is shortened there, as `Id` does.
 */
export function FieldValue({ name, value }: { name: string; value: string }) {
  const stage = useStageMode();
  if (isSecretName(name)) return <Secret value={value} />;
  if (stage && looksLikeId(value)) return <Id value={value} />;
  return <>{value}</>;
}
