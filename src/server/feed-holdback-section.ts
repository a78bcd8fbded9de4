// The status page's notice of a change feed held back past HOLDBACK_NOTICE_SECONDS: how long, and, to a
// signed-in reader only (the page behind the dashboard's login), which session holds it (pid,
// application, state, since) and what ends it: the page must not show an anonymous visitor what
// pg_stat_activity hides from most roles. Nothing when the feed flows or has been held only briefly
// (every sync's own apply holds it for seconds).
import { formatHoldbackFor, holdbackOwner, holdbackWorthNoting, type FeedHoldback } from '../read/change-feed-holdback.ts';
import { html, type SafeHtml } from './html.ts';

/** `showHolder`: the page is behind the dashboard's login (REFSYNC_DASHBOARD_PASSWORD). */
export function feedHoldbackSection(held: FeedHoldback | null, showHolder = true): SafeHtml {
  if (!holdbackWorthNoting(held)) return html``;
  const heading = html`<h2>Change feed held back for ${formatHoldbackFor(held.held_seconds)}</h2>`;
  const why = html`Downstream jobs reading <code>refdata.change_feed</code> get no newer change until that transaction ends: an open write transaction anywhere in the database cluster holds the feed back.`;
  if (!showHolder) {
    return html`<section id="feed-held" class="attention">
${heading}
<p>${why}</p>
<p>Which session holds it is shown here once the page is behind the dashboard's login (<code>REFSYNC_DASHBOARD_PASSWORD</code>), and to refsync's own role: <code>select * from refdata.change_feed_held();</code>. See docs/production.md, “A held change feed”.</p>
</section>`;
  }
  const end =
    held.pid === null
      ? html`<p>It is a prepared transaction: settle it as its transaction manager would (<code>COMMIT PREPARED</code> or <code>ROLLBACK PREPARED</code>).</p>`
      : html`<p>Have its client commit or roll back, or end the session:</p>
<code class="command">select pg_terminate_backend(${held.pid});</code>`;
  return html`<section id="feed-held" class="attention">
${heading}
<p>Held by <strong>${holdbackOwner(held)}</strong>. ${why}</p>
${end}
<p>See docs/production.md, “A held change feed”; <code>select * from refdata.change_feed_held();</code> says who holds it now.</p>
</section>`;
}
