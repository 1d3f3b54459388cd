/** State of the signing-key field: the rule itself is `partner-api`'s, asked on every keystroke. */
export type KeyChoice = "generate" | "paste";

export function keyToSend(choice: KeyChoice, pasted: string): string | null {
  return choice === "generate" ? null : pasted;
}

/** Whether the form may be sent: generating always may; a pasted key only with no problems. */
export function canSubmitKey(choice: KeyChoice, pasted: string, problems: string[] | undefined): boolean {
  if (choice === "generate") return true;
  return pasted.length > 0 && problems !== undefined && problems.length === 0;
}
