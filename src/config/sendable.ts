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

/** Settings sent only inside a JSON body, where a tab is ordinary: the password, top level or per source. */
export const bodyOnly = (name: string): boolean => /(^|\.)(REFSYNC_PASSWORD|password)(_FILE|File)?$/.test(name);

/**
 * Refuses a setting whose value holds a control character, naming the setting (`name`, which
 * says the source and whether the value came from a file) and never the value, which may be secret.
 */
export function refuseControlCharacters(name: string, value: unknown): void {
  const refused = bodyOnly(name) ? controlCharacterButTab : controlCharacter;
  if (typeof value === 'string' && refused.test(value)) {
    throw new ConfigError(`${name}: holds a control character (CR, LF, NUL or the like), which cannot be sent; remove it`);
  }
}
