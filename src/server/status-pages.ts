// The status server's pages by path: `/` (every list), `list` (one list variant) and `run` (one
// run). Each answers its HTML, or undefined when the query names nothing that exists (404).
import type { SourceConfig } from '../config/types.ts';
import type { Queryable } from '../db/database.ts';
import { loadListPage, renderListPage, targetOf } from './list-page.ts';
import { loadRunPage, renderRunPage, runIdOf } from './run-page.ts';
import { loadStatusPage, renderStatusPage } from './status-page.ts';

export type StatusPage = (query: URLSearchParams) => Promise<string | undefined>;

/** `signedIn`: the pages are behind the dashboard's login (REFSYNC_DASHBOARD_PASSWORD is set). */
export function statusPages(db: Queryable, sources: readonly SourceConfig[], signedIn = false): Record<'/' | '/list' | '/run', StatusPage> {
  return {
    '/': async () => renderStatusPage(await loadStatusPage(db, sources), signedIn),
    '/list': async (query) => {
      const target = targetOf(query);
      const data = target && (await loadListPage(db, sources, target));
      return data ? renderListPage(data) : undefined;
    },
    '/run': async (query) => {
      const id = runIdOf(query);
      const data = id !== undefined ? await loadRunPage(db, sources, id) : undefined;
      return data ? renderRunPage(data) : undefined;
    },
  };
}
