// A collector that is down answers every export with a failure: one warning when exports start
// failing and one line when they work again, instead of one per batch (or per span).
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { errorLine } from '../util/error-line.ts';
import type { Logger } from '../util/logger.ts';

export class WarnOnceExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #logger: Logger;
  readonly #collector: string;
  #failing = false;

  constructor(inner: SpanExporter, logger: Logger, collector: string) {
    this.#inner = inner;
    this.#logger = logger;
    this.#collector = collector;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.#failing) this.#logger.info({ collector: this.#collector }, 'traces are exported again');
        this.#failing = false;
      } else if (!this.#failing) {
        this.#failing = true;
        this.#logger.warn(
          { collector: this.#collector, err: errorLine(result.error ?? 'export failed') },
          'cannot export traces: spans are dropped until the collector answers (syncs go on unaffected)',
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
