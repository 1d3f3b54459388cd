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

/** The form's values as the command wants them: blank text fields are left out. */
export function respondForm(
  transactionId: string,
  status: ResponseStatus,
  partnerStatus: string,
  referenceNumber: string,
): RespondForm {
  return {
    transactionId,
    status,
    partnerStatus: partnerStatus.trim() || null,
    referenceNumber: referenceNumber.trim() || null,
  };
}
