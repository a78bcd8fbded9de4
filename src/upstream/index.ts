export { UpstreamClient, type UpstreamClientOptions, type PagesRequest } from './client.ts';
export { listBatch, type ListBatch, type PageSource } from './list-batch.ts';
export { createUpstreamClient } from './factory.ts';
export type { ApiKeyScheme, AuthScheme, Credentials } from './auth.ts';
export {
  UpstreamError,
  AuthError,
  TlsError,
  HttpStatusError,
  ProtocolError,
  TimeoutError,
  SizeError,
  PagingError,
  NetworkError,
  OriginError,
  UpstreamConfigError,
  type UpstreamErrorCode,
} from './errors.ts';
