// The sandbox as a child process of a benchmark: prints one JSON line (url, CA, control secret)
// once it listens, then serves until SIGTERM. Driven through its HTTP control API.
import { startSandbox } from '../src/sandbox/index.ts';

const latencyMs = Number(process.argv[2] ?? 0);
const sandbox = await startSandbox({ latencyMs });
process.stdout.write(`${JSON.stringify({ url: sandbox.url, caFile: sandbox.caFile, caPem: sandbox.caPem, controlSecret: sandbox.controlSecret })}\n`);
const stop = () => {
  sandbox.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
