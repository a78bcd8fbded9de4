import type { z } from 'zod';

const quantity = (origin: string, n: unknown) =>
  origin === 'string' ? `${n} character${n === 1 ? '' : 's'}` : origin === 'array' || origin === 'set' ? `${n} item${n === 1 ? '' : 's'}` : String(n);

/**
 * A zod issue as a sentence a user reads after the setting's name. zod's default texts
 * ("Too big: expected number to be <=1") speak of types, not settings; messages the schema
 * wrote itself are kept as they are.
 */
export function issueSentence(issue: z.core.$ZodIssue): string {
  if (!/^(Too big|Too small|Invalid)/.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${quantity(issue.origin, issue.maximum)}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      if (issue.origin === 'array' && Number(issue.minimum) === 1) return 'must name at least one';
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${quantity(issue.origin, issue.minimum)}`;
    case 'invalid_type':
      return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'invalid_value':
      return `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    default:
      return 'is not a valid value';
  }
}
