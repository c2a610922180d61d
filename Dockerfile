# pgvigil: multi-stage build. The build stage compiles TypeScript and the better-sqlite3 addon;
# the runtime stage carries only production dependencies and runs as the unprivileged `node` user.
#   docker build -t pgvigil .
#   docker run -v /var/log/postgresql:/pglog:ro -v pgvigil-data:/var/lib/pgvigil \
#     -e PGVIGIL_DSN=postgres://pgvigil@db:5432/postgres -e PGVIGIL_LOG=/pglog -p 9899:9899 pgvigil
# Add --read-only for a read-only root: pgvigil writes only in the store's directory (the
# volume at /var/lib/pgvigil); no tmpfs is needed (test/integration/read-only-root.test.ts).
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
# npm ci runs the prepare script (tsc), then dev dependencies are dropped, and the optional
# embedded PostgreSQL too (about 60 MB: it serves only `npm start`'s demo, never a sidecar).
RUN npm ci && npm prune --omit=dev --omit=optional

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PGVIGIL_LISTEN=0.0.0.0:9899 \
    PGVIGIL_DB=/var/lib/pgvigil/pgvigil.db
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY bin ./bin
# The translation catalogs: logs written with lc_messages other than English are read through them.
COPY catalogs ./catalogs
COPY config ./config
COPY dashboards ./dashboards
# The timeline page at / (its uPlot comes from node_modules).
COPY web ./web
RUN mkdir -p /var/lib/pgvigil && chown node:node /var/lib/pgvigil
USER node
VOLUME ["/var/lib/pgvigil"]
EXPOSE 9899
# Config by a mounted file (-v ./pgvigil.yaml:/etc/pgvigil.yaml -e PGVIGIL_CONFIG=/etc/pgvigil.yaml)
# and PGVIGIL_* / PG* environment variables.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9899/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/pgvigil.js"]
CMD ["run"]
