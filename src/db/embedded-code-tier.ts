import { setFlagsFromString } from 'node:v8';

/**
 * V8 recompiles a hot WebAssembly function with TurboFan only when its index matches this filter
 * (when the filter is set at all). No module has a function at index 2^31 - 1, so none is.
 */
const NO_WASM_FUNCTION = 2 ** 31 - 1;

/**
 * Keeps the WebAssembly code of this process (embedded PGlite's Postgres) at V8's baseline tier.
 *
 * A few queries make Postgres's parser (one ~100 KB WebAssembly function) hot, and V8 then
 * recompiles it with TurboFan on a background thread: about 2 s of CPU here. A process cannot exit
 * while that compile runs, so `refsync status` on PGlite printed its table in about a second and
 * returned to the prompt two seconds later. Measured (docs/performance.md): status 3.4 s → 1.6 s,
 * migrate 3.2 s → 1.4 s, the demo 7.8 s → 6.5 s; a first load of 300,000 entries is 10-15% slower
 * at the baseline tier, which the embedded database (for trying refsync, never the worker) accepts.
 *
 * Only a process that loads PGlite calls this: on a Postgres server, undici's WebAssembly HTTP
 * parser keeps V8's default. The filter is honoured when set at run time, before PGlite's module
 * is compiled; a raised --wasm-tiering-budget still let `refsync migrate` tier the parser up, and
 * --liftoff-only is read only as V8 starts.
 */
export function keepWasmAtBaselineTier(): void {
  setFlagsFromString(`--wasm-tier-up-filter=${NO_WASM_FUNCTION}`);
}
