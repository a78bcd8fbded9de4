import { z } from 'zod';
import { isListKey, mustBeListKey } from '../catalog/list-keys.ts';

/** A list key in a setting or a config file: refused with the nearest key when it looks like a slip, then every key. */
export const listKeySchema = z.string().refine(isListKey, { error: (issue) => mustBeListKey(issue.input) });
