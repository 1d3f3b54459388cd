import type { RespondForm, ResponseStatus, Transaction } from "../../platform";

export const RESPONSE_STATUSES: ResponseStatus[] = ["processing", "completed", "failed", "canceled", "inputRequired"];
const FINAL: ResponseStatus[] = ["completed", "failed", "canceled"];

export function isFinal(status: ResponseStatus): boolean {
  return FINAL.includes(status);
}

/** A final response locks request and response: the form then only shows what was sent. */
export function isLocked(transaction: Transaction): boolean {
  const status = transaction.response?.status;
  return status != null && RESPONSE_STATUSES.includes(status as ResponseStatus) && isFinal(status as ResponseStatus);
}

/** A response status the console does not know (the spec shows none; another service may send
 * its own): kept as sent, and read cautiously, since it may be final and lock the transaction. */
export function unknownResponseStatus(transaction: Transaction): string | null {
  const status = transaction.response?.status;
  return status != null && !RESPONSE_STATUSES.includes(status as ResponseStatus) ? status : null;
}

/** The response's fields besides the three the form has inputs for, written as JSON. */
export const MORE_FIELDS = ["respondingParty", "loan", "resources", "errors"] as const;

/** The response's other fields as they stand on the transaction, as the editor starts them. */
export function moreFieldsText(transaction: Transaction): string {
  const response = (transaction.response ?? {}) as Record<string, unknown>;
  const more = Object.fromEntries(MORE_FIELDS.filter((f) => response[f] != null).map((f) => [f, response[f]]));
  return Object.keys(more).length ? JSON.stringify(more, null, 2) : "";
}

/** The response as the command wants it (JSON text; blank text fields left out), or what is
 * wrong with the editor's JSON, said before anything is sent. The shell checks the whole
 * response again (`TransactionResponse::from_json`): a field responses do not have is refused
 * there, never dropped. */
export function responseText(
  status: ResponseStatus,
  partnerStatus: string,
  referenceNumber: string,
  moreText: string,
): { text: string } | { error: string } {
  let more: Record<string, unknown> = {};
  if (moreText.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(moreText);
    } catch (e) {
      return { error: `The other fields are not JSON: ${(e as Error).message}` };
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return { error: `The other fields are a JSON object, such as {"loan": {"appraisedValue": 410000}}.` };
    }
    more = parsed as Record<string, unknown>;
    const twice = ["status", "partnerStatus", "referenceNumber"].filter((f) => f in more);
    if (twice.length) return { error: `Set ${twice.join(", ")} in the fields above, not in the JSON.` };
  }
  const response: Record<string, unknown> = { status, ...more };
  if (partnerStatus.trim()) response.partnerStatus = partnerStatus.trim();
  if (referenceNumber.trim()) response.referenceNumber = referenceNumber.trim();
  return { text: JSON.stringify(response) };
}

/** The command's form; `confirm` names the transaction again once the user agreed to a final
 * status. */
export function respondForm(transactionId: string, response: string, confirm: string | null): RespondForm {
  return { transactionId, response, confirm };
}
