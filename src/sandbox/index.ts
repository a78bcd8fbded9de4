// The sandbox: a faithful HTTPS simulator of the upstream service, for tests, demos and benchmarks.
//
// Default accounts (fake, sandbox-only values):
//   machine@sandbox.test / sandbox-password   api_key null          (SANDBOX_MACHINE_ACCOUNT)
//   keyed@sandbox.test   / keyed-password     sandbox-api-key-0001  (SANDBOX_KEYED_ACCOUNT)
//
// Endpoints: POST /v2/auth/token/, GET /v2/auth/me/, every reference list at its path (see
// lists.ts), and the control API under /__sandbox/ (header X-Sandbox-Control: <secret>).
export { startSandbox } from './server.ts';
export { DEFAULT_ACCOUNTS, SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT } from './auth.ts';
export { CHARGE_CODE_VERSION_2024, CHARGE_CODE_VERSION_2025 } from './data/charge-codes.ts';
export { CARRIERS as SANDBOX_CARRIERS, listPath, sandboxLists } from './lists.ts';
export { CONTROL_PREFIX, controlMethodNames } from './control.ts';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './store.ts';
export { SandboxError } from './types.ts';
export { generateCertificates, type SandboxCertificates } from './certificates.ts';
export type {
  Entry,
  PagingOptions,
  PagingShape,
  RequestLogEntry,
  Sandbox,
  SandboxAccount,
  SandboxControl,
  SandboxFaults,
  SandboxOptions,
  SandboxStateView,
  TokenLifetime,
  VariantSelector,
} from './types.ts';
