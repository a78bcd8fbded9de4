// `refsync check-auth [--json]`: for each configured source, logs in (or uses the API key) and calls
// GET /v2/auth/me/; prints who the credential belongs to and the scheme that was accepted, never
// the secret. Exit 0 when every source answered, 1 when any failed (one line each).
import { loadConfig } from '../../config/index.ts';
import { createUpstreamClient, UpstreamError } from '../../upstream/index.ts';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs } from '../args.ts';
import { jsonText, terminalText } from '../output/terminal.ts';

interface Outcome {
  environment: string;
  ok: boolean;
  userId?: unknown;
  email?: unknown;
  scheme?: string;
  error?: string;
  code?: string;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('check-auth', argv);
  const config = loadConfig();
  // A one-shot check reports its own result; the client's retry warnings would only repeat it.
  const logger = createLogger({ name: 'check-auth', level: process.env.LOG_LEVEL ?? 'error' });
  const outcomes: Outcome[] = [];
  for (const source of config.sources) {
    const client = createUpstreamClient(source, logger);
    try {
      const { user, scheme } = await client.me();
      outcomes.push({ environment: source.environment, ok: true, userId: user.id, email: user.email, scheme });
    } catch (err) {
      const outcome: Outcome = { environment: source.environment, ok: false, error: oneLine(err instanceof Error ? err.message : String(err)) };
      if (err instanceof UpstreamError) outcome.code = err.code;
      outcomes.push(outcome);
    } finally {
      await client.close();
    }
  }
  if (values.json) {
    process.stdout.write(`${jsonText(outcomes, undefined)}\n`);
  } else {
    for (const o of outcomes) {
      if (o.ok) process.stdout.write(`${o.environment}: ok — user ${terminalText(o.userId ?? '?')} ${terminalText(o.email)} via ${o.scheme}\n`);
      else process.stderr.write(`refsync: ${o.environment}: ${terminalText(o.error)}\n`);
    }
  }
  return outcomes.every((o) => o.ok) ? 0 : 1;
}
