// The status page's notice of a change feed held back past HELD_NOTICE_SECONDS: how long, which
// session holds it (pid, application, state, since) when Postgres says, and what ends it. Nothing
// when the feed flows or has been held only briefly (every sync's own apply holds it for seconds).
import { formatHeldFor, heldBy, heldLongEnough, type ChangeFeedHeld } from '../read/change-feed-held.ts';
import { html, type SafeHtml } from './html.ts';

export function feedHeldSection(held: ChangeFeedHeld | null): SafeHtml {
  if (!heldLongEnough(held)) return html``;
  const end =
    held.pid === null
      ? html`<p>It is a prepared transaction: settle it as its transaction manager would (<code>COMMIT PREPARED</code> or <code>ROLLBACK PREPARED</code>).</p>`
      : html`<p>Have its client commit or roll back, or end the session:</p>
<code class="command">select pg_terminate_backend(${held.pid});</code>`;
  return html`<section id="feed-held" class="attention">
<h2>Change feed held back for ${formatHeldFor(held.held_seconds)}</h2>
<p>Held by <strong>${heldBy(held)}</strong>. Downstream jobs reading <code>refdata.change_feed</code> get no newer change until that transaction ends: an open write transaction anywhere in the database cluster holds the feed back.</p>
${end}
<p>See docs/production.md, “A held change feed”; <code>select * from refdata.change_feed_held();</code> says who holds it now.</p>
</section>`;
}
