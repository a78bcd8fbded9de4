// `refsync webhook-secret`: prints a fresh secret for REFSYNC_WEBHOOK_SECRET, in the one form the
// setting takes, so nobody has to work out the format from a refusal. Reads no settings.
import { newWebhookSecret } from '../../alerts/sign.ts';
import { parseCommandArgs } from '../args.ts';

export async function run(argv: string[]): Promise<number> {
  parseCommandArgs('webhook-secret', argv);
  process.stdout.write(`${newWebhookSecret()}\n`);
  return 0;
}
