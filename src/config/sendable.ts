import { ConfigError } from './errors.ts';

/**
 * C0 controls (CR, LF, NUL, tab, ESC, ...) and DEL. A credential or URL holding one cannot be sent:
 * undici refuses such a header value, a JSON body carries it where the server does not expect it,
 * and the URL parser silently drops tabs and newlines, so the request would go somewhere else.
 * Refused at start, where a retry or a quiet exit 0 would otherwise follow.
 */
const controlCharacter = /[\u0000-\u001f\u007f]/;
/**
 * The same without TAB, for a password: it only ever travels inside the login's JSON body, where a
 * tab is escaped like any character, and people do put tabs in pass phrases. Line breaks and the
 * other controls stay refused.
 */
const controlCharacterButTab = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export interface Sendable {
  /** The value travels only inside a JSON body, where a tab is ordinary (the login's password). */
  allowTab?: boolean;
}

/** How the password is sent: in the login's JSON body only. */
export const inLoginBody: Sendable = { allowTab: true };

/**
 * Refuses a setting whose value holds a control character, naming the setting (`name`, which
 * says the source and whether the value came from a file) and never the value, which may be secret.
 */
export function refuseControlCharacters(name: string, value: unknown, sendable: Sendable = {}): void {
  const refused = sendable.allowTab ? controlCharacterButTab : controlCharacter;
  if (typeof value === 'string' && refused.test(value)) {
    throw new ConfigError(`${name}: holds a control character (CR, LF, NUL or the like), which cannot be sent; remove it`);
  }
}
