// What lists stopped by one cause have in common. An upstream failure's message starts with the
// request it concerns (`GET /v2/shipments/hazmat/ page 1: cannot connect to api:443 (ECONNREFUSED)`),
// so when a worker's host goes away with a token in hand, each list's message differs by its path
// alone, and grouping by message kept one reason per list. For a failure of the host (its error
// code network, timeout or tls) the cause is the message without the request; for any other (a
// 500, a broken answer), the endpoint may be the cause, and the message is.

const REQUEST = /^(?:GET|POST) \/\S*?(?: page \d+)?: /;

/** The error codes of failures that are the host's or the connection's, whichever list met them. */
const HOST_CODES = new Set(['network', 'timeout', 'tls']);

/** The message without the request it concerns, when it starts with one. */
export function withoutRequest(message: string): string {
  return message.replace(REQUEST, '');
}

/** What failures of one cause share: for a failure of the host its message without the request, else the message. */
export function causeOf(message: string, code: string | null | undefined): string {
  return code && HOST_CODES.has(code) ? withoutRequest(message) : message;
}

/** What a group of failures of one cause says: their message when they all have the same, else their cause. */
export function sharedMessage(messages: readonly string[]): string {
  const first = messages[0] ?? '';
  return messages.every((m) => m === first) ? first : withoutRequest(first);
}
