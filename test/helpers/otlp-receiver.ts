// An OTLP/HTTP trace receiver in the test process (port 0): it keeps every export request as sent
// (content type, headers, raw body) and decodes the http/json ones into spans. Protobuf bodies are
// kept raw: their strings (span names, attribute values) appear in them as UTF-8 bytes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll } from 'vitest';

export interface ExportRequest {
  contentType: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type AttributeValue = string | number | boolean | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  url: string;
  requests: ExportRequest[];
  /** The spans of every http/json request so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

interface JsonAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

function attributes(list: JsonAttribute[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const a of list ?? []) {
    const v = a.value;
    out[a.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;
  }
  return out;
}

function decodeJson(body: Buffer): ReceivedSpan[] {
  const doc = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{ resource?: { attributes?: JsonAttribute[] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of doc.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: String(s.parentSpanId ?? ''),
          name: String(s.name),
          kind: Number(s.kind),
          attributes: attributes(s.attributes as JsonAttribute[]),
          resource,
        });
      }
    }
  }
  return spans;
}

const receivers: Server[] = [];
afterAll(async () => {
  await Promise.all(receivers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** Answers every POST to /v1/traces with 200 and an empty (JSON or protobuf) success body. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ExportRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = String(req.headers['content-type'] ?? '');
      if (req.method === 'POST' && req.url === '/v1/traces') requests.push({ contentType, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
      res.end(contentType.includes('json') ? '{}' : '');
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    spans: () => requests.filter((r) => r.contentType.includes('json')).flatMap((r) => decodeJson(r.body)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
