# syntax=docker/dockerfile:1
# The image holds the npm package and nothing else: the first stage packs the checkout as npm
# publishes it (`npm pack`, whose prepack compiles src/ to dist/ and writes the lockfile into the
# package as npm-shrinkwrap.json); the second installs that tarball with scripts/install-package.sh,
# the script test/release/install.test.ts installs and runs the same tarball with. What CI tries is
# what ships.

FROM node:24-slim AS pack
WORKDIR /src
COPY . .
# All dependencies, dev ones too: the TypeScript compiler builds dist/. --ignore-scripts: the build
# needs no dependency's install script, so none gets to run one (prepack is npm pack's, and runs).
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm pack --pack-destination /pack \
 && mv /pack/refsync-*.tgz /pack/refsync.tgz

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
# The package unpacked into /app with the dependency versions of its shrinkwrap; no dev or optional
# dependencies (the image's node is the runtime, so the Node 24 binary package stays out, and so
# does PGlite, the embedded Postgres of `refsync demo`: the image always has a database server), no
# install scripts. Owned by root: nothing under /app is writable by the user the image runs as.
RUN --mount=type=bind,from=pack,source=/pack,target=/pack \
    --mount=type=bind,from=pack,source=/src/scripts/install-package.sh,target=/install-package.sh \
    sh /install-package.sh /pack/refsync.tgz /app && npm cache clean --force
WORKDIR /app
# Where `refsync sandbox --cert-dir` writes its CA in compose: a named volume mounted there takes
# this ownership, so the unprivileged user can write it.
RUN mkdir -p /tmp/sandbox-ca && chown node:node /tmp/sandbox-ca
# The image's own unprivileged user.
USER node
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.REFSYNC_HTTP_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM reaches node directly (exec form): the worker drains running jobs before it exits.
# The worker sets its own V8 heap flags from its memory budget (the container's limit) as it starts.
ENTRYPOINT ["node", "bin/refsync.js"]
CMD ["worker"]
