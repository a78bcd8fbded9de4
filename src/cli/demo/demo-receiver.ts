import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { generateCertificates } from '../../sandbox/index.ts';

export interface ReceivedWebhook {
  id: string;
  type: string;
  verified: boolean;
  body: { type?: string; data?: { list_key?: string; variant?: string; entries?: { code: string | null }[]; impact?: { code: string }[] } };
}

export interface DemoReceiver {
  url: string;
  secret: string;
  caPem: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * A local HTTPS endpoint that stands in for the user's webhook in the demo: it checks each
 * delivery's Standard Webhooks signature with the reference library, as a real receiver would.
 */
export async function startDemoReceiver(): Promise<DemoReceiver> {
  const certs = await generateCertificates(['127.0.0.1', 'localhost']);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const verifier = new Webhook(secret);
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let verified = true;
      try {
        verifier.verify(raw, headers);
      } catch {
        verified = false;
      }
      let body: ReceivedWebhook['body'] = {};
      try {
        body = JSON.parse(raw) as ReceivedWebhook['body'];
      } catch {
        verified = false;
      }
      received.push({ id: headers['webhook-id'] ?? '', type: body.type ?? '', verified, body });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks/refsync`,
    secret,
    caPem: certs.caPem,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
